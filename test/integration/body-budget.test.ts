// server.max_body_memory: the bytes all request bodies in flight hold together are bounded.
// A body takes from the budget what it holds as its bytes arrive (issue 18: no longer its
// declared Content-Length up front, which let trickling connections hold memory they never
// sent), and one that would pass the budget is answered 503 with Retry-After in the caller's
// shape; a body's bytes go back to the budget when its response closes, however it ended.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { startFakeTolerant, type FakeTolerant } from "../helpers/fake-tolerant.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { chunked, rawSend, requestBytes, type RawOutcome } from "../helpers/raw-http.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, channel, config } from "./support.js";

const BUDGET = 100 * 1024;
const BIG = 60_000; // two of these do not fit the budget; one and a small one do
/** What a held body sends of BIG: it then holds between this and BIG (once half of a
 * declared body is here it moves into one buffer of the declared length). */
const SENT = 50_000;

/** A chat body of exactly `size` bytes. */
function chatBody(size: number, model = "gpt-4o-mini"): Buffer {
  const shell = JSON.stringify({ model, max_tokens: 4, messages: [{ role: "user", content: "" }] });
  return Buffer.from(shell.replace('"content":""', `"content":"${"x".repeat(size - shell.length)}"`));
}

/** A transcription upload of exactly `size` bytes. */
function uploadBody(size: number): { body: Buffer; type: string } {
  const b = "budgetboundary";
  const head = `--${b}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${b}\r\n` +
    `Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`;
  const tail = `\r\n--${b}--\r\n`;
  const body = Buffer.concat([Buffer.from(head), Buffer.alloc(size - head.length - tail.length, 1), Buffer.from(tail)]);
  return { body, type: `multipart/form-data; boundary=${b}` };
}

const auth: [string, string][] = [["host", "x"], ["authorization", `Bearer ${TOKEN}`]];

/** A connection that has sent its headers and part of its body, and holds the rest. */
async function holdBody(port: number, body: Buffer, sent: number): Promise<{ socket: net.Socket; answer: Promise<string>; finish(): void }> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((r) => socket.once("connect", () => r()));
  let received = "";
  socket.on("data", (c: Buffer) => { received += c.toString("latin1"); });
  socket.on("error", () => {});
  const answer = new Promise<string>((r) => socket.on("close", () => r(received)));
  const head = requestBytes("POST", "/v1/chat/completions",
    [...auth, ["content-type", "application/json"], ["content-length", String(body.length)], ["connection", "close"]]);
  socket.write(Buffer.concat([head, body.subarray(0, sent)]));
  return { socket, answer, finish: () => void socket.write(body.subarray(sent)) };
}

const send = (port: number, path: string, type: string, body: Buffer, extra: [string, string][] = []) =>
  rawSend(port, { pieces: [requestBytes("POST", path, [...auth, ...extra, ["content-type", type], ["content-length", String(body.length)]], body)] });

function json(out: RawOutcome): Record<string, any> {
  assert.equal(out.kind, "answer", JSON.stringify(out));
  return out.kind === "answer" ? JSON.parse(out.body.toString("utf8")) : {};
}

describe("body memory budget (server.max_body_memory)", () => {
  let fake: FakeTolerant;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeTolerant();
    gw = await startTestGateway(config({
      server: { max_body: "64KiB", max_body_memory: `${BUDGET}`, body_timeout: "5s" },
      channels: [
        channel("oa", fake.url, { models: ["gpt-4o-mini", "whisper-1"] }),
        { name: "an", protocol: "anthropic", base_url: fake.url, keys: [CHANNEL_KEY], groups: ["default"], models: ["claude-sonnet-4-5"] },
        { name: "ge", protocol: "gemini", base_url: fake.url, keys: [CHANNEL_KEY], groups: ["default"], models: ["gemini-2.5-flash"] },
      ],
      models: {
        "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
        "claude-sonnet-4-5": { price: { input: 3, output: 15 } },
        "gemini-2.5-flash": { price: { input: 0.3, output: 2.5 } },
        "whisper-1": { endpoint: "transcription", price: { per_second: 0.0001 } },
      },
    }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("a body past the budget is refused with 503 and Retry-After in the caller's shape; its bytes come back when it ends", async () => {
    const held = await holdBody(gw.port, chatBody(BIG), SENT);
    await eventually(() => gw.bodyBudget.inUse >= SENT, 2000, "the held body to take what it sent");
    const heldBytes = gw.bodyBudget.inUse;
    assert.ok(heldBytes <= BIG, `holds ${heldBytes}`);

    const refused = await send(gw.port, "/v1/chat/completions", "application/json", chatBody(BIG));
    assert.equal(refused.kind === "answer" && refused.status, 503);
    assert.equal(refused.kind === "answer" && refused.headers["retry-after"], "1");
    assert.ok(refused.kind === "answer" && refused.headers["x-gateway-request-id"]);
    assert.deepEqual([json(refused).error.code, json(refused).error.type], ["body_memory_exhausted", "gateway_error"]);

    const messages = json(await send(gw.port, "/v1/messages", "application/json",
      chatBody(BIG, "claude-sonnet-4-5"), [["anthropic-version", "2023-06-01"]]));
    assert.equal(messages.type, "error");
    assert.deepEqual([messages.error.type, messages.error.code], ["overloaded_error", "body_memory_exhausted"]);
    const gemini = json(await send(gw.port, "/v1beta/models/gemini-2.5-flash:generateContent", "application/json", chatBody(BIG)));
    assert.deepEqual([gemini.error.code, gemini.error.status], [503, "UNAVAILABLE"]);
    const upload = uploadBody(BIG);
    const multipart = await send(gw.port, "/v1/audio/transcriptions", upload.type, upload.body);
    assert.equal(multipart.kind === "answer" && multipart.status, 503);

    // What still fits is served, alongside the held body.
    const small = await send(gw.port, "/v1/chat/completions", "application/json", chatBody(500));
    assert.equal(small.kind === "answer" && small.status, 200);
    assert.equal(gw.bodyBudget.inUse, heldBytes, "the small body gave its bytes back");

    held.finish();
    assert.match(await held.answer, /^HTTP\/1\.1 200 /);
    await eventually(() => gw.bodyBudget.inUse === 0, 2000, "the held body's bytes to come back");
    const again = await send(gw.port, "/v1/audio/transcriptions", upload.type, upload.body);
    assert.equal(again.kind === "answer" && again.status, 200, show(again));
    assert.equal(gw.bodyBudget.inUse, 0);
  });

  test("a chunked body takes its bytes as they arrive and is refused when they run out; a client that leaves gives its bytes back", async () => {
    const held = await holdBody(gw.port, chatBody(BIG), SENT);
    await eventually(() => gw.bodyBudget.inUse >= SENT, 2000, "the held body to take what it sent");
    const body = chatBody(BIG);
    const out = await rawSend(gw.port, { pieces: [
      requestBytes("POST", "/v1/chat/completions", [...auth, ["content-type", "application/json"], ["transfer-encoding", "chunked"]]),
      chunked(body, [10_000, 20_000, 30_000, 40_000]),
    ] });
    assert.equal(out.kind === "answer" && out.status, 503, show(out));
    assert.equal(json(out).error.code, "body_memory_exhausted");

    // Under the budget, a chunked body is served and counted while it is read.
    const fits = await rawSend(gw.port, { pieces: [
      requestBytes("POST", "/v1/chat/completions", [...auth, ["content-type", "application/json"], ["transfer-encoding", "chunked"]]),
      chunked(chatBody(20_000), [5000, 15_000]),
    ] });
    assert.equal(fits.kind === "answer" && fits.status, 200, show(fits));

    held.socket.resetAndDestroy();
    await eventually(() => gw.bodyBudget.inUse === 0, 2000, "the abandoned body's bytes to come back");
  });
});

function show(out: RawOutcome): string {
  return JSON.stringify(out.kind === "answer" ? { ...out, body: out.body.toString("utf8").slice(0, 300) } : out);
}
