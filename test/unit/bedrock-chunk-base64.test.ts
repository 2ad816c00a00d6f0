// A chunk event's base64 is decoded by the gateway from the frame's bytes when Bedrock
// writes it plainly (standard alphabet, padded), and by node's decoder otherwise. Both must
// give the event node's decoder gives, for every length (each padding) and every writing.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { FrameDecoder } from "../../src/providers/bedrock/eventstream.js";

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** A chunk frame whose payload JSON is `payload` as written. */
function frame(payload: string): Buffer {
  return Buffer.from(codec.encode({
    headers: { ":event-type": { type: "string", value: "chunk" }, ":message-type": { type: "string", value: "event" } },
    body: fromUtf8(payload),
  }));
}

const sseOf = (payload: string) => String(new FrameDecoder().push(frame(payload)));
const expected = (event: object) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`;

describe("bedrock chunk base64", () => {
  it("gives node's decoding for every length of event: no padding, one and two pad characters", () => {
    for (let n = 0; n < 48; n++) {
      // Every byte value through the text, so every base64 digit appears.
      const text = Array.from({ length: n }, (_, i) => String.fromCharCode(0x20 + ((i * 37) % 0x5f))).join("") + "é€🦊".slice(0, n % 4);
      const event = { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } };
      const base64 = Buffer.from(JSON.stringify(event)).toString("base64");
      assert.equal(sseOf(JSON.stringify({ bytes: base64, p: "abc" })), expected(event), `length ${n}`);
    }
  });

  it("reads other writings of the field as node's decoder does: escaped slashes, no padding, the URL alphabet, the key not first", () => {
    const event = { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "??>>??~~" } };
    const base64 = Buffer.from(JSON.stringify(event)).toString("base64");
    assert.ok(base64.includes("/") || base64.includes("+"), "the text holds the digits the URL alphabet writes otherwise");
    const writings = {
      escaped: `{"bytes":"${base64.replace(/\//g, "\\/")}"}`,
      unpadded: JSON.stringify({ bytes: base64.replace(/=+$/, "") }),
      url: JSON.stringify({ bytes: base64.replace(/\+/g, "-").replace(/\//g, "_") }),
      keyLast: JSON.stringify({ p: "abcdef", bytes: base64 }),
    };
    for (const [name, payload] of Object.entries(writings)) assert.equal(sseOf(payload), expected(event), name);
  });

  it("a field that is not base64 at all is no event: the frame is corrupt", () => {
    assert.throws(() => sseOf(JSON.stringify({ bytes: "!!!!" })), /not JSON|not an Anthropic stream event/);
  });
});
