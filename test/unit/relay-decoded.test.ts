// The relay reading a body the channel's kind decodes (providers/framing.ts): Bedrock's
// event-stream frames, read at their source through the kind's decoder, with no second
// stream between. What the client gets and how the read ends must be what the decoded
// Readable would have given: the whole frames before a broken one, then a cut.

import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { sseOfEventStream } from "../../src/providers/bedrock/eventstream.js";
import { relay, type Relayed } from "../../src/upstream/relay.js";
import { chunkFrame } from "../helpers/fake-bedrock.js";

const frames = [
  chunkFrame({ type: "message_start", message: { id: "m", usage: { input_tokens: 3, output_tokens: 1 } } }),
  chunkFrame({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } }),
  chunkFrame({ type: "message_stop" }),
];
const whole = Buffer.concat(frames);
const sse = [
  `event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":3,"output_tokens":1}}}\n\n`,
  `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n`,
  `event: message_stop\ndata: {"type":"message_stop"}\n\n`,
];

interface Run {
  readonly relayed: Relayed;
  /** What the client read. */
  readonly text: string;
  readonly source: PassThrough;
  /** The chunks the relay's transform saw. */
  readonly seen: string[];
}

/** Relays a decoded body fed by `feed` (which writes to the source) to a client over HTTP. */
async function run(feed: (source: PassThrough) => void): Promise<Run> {
  const source = new PassThrough();
  const seen: string[] = [];
  let relayed!: Promise<Relayed>;
  const server = http.createServer((_req, res) => {
    const body = sseOfEventStream(source);
    relayed = relay({ res, body, head: { status: 200, headers: { "content-type": "text/event-stream" }, flush: true }, transform: (c) => (seen.push(String(c)), c) });
    void relayed.then(() => res.end());
    feed(source);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const text = await new Promise<string>((resolve, reject) => {
      http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (res) => {
        let got = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => { got += c; });
        res.on("end", () => resolve(got));
        res.on("error", reject);
      }).on("error", reject);
    });
    return { relayed: await relayed, text, source, seen };
  } finally {
    server.close();
  }
}

describe("relay of a decoded body", () => {
  test("frames split anywhere reach the client decoded, read at the source; the read ends whole", async () => {
    const r = await run((source) => {
      const bytes = [...whole];
      for (let i = 0; i < bytes.length; i += 7) source.write(Buffer.from(bytes.slice(i, i + 7)));
      source.end();
    });
    assert.equal(r.text, sse.join(""));
    assert.equal(r.relayed.end, "ended");
    assert.equal(r.relayed.bodyEnded, true);
    // Chunks that complete no frame are relayed as nothing, not as partial frames.
    assert.ok(r.seen.every((c) => c === "" || c.endsWith("\n\n")));
    assert.equal(r.source.listenerCount("data"), 0, "the relay let go of the source");
  });

  test("a broken checksum: the frames before it in the same chunk go, then the read is cut", async () => {
    const corrupt = Buffer.from(whole);
    corrupt[frames[0].length + frames[1].length - 1] ^= 0x01; // the second frame's message CRC
    const r = await run((source) => source.write(corrupt));
    assert.equal(r.text, sse[0]);
    assert.equal(r.relayed.end, "upstream-cut");
    assert.equal(r.relayed.bodyEnded, false);
    assert.equal(r.source.destroyed, true, "the upstream body is closed");
  });

  test("an answer that ends inside a frame is cut, not whole", async () => {
    const r = await run((source) => source.end(whole.subarray(0, whole.length - 3)));
    assert.equal(r.text, sse[0] + sse[1]);
    assert.equal(r.relayed.end, "upstream-cut");
    assert.equal(r.relayed.bodyEnded, false);
  });

  test("an upstream that goes silent past its body timeout is idle, as an undecoded body is", async () => {
    const r = await run((source) => {
      source.write(frames[0]);
      setImmediate(() => source.destroy(Object.assign(new Error("body timeout"), { code: "UND_ERR_BODY_TIMEOUT" })));
    });
    assert.equal(r.text, sse[0]);
    assert.equal(r.relayed.end, "upstream-idle");
  });
});

describe("a decoded body read as a Readable", () => {
  test("gives the decoded bytes, and after a broken frame the bytes before it, then the error", async () => {
    // Read flowing, as a drain or a pipe reads it.
    const read = (bytes: Buffer) => new Promise<{ text: string; error?: Error }>((resolve) => {
      const source = new PassThrough();
      const body = sseOfEventStream(source);
      let text = "";
      body.on("data", (c: Buffer) => { text += String(c); });
      body.on("end", () => resolve({ text }));
      body.on("error", (error) => resolve({ text, error }));
      source.end(bytes);
    });
    assert.deepEqual(await read(whole), { text: sse.join("") });
    const corrupt = Buffer.from(whole);
    corrupt[frames[0].length + 2] ^= 0x01;
    const broken = await read(corrupt);
    assert.equal(broken.text, sse[0]);
    assert.match(String(broken.error?.message), /checksum|frame/);
  });

  test("an upstream error reaches the reader even before anything read it", async () => {
    const source = new PassThrough();
    const body = sseOfEventStream(source);
    const failed = new Promise<Error>((resolve) => body.once("error", resolve));
    source.destroy(new Error("connection reset"));
    assert.equal((await failed).message, "connection reset");
  });
});
