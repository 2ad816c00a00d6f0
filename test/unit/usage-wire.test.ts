// The pieces that keep usage on the wire, without sockets: the generate-content query the
// gateway sends, the JSON-array framing of an SSE stream (whole, cut by an error, empty), and
// the multipart rewrite (parts rebuilt from busboy's reading; a body it reads otherwise refused).

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseMultipart } from "../../src/media/multipart.js";
import { rewriteMultipart } from "../../src/media/multipart-rewrite.js";
import { jsonArrayFraming } from "../../src/protocols/gemini/json-array-stream.js";
import { clientWantsSse, generateQuery } from "../../src/protocols/gemini/query.js";

test("generate-content query: alt, fields, callback and key are the gateway's, however spelled; the rest pass", () => {
  assert.equal(generateQuery("", true), "alt=sse");
  assert.equal(generateQuery("", false), "");
  assert.equal(generateQuery("alt=json&fields=candidates&$fields=x&%66ields=y&KEY=k&%6Bey=k&callback=f&prettyPrint=false", true), "prettyPrint=false&alt=sse");
  assert.equal(generateQuery("alt=sse&quotaUser=u", false), "quotaUser=u");
  assert.equal(clientWantsSse("alt=sse"), true);
  assert.equal(clientWantsSse("$alt=sse"), true);
  assert.equal(clientWantsSse("alt=sse&alt=json"), false);
  assert.equal(clientWantsSse(""), false);
});

const event = (data: string) => `data: ${data}\r\n\r\n`;

test("JSON-array framing: elements as events come, Google's separators, closed at the end", () => {
  const f = jsonArrayFraming();
  assert.equal(f.events(event('{"a":1}') + ": keep-alive\r\n\r\n" + event('{"a":2}')), '[{"a":1}\n,\r\n{"a":2}');
  assert.equal(f.events(""), "");
  assert.equal(f.end(event('{"a":3,"finishReason":"STOP"}')), '\n,\r\n{"a":3,"finishReason":"STOP"}]');
  const cut = jsonArrayFraming();
  assert.equal(cut.events(event('{"a":1}')), '[{"a":1}');
  assert.deepEqual(JSON.parse('[{"a":1}' + cut.end(event('{"error":{"code":502}}'))), [{ a: 1 }, { error: { code: 502 } }]);
  assert.equal(jsonArrayFraming().end(""), "[]");
  assert.equal(jsonArrayFraming().end(event('{"error":{"code":504}}')), '[{"error":{"code":504}}]');
});

const boundary = "b0undary";
const type = `multipart/form-data; boundary=${boundary}`;
const form = (parts: string[]) => Buffer.from(parts.map((p) => `--${boundary}\r\n${p}\r\n`).join("") + `--${boundary}--\r\n`, "latin1");
const audio = "ID3\r\n\r\n--not-a-boundary\x00\xff";

test("multipart rewrite: fields replaced once, every other part's bytes kept, headers rebuilt from busboy's reading", async () => {
  const body = form([
    'Content-Disposition: form-data; name="response_format"\r\n\r\ntext',
    `Content-Disposition: form-data; name="file"; filename="C:\\\\talks\\\\a \\"b\\".mp3"\r\nContent-Type: audio/mpeg\r\n\r\n${audio}`,
    'content-disposition: form-data; name="model"\r\n\r\ngpt-4o-transcribe',
    'Content-Disposition: form-data; name="response_format"\r\n\r\nsrt',
  ]);
  const parsed = await parseMultipart(body, type);
  const out = rewriteMultipart(body, type, parsed.order, { response_format: "json", model: "gpt-4o-transcribe-2025" })!;
  assert.ok(out);
  const again = await parseMultipart(out.body, out.contentType);
  assert.deepEqual(again.fields, { response_format: "json", model: "gpt-4o-transcribe-2025" });
  assert.deepEqual(again.files.map((f) => [f.field, f.filename, f.mimeType, f.size]), [["file", parsed.files[0].filename, "audio/mpeg", Buffer.byteLength(audio, "latin1")]]);
  assert.ok(out.body.includes(Buffer.from(audio, "latin1")), "the audio bytes go as sent");
  assert.equal(out.body.toString("latin1").match(/name="response_format"/g)?.length, 1);
});

test("multipart rewrite: a body whose parts do not line up with busboy's reading is refused (undefined)", async () => {
  const body = form(['Content-Disposition: form-data; name="model"\r\n\r\nm', 'Content-Disposition: form-data; name="file"; filename="a"\r\n\r\nx']);
  const parsed = await parseMultipart(body, type);
  assert.equal(rewriteMultipart(body, type, parsed.order.slice(1), { response_format: "json" }), undefined);
  assert.equal(rewriteMultipart(body, "multipart/form-data; boundary=other", parsed.order, { response_format: "json" }), undefined);
  // A part busboy skips (no Content-Disposition) leaves the two readings apart.
  const skipped = form(["X-Other: 1\r\n\r\nhidden", 'Content-Disposition: form-data; name="model"\r\n\r\nm']);
  assert.equal(rewriteMultipart(skipped, type, (await parseMultipart(skipped, type)).order, { response_format: "json" }), undefined);
});
