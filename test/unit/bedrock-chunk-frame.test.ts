// The in-place reading of InvokeModel's chunk frames (chunk-frame.ts) held to the AWS SDK's
// event-stream codec: on frames the codec encodes (chunks, exceptions, other events, every
// header type around them) it must say "chunk" with the codec's body exactly when the codec
// reads an event of type chunk, and on frames with any byte changed it must never read a
// chunk the codec refuses.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import zlib from "node:zlib";
import { EventStreamCodec, Int64, type Message, type MessageHeaders } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { chunkPayloadAt, NOT_A_CHUNK } from "../../src/providers/bedrock/chunk-frame.js";
import { CorruptFrame } from "../../src/providers/bedrock/corrupt-frame.js";

type Reading = { kind: "chunk"; payload: Buffer } | { kind: "other" } | { kind: "corrupt" };

/** What chunkPayloadAt says of the frame: a chunk (its payload), another frame, or corrupt. */
function chunkFrame(bytes: Buffer, length: number): Reading {
  try {
    const at = chunkPayloadAt(bytes, length);
    return at === NOT_A_CHUNK ? { kind: "other" } : { kind: "chunk", payload: bytes.subarray(at, length - 4) };
  } catch (err) {
    assert.ok(err instanceof CorruptFrame, String(err));
    return { kind: "corrupt" };
  }
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function chunkPayload(event: object): Uint8Array {
  const bytes = Buffer.from(JSON.stringify(event)).toString("base64");
  return fromUtf8(JSON.stringify({ bytes, p: "abcdefghijklmnopqrstuvwxyz" }));
}

const extraHeaders: MessageHeaders = {
  ":flag-true": { type: "boolean", value: true },
  ":flag-false": { type: "boolean", value: false },
  ":byte": { type: "byte", value: -3 },
  ":short": { type: "short", value: 1234 },
  ":int": { type: "integer", value: 123456 },
  ":long": { type: "long", value: Int64.fromNumber(2 ** 40) },
  ":binary": { type: "binary", value: new Uint8Array([1, 2, 3, 0x0a]) },
  ":time": { type: "timestamp", value: new Date(1_700_000_000_000) },
  ":uuid": { type: "uuid", value: "12345678-90ab-cdef-1234-567890abcdef" },
  ":other": { type: "string", value: "chunk" },
};

function frames(): { name: string; message: Message }[] {
  const event = { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Foxes\nare" } };
  const chunk = (headers: MessageHeaders): Message => ({ headers, body: chunkPayload(event) });
  const str = (value: string) => ({ type: "string" as const, value });
  return [
    { name: "a chunk", message: chunk({ ":event-type": str("chunk"), ":content-type": str("application/json"), ":message-type": str("event") }) },
    { name: "a chunk, headers in another order", message: chunk({ ":message-type": str("event"), ":event-type": str("chunk") }) },
    { name: "a chunk among headers of every type", message: chunk({ ...extraHeaders, ":event-type": str("chunk"), ":message-type": str("event") }) },
    { name: "a chunk with an empty body", message: { headers: { ":event-type": str("chunk"), ":message-type": str("event") }, body: new Uint8Array(0) } },
    { name: "an exception", message: { headers: { ":exception-type": str("throttlingException"), ":content-type": str("application/json"), ":message-type": str("exception") }, body: fromUtf8('{"message":"slow down"}') } },
    { name: "an error", message: { headers: { ":error-code": str("InternalFailure"), ":error-message": str("boom"), ":message-type": str("error") }, body: new Uint8Array(0) } },
    { name: "another event", message: chunk({ ":event-type": str("metadata"), ":message-type": str("event") }) },
    { name: "a chunk named as binary", message: chunk({ ":event-type": { type: "binary", value: fromUtf8("chunk") }, ":message-type": str("event") }) },
    { name: "an event type longer than chunk", message: chunk({ ":event-type": str("chunks"), ":message-type": str("event") }) },
    { name: "no headers", message: { headers: {}, body: chunkPayload(event) } },
  ];
}

/** What the codec reads of a frame: the chunk's body, "other", or "refused". */
function codecReading(bytes: Buffer): Buffer | "other" | "refused" {
  let message: Message;
  try {
    message = codec.decode(bytes);
  } catch {
    return "refused";
  }
  const header = (name: string) => (message.headers[name]?.type === "string" ? message.headers[name].value : undefined);
  if (header(":message-type") !== "event" || header(":event-type") !== "chunk") return "other";
  return Buffer.from(message.body);
}

describe("bedrock chunk frames read in place", () => {
  it("reads a chunk exactly when the AWS SDK's codec does, with the same body", () => {
    for (const { name, message } of frames()) {
      const bytes = Buffer.from(codec.encode(message));
      const read = chunkFrame(bytes, bytes.length);
      const expected = codecReading(bytes);
      assert.notEqual(expected, "refused", name);
      if (expected === "other") assert.equal(read.kind, "other", name);
      else {
        assert.equal(read.kind, "chunk", name);
        assert.deepEqual(read.kind === "chunk" && read.payload, expected, name);
      }
    }
  });

  it("reads only the frame at the start: bytes after it are the next frame's", () => {
    const [first, second] = frames().map(({ message }) => Buffer.from(codec.encode(message)));
    const both = Buffer.concat([first, second]);
    const read = chunkFrame(both, first.length);
    assert.equal(read.kind, "chunk");
    assert.deepEqual(read.kind === "chunk" && read.payload, codecReading(first));
  });

  it("never reads a chunk from a frame with a byte changed that the codec refuses", () => {
    let corrupt = 0;
    for (const { name, message } of frames()) {
      const whole = Buffer.from(codec.encode(message));
      for (let at = 0; at < whole.length; at++) {
        const bytes = Buffer.from(whole);
        bytes[at] ^= 1 + (randomBytes(1)[0] % 255);
        // The caller hands over whole frames of a bounded length: as FrameDecoder does.
        const length = bytes.readUInt32BE(0);
        if (length !== whole.length) continue;
        const read = chunkFrame(bytes, length);
        const expected = codecReading(bytes);
        if (read.kind === "corrupt") corrupt++;
        if (expected === "refused") assert.notEqual(read.kind, "chunk", `${name}, byte ${at} changed`);
        else if (read.kind !== "corrupt") assert.equal(read.kind, expected === "other" ? "other" : "chunk", `${name}, byte ${at} changed`);
      }
    }
    assert.ok(corrupt > 100, `checksums caught ${corrupt} changed frames`);
  });

  it("refuses a prelude whose own checksum is wrong though the message checksum matches it", () => {
    const crc32 = (zlib as unknown as { crc32: (data: Uint8Array) => number }).crc32;
    for (const { name, message } of frames()) {
      const bytes = Buffer.from(codec.encode(message));
      bytes.writeUInt32BE((bytes.readUInt32BE(8) ^ 0x10) >>> 0, 8);
      bytes.writeUInt32BE(crc32(bytes.subarray(0, bytes.length - 4)) >>> 0, bytes.length - 4);
      assert.equal(codecReading(bytes), "refused", name);
      assert.equal(chunkFrame(bytes, bytes.length).kind, "corrupt", name);
    }
  });
});
