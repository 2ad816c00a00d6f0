// Prices as providers charge, end to end: a fake upstream answers with the usage objects of
// every family (test/helpers/usage-fixtures.ts), the gateway reads them with its real
// readers and prices them by gateway.yaml's price components (audio, image, 1-hour cache
// writes, service tiers, variants), and the usage-log entry's cost is the total worked out
// by hand, its breakdown adding up to it. Group multiplier 1: the totals are the list's.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type http from "node:http";
import { decodeBreakdown, totalOf } from "../../src/billing/breakdown.js";
import type { UsageEntry } from "../../src/state/store.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeServer, type BaseReceived, type FakeServer } from "../helpers/fake-server.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import {
  anthropicAnswer, chatAudio, geminiAnswer, imageAnswer, responsesFlex, speechDone, transcription,
} from "../helpers/usage-fixtures.js";
import { TOKEN, channel, config } from "./support.js";

type Obj = Record<string, unknown>;

/** What the fake's chat-completions answer says of itself this time. */
interface ChatScript {
  readonly serviceTier?: string;
}

const sse = (events: readonly unknown[]): string => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");

/** Answers each API's path with its family's fixture, as the provider would (JSON or SSE). */
function answer(script: { chat: ChatScript }) {
  return (r: BaseReceived, res: http.ServerResponse): void => {
    const json = (body: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const events = (text: string) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(text);
    };
    const path = r.path.split("?")[0];
    if (path === "/v1/chat/completions") {
      const { service_tier: _, ...rest } = chatAudio;
      const tier = script.chat.serviceTier === undefined ? {} : { service_tier: script.chat.serviceTier };
      if (r.body.stream !== true) return json({ ...rest, ...tier });
      const head = { id: rest.id, object: "chat.completion.chunk", created: rest.created, model: rest.model, ...tier };
      return events(sse([
        { ...head, choices: [{ index: 0, delta: { role: "assistant", content: "Bonjour." }, finish_reason: null }], usage: null },
        { ...head, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
        { ...head, choices: [], usage: chatAudio.usage },
      ]) + "data: [DONE]\n\n");
    }
    if (path === "/v1/responses") return json(responsesFlex);
    if (path === "/v1/messages") return json(anthropicAnswer);
    if (/^\/v1beta\/models\/[^/]+:generateContent$/.test(path)) return json(geminiAnswer);
    if (path === "/v1/images/generations") {
      return json(r.body.model === "gpt-image-1" ? imageAnswer : { created: 1764000000, data: [{ b64_json: "iVBORw0KGgo=" }] });
    }
    if (path === "/v1/audio/transcriptions") return json(transcription);
    if (path === "/v1/videos" || path.startsWith("/v1/videos/")) {
      // A Video object: the job's seconds (a string) and size, queued on creation, done when asked again.
      const size = typeof r.body.size === "string" ? r.body.size : "720x1280";
      return json({ id: "video_01", object: "video", model: "sora-2-pro", status: r.method === "POST" ? "queued" : "completed",
        progress: r.method === "POST" ? 0 : 100, created_at: 1764000000, seconds: "8", size });
    }
    if (path === "/v1/audio/speech") {
      return events(sse([{ type: "speech.audio.delta", audio: Buffer.alloc(300, 1).toString("base64") }, speechDone]));
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `no route ${path}`, type: "invalid_request_error" } }));
  };
}

describe("usage read into price components, end to end", () => {
  const script = { chat: {} as ChatScript };
  let fake: FakeServer<BaseReceived>;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeServer(answer(script));
    gw = await startTestGateway(config({
      groups: { default: { multiplier: 1 }, video: { multiplier: 1 } },
      channels: [
        channel("oa", fake.url, { models: ["gpt-4o-audio", "gpt-5", "gpt-image-1", "dall-e-3", "gpt-4o-transcribe", "gpt-4o-mini-tts", "sora-2-pro"] }),
        channel("an", fake.url, { protocol: "anthropic", models: ["claude-sonnet-4-5"] }),
        channel("gm", fake.url, { protocol: "gemini", models: ["gemini-2.5-flash-image"] }),
      ],
      models: {
        "gpt-4o-audio": { endpoint: "chat", price: { input: 2.5, output: 10, audio_input: 40, audio_output: 80, service_tiers: { flex: 0.5, priority: 2 } } },
        "gpt-5": { endpoint: "responses", price: { input: 1.25, output: 10, cache_read_ratio: 0.1, service_tiers: { flex: 0.5, priority: 2 } } },
        "gpt-image-1": { endpoint: "image", price: { input: 5, image_input: 10, output: 40, image_output: 40 } },
        "dall-e-3": {
          endpoint: "image",
          price: { per_image: 0.04, variants: [{ when: { quality: "hd", size: "1024x1024" }, per_image: 0.08 }, { when: { quality: "hd" }, per_image: 0.12 }] },
        },
        "sora-2-pro": { endpoint: "video", price: { per_second: 0.3, variants: [{ when: { size: "1792x1024" }, per_second: 0.5 }] } },
        "gpt-4o-transcribe": { endpoint: "transcription", price: { input: 2.5, audio_input: 6, output: 10 } },
        "gpt-4o-mini-tts": { endpoint: "speech", price: { input: 0.6, output: 12, audio_output: 12 } },
        "claude-sonnet-4-5": {
          endpoint: "chat",
          price: {
            input: 3, output: 15, cache_read_ratio: 0.1, cache_write_ratio: 1.25, cache_write_1h_ratio: 2,
            tool_calls: { web_search: 10 }, service_tiers: { priority: 1.5 },
          },
        },
        "gemini-2.5-flash-image": {
          endpoint: "chat",
          price: { input: 0.3, output: 2.5, cache_read: 0.03, audio_input: 1, audio_cache_read: 0.1, image_input: 0.3, image_output: 30 },
        },
      },
    }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  /** Sends a request; returns its usage-log entry, after checking its breakdown adds up to its cost. */
  async function entryFor(path: string, body: Obj | FormData): Promise<UsageEntry> {
    const json = !(body instanceof FormData);
    const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
    if (json) headers["content-type"] = "application/json";
    if (path === "/v1/messages") headers["anthropic-version"] = "2023-06-01";
    const res = await fetch(`${gw.url}${path}`, {
      method: "POST",
      headers,
      body: json ? JSON.stringify(body) : body,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const entry = await entryOf(gw.store, res.headers.get("x-gateway-request-id")!);
    assert.equal(entry.estimated, false);
    assert.equal(totalOf(decodeBreakdown(entry.breakdown!)), entry.costNano, "the breakdown adds up to the charge");
    return entry;
  }

  const hi = [{ role: "user", content: "hi" }];

  test("chat with audio: audio in and out at their own prices", async () => {
    script.chat = { serviceTier: "default" };
    const entry = await entryFor("/v1/chat/completions", { model: "gpt-4o-audio", messages: hi });
    // 200 × 2.5 + 1000 × 40 + 100 × 10 + 700 × 80 = 97,500 per 1M → 97,500,000 nano
    assert.equal(entry.costNano, 97_500_000n);
    assert.match(entry.breakdown!, /audio_input=1000@/);
  });

  test("the service tier: the answer's, else the one the request asked", async () => {
    script.chat = {};
    const asked = await entryFor("/v1/chat/completions", { model: "gpt-4o-audio", messages: hi, service_tier: "flex" });
    assert.equal(asked.costNano, 48_750_000n, "flex asked, none named: × 0.5");
    script.chat = { serviceTier: "priority" };
    const named = await entryFor("/v1/chat/completions", { model: "gpt-4o-audio", messages: hi, service_tier: "flex" });
    assert.equal(named.costNano, 195_000_000n, "the answer's priority: × 2");
    script.chat = { serviceTier: "priority" };
    const streamed = await entryFor("/v1/chat/completions", { model: "gpt-4o-audio", messages: hi, stream: true });
    assert.equal(streamed.costNano, 195_000_000n, "a stream's chunks name it too");
  });

  test("responses at the flex tier: cache reads and reasoning", async () => {
    const entry = await entryFor("/v1/responses", { model: "gpt-5", input: "hi" });
    // (2000 × 1.25 + 8000 × 0.125 + 1000 × 10 + 2000 × 10) × 0.5 = 16,750 per 1M → 16,750,000 nano
    assert.equal(entry.costNano, 16_750_000n);
  });

  test("anthropic: 1-hour cache writes, web search and the priority tier, passed through and converted", async () => {
    // (1500 × 3 + 100000 × 0.3 + 10000 × 3.75 + 20000 × 6 + 2000 × 15) per 1M + 3 × 0.01 = 0.252 × 1.5
    const messages = await entryFor("/v1/messages", { model: "claude-sonnet-4-5", max_tokens: 4096, messages: hi });
    assert.equal(messages.costNano, 378_000_000n);
    const chat = await entryFor("/v1/chat/completions", { model: "claude-sonnet-4-5", messages: hi });
    assert.equal(chat.costNano, 378_000_000n, "the upstream's usage bills a converted answer alike");
  });

  test("gemini: audio and image modalities and the tool-use prompt", async () => {
    const entry = await entryFor("/v1beta/models/gemini-2.5-flash-image:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    // 1900 × 0.3 + 500 × 1 + 1000 × 0.3 + 1000 × 0.03 + 1000 × 0.1 + 210 × 2.5 + 700 × 2.5 + 1290 × 30 = 42,475 per 1M
    assert.equal(entry.costNano, 42_475_000n);
  });

  test("images: gpt-image-1's tokens by kind, dall-e-3 by its size and quality", async () => {
    const tokens = await entryFor("/v1/images/generations", { model: "gpt-image-1", prompt: "a fox" });
    // 50 × 5 + 200 × 10 + 4160 × 40 = 168,650 per 1M
    assert.equal(tokens.costNano, 168_650_000n);
    assert.equal((await entryFor("/v1/images/generations", { model: "dall-e-3", prompt: "a fox" })).costNano, 40_000_000n);
    const hd = await entryFor("/v1/images/generations", { model: "dall-e-3", prompt: "a fox", size: "1024x1024", quality: "hd" });
    assert.equal(hd.costNano, 80_000_000n);
    assert.match(hd.breakdown!, /variant=quality:hd,size:1024x1024/);
    const wide = await entryFor("/v1/images/generations", { model: "dall-e-3", prompt: "a fox", size: "1792x1024", quality: "hd" });
    assert.equal(wide.costNano, 120_000_000n);
  });

  test("video: the size asked chooses the price of the seconds the job reports", async () => {
    const wide = await entryFor("/v1/videos", { model: "sora-2-pro", prompt: "waves", seconds: "4", size: "1792x1024" });
    // The job's 8 seconds (not the 4 asked) × 0.5 = 4 → 4,000,000,000 nano
    assert.equal(wide.costNano, 4_000_000_000n);
    assert.match(wide.breakdown!, /variant=size:1792x1024/);
    const plain = await entryFor("/v1/videos", { model: "sora-2-pro", prompt: "waves", seconds: "4" });
    assert.equal(plain.costNano, 2_400_000_000n, "8 s × 0.3");
  });

  test("transcription tokens: audio input at the audio price", async () => {
    const form = new FormData();
    form.set("model", "gpt-4o-transcribe");
    form.set("file", new Blob([Buffer.alloc(4000, 7)], { type: "audio/mpeg" }), "hello.mp3");
    const entry = await entryFor("/v1/audio/transcriptions", form);
    // 200 × 2.5 + 1200 × 6 + 300 × 10 = 10,700 per 1M
    assert.equal(entry.costNano, 10_700_000n);
  });

  test("speech priced by tokens: its output is audio", async () => {
    const entry = await entryFor("/v1/audio/speech", { model: "gpt-4o-mini-tts", input: "Hello there.", voice: "alloy" });
    // 120 × 0.6 + 2400 × 12 = 28,872 per 1M
    assert.equal(entry.costNano, 28_872_000n);
  });
});
