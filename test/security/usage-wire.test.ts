// Attacks on the wire shape the provider answers in: a client that asks for the form that
// carries no usage (Gemini's JSON-array stream, a field mask dropping usageMetadata, a
// transcript as text) must still be billed the provider's own usage, to the nano-unit; and
// a whole answer that carries none is a billing fault, billed at the reservation.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import OpenAI, { toFile } from "openai";
import { startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import { fakeTranscript, startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { registry } from "../../src/observability/metrics.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import {
  CHANNEL_KEY, TOKEN, channel, completionAnswer, config, rawRequest, startRawUpstream, type RawUpstream,
} from "../integration/support.js";

const GEMINI = "gemini-2.5-flash";
/** The fake's usage (prompt 12, candidates 5) at input 0.3, output 2.5 per 1M, × 0.7:
 *   (12 × 0.3 + 5 × 2.5) / 1e6 × 0.7 = 16.1 × 0.7 / 1e6 = 0.00001127 → 11,270 nano. */
const GEMINI_COST = 11_270n;
/** gpt-4o-transcribe's usage (40 in, 9 out) at input 2.5, output 10 per 1M, × 0.7:
 *   (40 × 2.5 + 9 × 10) / 1e6 × 0.7 = 190 × 0.7 / 1e6 → 133,000 nano. */
const TRANSCRIBE_COST = 133_000n;

const generate = { contents: [{ role: "user", parts: [{ text: "Tell me a story" }] }] };

/** POSTs a generate-content call with the token in `x-goog-api-key`. */
function postGenerate(gw: TestGateway, action: string, query: string, headers: Record<string, string> = {}) {
  return rawRequest(`${gw.url}/v1beta/models/${GEMINI}:${action}${query}`, {
    method: "POST", headers: { "x-goog-api-key": TOKEN, "content-type": "application/json", ...headers }, body: JSON.stringify(generate),
  });
}

/** A generate-content call read chunk by chunk as the client receives it. */
function streamChunks(gw: TestGateway, query: string, model = GEMINI): Promise<{ status: number; type: string; chunks: string[]; id: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${gw.url}/v1beta/models/${model}:streamGenerateContent${query}`, {
      method: "POST", agent: false, headers: { "x-goog-api-key": TOKEN, "content-type": "application/json" },
    }, (res) => {
      const chunks: string[] = [];
      res.setEncoding("utf8");
      res.on("data", (c: string) => chunks.push(c));
      res.on("end", () => resolve({
        status: res.statusCode ?? 0, type: String(res.headers["content-type"]), chunks, id: String(res.headers["x-gateway-request-id"]),
      }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(JSON.stringify(generate));
  });
}

async function faultCount(channelName: string): Promise<number> {
  const line = (await registry.metrics()).split("\n")
    .find((l) => l.startsWith("gateway_billing_faults_total{") && l.includes(`channel="${channelName}"`) && l.includes('reason="missing_usage"'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("usage on the wire: the client cannot choose an answer without usage", () => {
  let gemini: FakeGemini;
  let openai: FakeOpenAI;
  let raw: RawUpstream;
  let gw: TestGateway;

  before(async () => {
    gemini = await startFakeGemini({ script: () => ({ kind: "ok", text: "Once upon a time there was a gateway.", chunks: 3, chunkDelayMs: 60 }) });
    openai = await startFakeOpenAI({ keys: [CHANNEL_KEY] });
    raw = await startRawUpstream((body, res) => completionAnswer(res, body.model, "an answer that reports no usage at all", null));
    gw = await startTestGateway(config({
      channels: [
        channel("gemini", gemini.url, { protocol: "gemini", models: [GEMINI] }),
        channel("openai", openai.url, { models: ["gpt-4o-transcribe", "whisper-1"], model_map: { "gpt-4o-transcribe": "gpt-4o-transcribe-2025-03-20" } }),
        channel("raw", raw.url, { models: ["no-usage"] }),
        // A generate-content client of a model an OpenAI-protocol channel serves (converted).
        channel("converted", openai.url, { models: ["gpt-4o-mini", "gpt-image-1"] }),
      ],
      models: {
        [GEMINI]: { price: { input: 0.3, output: 2.5 } },
        "gpt-4o-transcribe": { endpoint: "transcription", price: { input: 2.5, output: 10 } },
        "whisper-1": { endpoint: "transcription", price: { per_second: 0.0001 } },
        "no-usage": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
        "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
        "gpt-image-1": { endpoint: "image", price: { input: 5, output: 40 } },
      },
    }));
  });
  after(async () => {
    await gw?.close();
    await Promise.all([gemini?.close(), openai?.close(), raw?.close()]);
    destroyAgents();
  });

  test("a stream without alt=sse is asked upstream as SSE and billed its usage; the client gets Google's JSON array as it arrives", async () => {
    const r = await streamChunks(gw, "");
    assert.equal(r.status, 200);
    assert.match(r.type, /^application\/json/);
    const body = r.chunks.join("");
    assert.ok(body.startsWith("[{") && body.endsWith("}]"), body);
    assert.ok(body.includes("}\n,\r\n{"), "elements are separated as Google separates them");
    const elements = JSON.parse(body) as { candidates?: { content: { parts: { text: string }[] } }[]; usageMetadata?: { promptTokenCount: number } }[];
    assert.equal(elements.map((e) => e.candidates?.[0]?.content.parts[0]?.text ?? "").join(""), "Once upon a time there was a gateway.");
    assert.equal(elements.at(-1)!.usageMetadata!.promptTokenCount, 12);
    assert.equal((elements.at(-1)!.usageMetadata as Record<string, unknown>).gatewayCost, "0.00001127", "the cost is stamped before the framing");
    assert.ok(r.chunks.length >= 2 && !r.chunks[0].endsWith("]"), "the array streams as the upstream's chunks arrive, not held whole");
    assert.equal(gemini.received.at(-1)!.query.alt, "sse");
    const e = await entryOf(gw.store, r.id);
    assert.equal(e.costNano, GEMINI_COST);
    assert.equal(e.estimated, false);
  });

  test("the JSON-array form is rendered for a converted stream too, billed its usage", async () => {
    const r = await streamChunks(gw, "", "gpt-4o-mini");
    assert.equal(r.status, 200);
    assert.match(r.type, /^application\/json/);
    const elements = JSON.parse(r.chunks.join("")) as { usageMetadata?: { promptTokenCount: number; candidatesTokenCount: number } }[];
    assert.ok(elements.length >= 2);
    assert.equal(elements.at(-1)!.usageMetadata!.promptTokenCount, 12);
    const e = await entryOf(gw.store, r.id);
    // The OpenAI fake's usage (12 prompt incl. 2 cached, 5 completion) at 0.15 / 0.6, × 0.7:
    // (12 × 0.15 + 5 × 0.6) / 1e6 × 0.7 = 4.8 × 0.7 / 1e6 → 3,360 nano.
    assert.equal(e.costNano, 3_360n);
    assert.equal(e.estimated, false);
  });

  test("`fields=` (and `$fields`, percent-encoded names) never reach the provider: usage billed exactly", async () => {
    const attacks: [string, string][] = [
      ["generateContent", "?fields=candidates"],
      ["streamGenerateContent", "?alt=sse&fields=candidates"],
      ["streamGenerateContent", "?$fields=candidates"],
      ["streamGenerateContent", "?alt=sse&%66ields=candidates.content"],
    ];
    for (const [action, query] of attacks) {
      const r = await postGenerate(gw, action, query);
      assert.equal(r.status, 200, `${action}${query}: ${r.text}`);
      const sent = gemini.received.at(-1)!;
      assert.equal(sent.query.fields, undefined, `${action}${query}`);
      assert.equal(sent.query.$fields, undefined, `${action}${query}`);
      const e = await entryOf(gw.store, String(r.headers["x-gateway-request-id"]));
      assert.equal(e.costNano, GEMINI_COST, `${action}${query}`);
      assert.equal(e.estimated, false, `${action}${query}`);
    }
  });

  test("an X-Goog-FieldMask header is not forwarded: usage billed exactly", async () => {
    for (const action of ["generateContent", "streamGenerateContent"]) {
      const r = await postGenerate(gw, action, action === "generateContent" ? "" : "?alt=sse", { "X-Goog-FieldMask": "candidates" });
      assert.equal(r.status, 200, r.text);
      assert.equal(gemini.received.at(-1)!.headers["x-goog-fieldmask"], undefined);
      const e = await entryOf(gw.store, String(r.headers["x-gateway-request-id"]));
      assert.equal(e.costNano, GEMINI_COST, action);
      assert.equal(e.estimated, false, action);
    }
  });

  test("the generate-content query carries only the gateway's alt=sse upstream, never a `key`, however spelled", async () => {
    const r = await postGenerate(gw, "streamGenerateContent", "?alt=sse&prettyPrint=false&%6Bey=sk-gw-leaked&alt=json");
    assert.equal(r.status, 200, r.text);
    const sent = gemini.received.at(-1)!;
    assert.deepEqual(sent.query, { alt: "sse" }, "an allow-list: the client's other parameters stay with the gateway");
    assert.ok(!sent.path.includes("leaked"));
  });

  test("a token-priced transcript asked for as text is asked upstream as JSON, rendered as text, billed its tokens", async () => {
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.audio.transcriptions.create({
      model: "gpt-4o-transcribe", file: await toFile(Buffer.alloc(3000, 7), "talk.mp3", { type: "audio/mpeg" }), response_format: "text", language: "en",
    }).withResponse();
    assert.equal(data, `${fakeTranscript}\n`);
    assert.match(String(response.headers.get("content-type")), /^text\/plain/);
    const sent = openai.received.at(-1)!.raw.toString("latin1");
    assert.match(sent, /name="response_format"\r\n\r\njson\r\n/);
    assert.doesNotMatch(sent, /name="response_format"\r\n\r\ntext\r\n/);
    assert.match(sent, /name="language"\r\n\r\nen\r\n/, "the client's other fields go along");
    assert.match(sent, /name="model"\r\n\r\ngpt-4o-transcribe-2025-03-20\r\n/, "model_map renames it");
    assert.match(sent, /name="file"; filename="talk.mp3"\r\nContent-Type: audio\/mpeg\r\n\r\n\x07{3000}\r\n/, "the audio goes as sent");
    const e = await entryOf(gw.store, String(response.headers.get("x-gateway-request-id")));
    assert.equal(e.costNano, TRANSCRIBE_COST);
    assert.equal(e.estimated, false);
  });

  test("subtitles (srt, vtt) carry no usage: refused for a token-priced model before anything goes upstream", async () => {
    const before = openai.received.length;
    for (const format of ["srt", "vtt"] as const) {
      const form = new FormData();
      form.set("model", "gpt-4o-transcribe");
      form.set("response_format", format);
      form.set("file", new Blob([Buffer.alloc(500, 1)], { type: "audio/mpeg" }), "a.mp3");
      const r = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: form });
      assert.equal(r.status, 400, format);
      assert.match((await r.json()).error.message, /response_format/);
    }
    assert.equal(openai.received.length, before);
  });

  test("a streamed transcript (SSE, not the JSON its usage is read from) is refused before anything goes upstream", async () => {
    const before = openai.received.length;
    const form = new FormData();
    form.set("model", "gpt-4o-transcribe");
    form.set("stream", "true");
    form.set("file", new Blob([Buffer.alloc(500, 1)], { type: "audio/mpeg" }), "a.mp3");
    const r = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: form });
    assert.equal(r.status, 400);
    assert.match((await r.json()).error.message, /'stream'/);
    assert.equal(openai.received.length, before, "nothing served that could not be billed");
  });

  test("a streamed image (SSE partial images, not the JSON its usage is read from) is refused before anything goes upstream", async () => {
    const before = openai.received.length;
    const r = await rawRequest(`${gw.url}/v1/images/generations`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-image-1", prompt: "a fox", stream: true, partial_images: 1 }),
    });
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.error.message, /'stream'/);
    assert.equal(openai.received.length, before, "nothing served that could not be billed");
  });

  test("a whole answer without the usage its provider always sends is a billing fault: billed at the reservation, marked, counted", async () => {
    const faultsBefore = await faultCount("raw");
    const body = JSON.stringify({ model: "no-usage", max_tokens: 100, messages: [{ role: "user", content: "hello there" }] });
    const r = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body,
    });
    assert.equal(r.status, 200, r.text);
    const e = await entryOf(gw.store, String(r.headers["x-gateway-request-id"]));
    // The reservation by hand: the body at 3 bytes a token, plus max_tokens, at 0.15 / 0.6 per 1M × 0.7.
    const input = BigInt(Math.ceil(Buffer.byteLength(body) / 3));
    const reserved = (input * 150_000_000n * 7n + 100n * 600_000_000n * 7n + 5_000_000n) / 10_000_000n;
    assert.equal(e.costNano, reserved);
    assert.deepEqual({ input: e.usage.input, output: e.usage.output }, { input: Number(input), output: 100 });
    assert.equal(e.estimated, true);
    assert.equal(await faultCount("raw"), faultsBefore + 1);
  });
});
