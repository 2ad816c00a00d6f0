// The streaming multipart reader: the same parts whatever the chunking, and a broken body (cut
// short, no closing boundary, part headers that never end) is a 400 in a promise, never an error
// event nobody hears (which would end the process).

import { test } from "node:test";
import assert from "node:assert/strict";
import { MultipartReader } from "../../src/media/multipart.js";
import { GatewayError } from "../../src/errors/gateway-error.js";

const boundary = "unitboundary";
const type = `multipart/form-data; boundary=${boundary}`;
const form = Buffer.from(
  `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
  `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n` +
  `RIFF0123456789\r\n--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nhello\r\n--${boundary}--\r\n`);

function read(body: Buffer, chunk: number, contentType = type) {
  const reader = new MultipartReader(contentType);
  for (let at = 0; at < body.length; at += chunk) reader.write(body.subarray(at, at + chunk));
  reader.end();
  return reader.parts;
}

test("multipart: the same fields and file sizes however the body is chunked", async () => {
  for (const chunk of [1, 7, 64, form.length]) {
    const parts = await read(form, chunk);
    assert.deepEqual(parts.fields, { model: "whisper-1", prompt: "hello" }, `chunks of ${chunk}`);
    assert.deepEqual(parts.files, [{ field: "file", filename: "a.wav", mimeType: "audio/wav", size: 14 }]);
  }
});

test("multipart: broken bodies are 400s in the promise, whatever the cut", async () => {
  const closing = `--${boundary}--\r\n`.length;
  const broken = [
    form.subarray(0, form.length - closing), // no closing boundary
    ...Array.from({ length: 20 }, (_, i) => form.subarray(0, Math.floor((form.length * i) / 20))), // cut anywhere
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="a"\r\nno blank line`), // headers never end
  ];
  for (const body of broken) {
    await assert.rejects(read(body, 5), (e: unknown) => e instanceof GatewayError && e.status === 400 && /malformed/.test(e.message),
      JSON.stringify(body.toString("latin1").slice(-40)));
  }
  await assert.rejects(read(form, 10, "multipart/form-data"), /malformed/); // no boundary parameter
});

test("multipart: a reader whose body never ends rejects nothing unheard", async () => {
  const reader = new MultipartReader(type);
  reader.write(form.subarray(0, 40));
  // Abandoned (the client left): no end(), no listener on `parts`; nothing may surface as an
  // unhandled rejection or error event.
  await new Promise((r) => setImmediate(r));
});

test("multipart: text fields are bounded together (they are held beside the body): past 1 MiB in all, a 400", async () => {
  const field = (name: string, size: number) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${"p".repeat(size)}\r\n`;
  const body = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => field(`f${i}`, 512 * 1024)).join("") + `--${boundary}--\r\n`);
  assert.equal(Object.keys((await read(body(2), 65536)).fields).length, 2);
  await assert.rejects(read(body(3), 65536), (e: unknown) => e instanceof GatewayError && e.status === 400 && /text fields are longer/.test(e.message));
});
