// Text to speech on a model priced by tokens (gpt-4o-mini-tts): the audio OpenAI answers by
// default carries no usage, so a client asking for it was billed 0 tokens. The gateway asks
// upstream for SSE (whose `speech.audio.done` carries the usage), renders the audio bytes
// back to a client that asked for audio, and bills the provider's own usage, to the
// nano-unit; a done event without usage is a billing fault; a client's `max_tokens` does not
// shrink the reservation; a model priced per 1k characters is untouched.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import OpenAI from "openai";
import { fakeAudio, fakeSpeechAudio, fakeSpeechUsage, startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { reserveInputTokens } from "../../src/billing/estimate.js";
import { registry } from "../../src/observability/metrics.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, channel, config, rawRequest, token } from "../integration/support.js";

const TTS = "gpt-4o-mini-tts";
/** A token of a user whose credit (0.015) is below what a speech of 2,000 output tokens may cost. */
const POOR = "sk-gw-test-bob-0123456789";
/** The fake's usage (14 in, 1,500 out) at input 0.6, output 12 per 1M, × 0.7:
 *   14 × 420 + 1500 × 8400 nano = 5,880 + 12,600,000 = 12,605,880 nano. */
const SPEECH_COST = 12_605_880n;
const NO_USAGE_INPUT = "Say this, but report no usage.";
const CUT_INPUT = "Say this, then drop the connection.";
const RAW_INPUT = "Say this as raw audio, whatever was asked.";
const scripts: Record<string, "speech_without_usage" | "speech_cut" | "speech_raw"> = {
  [NO_USAGE_INPUT]: "speech_without_usage", [CUT_INPUT]: "speech_cut", [RAW_INPUT]: "speech_raw",
};

interface Heard { status: number; type: string; body: Buffer; chunks: number; id: string; complete: boolean }

/** POSTs a speech request with node:http and reads the answer as it arrives, to its end or
 * until the connection is cut (`complete` false). */
function speak(gw: TestGateway, body: Record<string, unknown>, key = TOKEN): Promise<Heard> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${gw.url}/v1/audio/speech`, {
      method: "POST", agent: false, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", () => undefined); // a cut answer: told by `complete`
      res.on("close", () => resolve({
        status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body: Buffer.concat(chunks), chunks: chunks.length,
        id: String(res.headers["x-gateway-request-id"]), complete: res.complete,
      }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

async function faultCount(channelName: string): Promise<number> {
  const line = (await registry.metrics()).split("\n")
    .find((l) => l.startsWith("gateway_billing_faults_total{") && l.includes(`channel="${channelName}"`) && l.includes('reason="missing_usage"'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("speech on a token-priced model is billed the provider's own usage, whatever the client asks of the wire", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI({
      keys: [CHANNEL_KEY],
      script: (r) => {
        const kind = r.path === "/v1/audio/speech" ? scripts[String(r.body.input)] : undefined;
        return kind ? { kind } : { kind: "ok" };
      },
    });
    gw = await startTestGateway(config({
      channels: [channel("speech", fake.url, { models: [TTS, "tts-1", "mapped-tts"], model_map: { "mapped-tts": "gpt-4o-mini-tts-2025-03-20" } })],
      users: { alice: { credit: 100, groups: ["default"] }, bob: { credit: 0.015, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN), token("bob-main", POOR, { user: "bob" })],
      models: {
        [TTS]: { endpoint: "speech", price: { input: 0.6, output: 12 }, max_output_tokens: 2000 },
        "mapped-tts": { endpoint: "speech", price: { input: 0.6, output: 12 }, max_output_tokens: 2000 },
        "tts-1": { endpoint: "speech", price: { per_1k_chars: 0.015 } },
      },
    }));
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  const lastSent = () => fake.received.at(-1)!;

  test("the SDK's default (audio) gets exactly the audio bytes, asked upstream as SSE, billed the done event's usage", async () => {
    const { data, response } = await client.audio.speech.create({ model: TTS, input: "Hello from the gateway.", voice: "alloy" }).withResponse();
    assert.equal(response.headers.get("content-type"), "audio/mpeg");
    assert.deepEqual(Buffer.from(await data.arrayBuffer()), fakeSpeechAudio);
    const sent = lastSent();
    assert.deepEqual(sent.body, { model: TTS, input: "Hello from the gateway.", voice: "alloy", stream_format: "sse" }, "asked upstream as SSE, nothing else changed");
    const entry = await entryOf(gw.store, String(response.headers.get("x-gateway-request-id")));
    assert.equal(entry.usage.input, fakeSpeechUsage.input_tokens);
    assert.equal(entry.usage.output, fakeSpeechUsage.output_tokens);
    assert.equal(entry.costNano, SPEECH_COST);
    assert.equal(entry.estimated, false);
  });

  test("raw HTTP: each response_format's bytes and content type, streamed as they arrive; model_map still renames", async () => {
    for (const [format, type] of [["wav", "audio/wav"], ["opus", "audio/opus"], ["pcm", "audio/pcm"]] as const) {
      const r = await speak(gw, { model: "mapped-tts", input: "Hi there.", voice: "nova", response_format: format, stream_format: "audio" });
      assert.equal(r.status, 200);
      assert.equal(r.type, type);
      assert.deepEqual(r.body, fakeSpeechAudio);
      assert.ok(r.chunks >= 2, `the audio flows as it arrives (${r.chunks} chunks)`);
      const sent = lastSent();
      assert.equal(sent.body.model, "gpt-4o-mini-tts-2025-03-20");
      assert.equal(sent.body.stream_format, "sse");
      assert.equal(sent.body.response_format, format);
      const entry = await entryOf(gw.store, r.id);
      assert.equal(entry.costNano, SPEECH_COST);
      assert.equal(entry.estimated, false);
    }
  });

  test("a client asking for SSE gets the events as the provider sent them, the cost in the done event, billed the same", async () => {
    const body = JSON.stringify({ model: TTS, input: "Stream it.", voice: "alloy", stream_format: "sse" });
    const r = await rawRequest(`${gw.url}/v1/audio/speech`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body,
    });
    assert.equal(r.status, 200);
    assert.match(String(r.headers["content-type"]), /^text\/event-stream/);
    assert.equal(lastSent().raw.toString(), body, "the client's body goes upstream untouched");
    const events = r.text.split("\n\n").filter((e) => e.trim() !== "").map((e) => JSON.parse(e.replace(/^data: /, "")));
    const deltas = events.filter((e) => e.type === "speech.audio.delta");
    assert.deepEqual(Buffer.concat(deltas.map((e) => Buffer.from(e.audio, "base64"))), fakeSpeechAudio);
    const done = events.at(-1);
    assert.equal(done.type, "speech.audio.done");
    assert.equal(done.usage.input_tokens, fakeSpeechUsage.input_tokens);
    assert.equal(done.usage.gateway_cost, "0.01260588");
    const entry = await entryOf(gw.store, String(r.headers["x-gateway-request-id"]));
    assert.equal(entry.costNano, SPEECH_COST);
    assert.equal(entry.estimated, false);
  });

  test("a done event without usage is a billing fault: billed at the reservation, counted", async () => {
    const faults = await faultCount("speech");
    const body = { model: TTS, input: NO_USAGE_INPUT, voice: "alloy" };
    const r = await speak(gw, body);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, fakeSpeechAudio);
    const entry = await entryOf(gw.store, r.id);
    // The reservation: the body's input bound at 0.6 and 2,000 output tokens at 12, × 0.7.
    const input = BigInt(reserveInputTokens(Buffer.from(JSON.stringify(body))));
    assert.equal(entry.costNano, input * 420n + 2000n * 8400n);
    assert.equal(entry.estimated, true);
    assert.equal(await faultCount("speech"), faults + 1);
  });

  test("an upstream that answers raw audio to the SSE asked for reported no usage: a billing fault", async () => {
    const faults = await faultCount("speech");
    const body = { model: TTS, input: RAW_INPUT, voice: "alloy" };
    const r = await speak(gw, body);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, fakeSpeechAudio);
    assert.equal(lastSent().body.stream_format, "sse");
    const entry = await entryOf(gw.store, r.id);
    const input = BigInt(reserveInputTokens(Buffer.from(JSON.stringify(body))));
    assert.equal(entry.costNano, input * 420n + 2000n * 8400n);
    assert.equal(await faultCount("speech"), faults + 1);
  });

  test("a stream cut by the upstream cuts the audio client off (never a clean end), charged by a marked estimate", async () => {
    const r = await speak(gw, { model: TTS, input: CUT_INPUT, voice: "alloy" });
    assert.equal(r.status, 200);
    assert.equal(r.complete, false, "the client cannot take the cut audio for a whole answer");
    assert.ok(r.body.length < fakeSpeechAudio.length);
    assert.deepEqual(r.body, fakeSpeechAudio.subarray(0, r.body.length), "what came is the audio's start");
    const entry = await entryOf(gw.store, r.id);
    assert.equal(entry.estimated, true);
  });

  test("a client's max_tokens does not shrink the reservation: the model's max_output_tokens bounds it", async () => {
    const before = fake.received.length;
    const r = await speak(gw, { model: TTS, input: "Cheap?", voice: "alloy", max_tokens: 1 }, POOR);
    assert.equal(r.status, 402);
    assert.equal(fake.received.length, before, "nothing reached the upstream");
  });

  test("a stream_format the gateway cannot render is refused before anything goes upstream", async () => {
    const before = fake.received.length;
    const r = await speak(gw, { model: TTS, input: "Hi.", voice: "alloy", stream_format: "json" });
    assert.equal(r.status, 400);
    assert.match(r.body.toString(), /stream_format/);
    assert.equal(fake.received.length, before);
  });

  test("tts-1 priced per 1k characters is unchanged: the body untouched, the audio as sent, billed by characters", async () => {
    const body = JSON.stringify({ model: "tts-1", input: "Hello, world! ".repeat(100), voice: "alloy" });
    const r = await rawRequest(`${gw.url}/v1/audio/speech`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body,
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers["content-type"], "audio/mpeg");
    assert.equal(lastSent().raw.toString(), body);
    const entry = await entryOf(gw.store, String(r.headers["x-gateway-request-id"]));
    assert.equal(entry.costNano, 14_700_000n); // 1400 / 1000 × 0.015 × 0.7
    assert.equal(Buffer.byteLength(r.text), Buffer.byteLength(fakeAudio.toString("utf8")), "the fake's frame as sent");
  });
});
