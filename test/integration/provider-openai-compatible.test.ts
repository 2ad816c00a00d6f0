// Kind openai-compatible end to end, by preset. DeepSeek (a fake speaking its wire format):
// an Anthropic SDK client with thinking and a tool, converted, gets DeepSeek's
// reasoning_content as thinking blocks (plain and streamed), and on the tool-result turn the
// assistant message carries its reasoning_content back (the fake refuses the turn
// otherwise, as DeepSeek does); its cache hits (prompt_cache_hit_tokens) are billed as cache
// reads, to the nano; an OpenAI SDK client passes through to its /chat/completions; a key
// out of balance (402) is taken out. Ollama: a channel without keys runs and sends none.
// The config's checks of preset and base_url. xAI (a fake answering its own error shape): an
// invalid key, told only by a 400's message, is taken out once the gateway's own probe
// confirms it; a client's 400 that echoes that message keeps the key.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { compileSource } from "../../src/config/index.js";
import { keyFingerprint } from "../../src/routing/key-health.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import {
  FINAL_TEXT, REASONING, TOOL_CALL, deepseekUsage, startFakeDeepSeek, type DeepSeekKeyFault, type FakeDeepSeek,
} from "../helpers/fake-deepseek.js";
import { bearerKey } from "../helpers/fake-server.js";
import { XAI_TEXT, isXaiProbe, maskedKey, startFakeXai, type FakeXai } from "../helpers/fake-xai.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, config, rawRequest, type Obj } from "./support.js";

const KEY = "sk-deepseek-SECRET-0001";
const KEY2 = "sk-deepseek-SECRET-0002";
const MODEL = "deepseek-reasoner";

/** DeepSeek's prices per 1M: cache miss 0.56, cache hit 0.07, output 1.68. */
const models = { [MODEL]: { endpoint: "chat", price: { input: 0.56, cache_read: 0.07, output: 1.68 } } };

/**
 * Every answer's usage (1000 prompt tokens, 640 cache hits; 200 output) at those prices and
 * group multiplier 0.7, by hand:
 *   (360 × 0.56 + 640 × 0.07 + 200 × 1.68) / 1e6 × 0.7 = 582.4 / 1e6 × 0.7 = 0.00040768
 *   = 407 680 nano-units. Billed as uncached input it would be 627 200.
 */
const ANSWER_COST = 407_680n;

const weatherTool = {
  name: "get_weather", description: "The weather in a city.",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

describe("kind openai-compatible", () => {
  const faults = new Map<string, DeepSeekKeyFault>();
  let deepseek: FakeDeepSeek;
  let ollama: FakeDeepSeek;
  const open: TestGateway[] = [];

  before(async () => {
    deepseek = await startFakeDeepSeek({ keys: [KEY, KEY2], chatPath: "/chat/completions", keyFaults: faults });
    ollama = await startFakeDeepSeek({ keys: [], chatPath: "/v1/chat/completions" });
  });
  after(async () => {
    for (const gw of open) await gw.close();
    await deepseek.close();
    await ollama.close();
    destroyAgents();
  });

  function deepseekChannel(extra: Obj = {}): Obj {
    return { name: "deepseek", kind: "openai-compatible", preset: "deepseek", base_url: deepseek.url, keys: [KEY], groups: ["default"], models: [MODEL], ...extra };
  }

  async function gateway(channel: Obj): Promise<TestGateway> {
    const gw = await startTestGateway(config({ channels: [channel], models }));
    open.push(gw);
    return gw;
  }

  const anthropicOf = (gw: TestGateway) => new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });

  for (const streamed of [false, true]) {
    test(`messages client with thinking and a tool${streamed ? ", streamed" : ""}: reasoning as thinking, sent back as reasoning_content on the tool-result turn`, async () => {
      const gw = await gateway(deepseekChannel());
      const anthropic = anthropicOf(gw);
      const params = {
        model: MODEL, max_tokens: 4000, thinking: { type: "enabled" as const, budget_tokens: 2048 }, tools: [weatherTool],
        messages: [{ role: "user" as const, content: "Weather in Paris?" }],
      };
      const from = deepseek.received.length;
      const first = streamed ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
      assert.equal(first.stop_reason, "tool_use");
      const thinking = first.content.find((b) => b.type === "thinking");
      assert.ok(thinking && thinking.type === "thinking");
      assert.equal(thinking.thinking, REASONING);
      const call = first.content.find((b) => b.type === "tool_use");
      assert.ok(call && call.type === "tool_use");
      assert.deepEqual([call.id, call.name, call.input], [TOOL_CALL.id, TOOL_CALL.name, { city: "Paris" }]);

      const second = await anthropic.messages.create({
        ...params,
        messages: [
          ...params.messages,
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny, 22°C" }] },
        ],
      });
      assert.deepEqual(second.content.filter((b) => b.type === "text").map((b) => b.type === "text" && b.text), [FINAL_TEXT]);
      const [askedFirst, askedSecond] = deepseek.received.slice(from);
      assert.equal(askedFirst.path, "/chat/completions");
      assert.equal(bearerKey(askedFirst.headers), KEY);
      const assistant = (askedSecond.body.messages as Obj[]).find((m) => m.role === "assistant");
      assert.equal(assistant?.reasoning_content, REASONING);
      assert.deepEqual((assistant?.tool_calls as Obj[]).map((c) => c.id), [TOOL_CALL.id]);
    });
  }

  test("cache hits (prompt_cache_hit_tokens) are billed as cache reads, to the nano, plain and streamed", async () => {
    const gw = await gateway(deepseekChannel());
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const plain = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] }).withResponse();
    const { data: stream, response } = await client.chat.completions.create({
      model: MODEL, stream: true, messages: [{ role: "user", content: "hi" }],
    }).withResponse();
    for await (const _chunk of stream) { /* read to the end */ }
    const anthropic = await anthropicOf(gw).messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).withResponse();
    for (const res of [plain.response, response, anthropic.response]) {
      const e = await entryOf(gw.store, res.headers.get("x-gateway-request-id")!);
      assert.deepEqual(
        { input: e.usage.input, cacheRead: e.usage.cacheRead, output: e.usage.output, reasoning: e.usage.reasoning, estimated: e.estimated },
        { input: 360, cacheRead: 640, output: 200, reasoning: 150, estimated: false },
      );
      assert.equal(e.costNano, ANSWER_COST);
    }
    // A messages client sees DeepSeek's hits as its cache reads.
    assert.deepEqual([anthropic.data.usage.input_tokens, anthropic.data.usage.cache_read_input_tokens], [360, deepseekUsage.prompt_cache_hit_tokens]);
    assert.equal(gw.ledger.spentByUser("alice"), 3n * ANSWER_COST);
  });

  test("a key out of balance (DeepSeek's 402) is taken out: the request is served on the next key", async () => {
    faults.set(KEY, "no_balance");
    try {
      const gw = await gateway(deepseekChannel({ keys: [KEY, KEY2] }));
      const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const from = deepseek.received.length;
      for (let i = 0; i < 3; i++) {
        const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] });
        assert.equal(r.choices[0].finish_reason, "tool_calls");
      }
      const keys = deepseek.received.slice(from).map((r) => bearerKey(r.headers));
      assert.ok(keys.filter((k) => k === KEY).length <= 1, `keys asked: ${keys.join(", ")}`);
      assert.equal(keys.filter((k) => k === KEY2).length, 3);
    } finally {
      faults.clear();
    }
  });

  test("an OpenAI SDK client passes through: DeepSeek's reasoning_content reaches it as sent", async () => {
    const gw = await gateway(deepseekChannel());
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] });
    assert.equal((r.choices[0].message as unknown as Obj).reasoning_content, REASONING);
  });

  test("ollama: a channel without keys is enabled and sends no Authorization header", async () => {
    const gw = await gateway({ name: "local", kind: "openai-compatible", preset: "ollama", base_url: ollama.url, groups: ["default"], models: [MODEL] });
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const from = ollama.received.length;
    const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] });
    assert.equal(r.choices[0].finish_reason, "tool_calls");
    const [asked] = ollama.received.slice(from);
    assert.equal(asked.path, "/v1/chat/completions");
    assert.equal(asked.headers.authorization, undefined);
  });

  test("config: preset required and known; base_url from the preset's host, required for vllm", () => {
    const compile = (channel: Obj) => compileSource(config({ channels: [channel], models }), { path: "t.yaml", env: {}, generation: 1 });
    const { preset: _p, ...noPreset } = deepseekChannel();
    assert.throws(() => compile(noPreset), /preset is required for kind openai-compatible/);
    assert.throws(() => compile(deepseekChannel({ preset: "nope" })), /preset "nope" is not one of deepseek, openrouter/);
    assert.throws(() => compile(deepseekChannel({ api_version: "2024-10-21" })), /api_version is not a setting of kind openai-compatible/);
    assert.throws(() => compile(deepseekChannel({ preset: "vllm", base_url: undefined })), /base_url is required for preset vllm/);
    const hosts: Record<string, string> = {
      deepseek: "https://api.deepseek.com/", openrouter: "https://openrouter.ai/api", mistral: "https://api.mistral.ai/",
      xai: "https://api.x.ai/", groq: "https://api.groq.com/openai", ollama: "http://127.0.0.1:11434/",
    };
    for (const [preset, host] of Object.entries(hosts)) {
      const { runtime } = compile(deepseekChannel({ preset, base_url: undefined }));
      const ch = runtime.channels.get("deepseek")!;
      assert.equal(ch.baseUrl.href.replace(/\/$/, ""), host.replace(/\/$/, ""), preset);
      assert.equal(ch.enabled, true);
    }
    // vllm takes no key: enabled without one.
    const { runtime } = compile(deepseekChannel({ preset: "vllm", keys: [] }));
    assert.equal(runtime.channels.get("deepseek")!.enabled, true);
  });
});

describe("kind openai-compatible, preset xai: an invalid key", () => {
  const GOOD = "xai-GOOD-key-SECRET-0001";
  const GOOD2 = "xai-GOOD-key-SECRET-0002";
  const BAD = "xai-REVOKED-key-SECRET-0099";
  const GROK = "grok-4";
  const UPSTREAM = "grok-4-0709";
  const grokModels = { [GROK]: { endpoint: "chat", price: { input: 3, output: 15 } } };
  let xai: FakeXai;
  const open: TestGateway[] = [];

  before(async () => {
    xai = await startFakeXai({ keys: [GOOD, GOOD2] });
  });
  after(async () => {
    for (const gw of open) await gw.close();
    await xai.close();
    destroyAgents();
  });

  async function xaiGateway(name: string, keys: string[]): Promise<TestGateway> {
    const gw = await startTestGateway(config({
      channels: [{ name, kind: "openai-compatible", preset: "xai", base_url: xai.url, keys, groups: ["default"], models: [GROK], model_map: { [GROK]: UPSTREAM } }],
      models: grokModels,
    }));
    open.push(gw);
    return gw;
  }

  /** The keys clients' requests reached xAI with since `from`, and the keys the gateway probed. */
  function asked(from: number): { served: string[]; probed: string[] } {
    const since = xai.received.slice(from);
    return { served: since.filter((r) => !isXaiProbe(r)).map((r) => bearerKey(r.headers)), probed: since.filter(isXaiProbe).map((r) => bearerKey(r.headers)) };
  }

  async function keyUp(gw: TestGateway, channel: string, key: string): Promise<string | undefined> {
    const text = (await rawRequest(`${gw.url}/metrics`)).text;
    return new RegExp(`gateway_channel_key_up\\{channel="${channel}",key="${keyFingerprint(key)}",reason="(\\w+)"\\} [01]`).exec(text)?.[1];
  }

  test("xAI's 400 \"Incorrect API key provided\" is confirmed by a probe of the gateway's own and takes the key out: the next key serves", async () => {
    const gw = await xaiGateway("xai-bad", [BAD, GOOD]);
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const from = xai.received.length;
    const r = await client.chat.completions.create({ model: GROK, messages: [{ role: "user", content: "hi" }] });
    assert.equal(r.choices[0].message.content, XAI_TEXT);
    assert.deepEqual(asked(from), { served: [BAD, GOOD], probed: [BAD] }, "the bad key, probed once, then the next key");
    const probe = xai.received.slice(from).find(isXaiProbe)!;
    assert.deepEqual(probe.body, { text: ".", model: UPSTREAM }, "the probe's body is the gateway's own");
    const again = xai.received.length;
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: GROK, messages: [{ role: "user", content: "hi" }] });
    assert.deepEqual(asked(again), { served: [GOOD, GOOD, GOOD], probed: [] }, "the bad key is out of rotation");
    assert.equal(await keyUp(gw, "xai-bad", BAD), "auth");
    assert.equal(await keyUp(gw, "xai-bad", GOOD), "none");
  });

  test("a client's 400 that echoes \"Incorrect API key provided\" keeps the key: the probe finds it healthy and the client gets its 400", async () => {
    const gw = await xaiGateway("xai-echo", [GOOD, GOOD2]);
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const from = xai.received.length;
    const echo = `Incorrect API key provided: ${maskedKey(GOOD)}. You can obtain an API key from https://console.x.ai.`;
    const params = { model: GROK, messages: [{ role: "user" as const, content: "hi" }], reasoning_effort: echo } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
    for (let i = 0; i < 4; i++) {
      const refused = await client.chat.completions.create(params).then(() => undefined, (err: unknown) => err);
      assert.ok(refused instanceof OpenAI.APIError, String(refused));
      assert.equal(refused.status, 400);
      assert.match(JSON.stringify(refused.error), /Invalid reasoning_effort/);
    }
    const { served, probed } = asked(from);
    assert.equal(served.length, 4, "each echo is the client's 400, never retried on another key");
    // Each suspected key probed once (a probe's finding stands for the interval), whatever the echoes.
    assert.deepEqual([...probed].sort(), [...new Set(served)].sort());
    for (const key of [GOOD, GOOD2]) assert.equal(await keyUp(gw, "xai-echo", key), "none", "the keys stay in rotation");
    const later = xai.received.length;
    for (let i = 0; i < 4; i++) {
      const r = await client.chat.completions.create({ model: GROK, messages: [{ role: "user", content: "hi" }] });
      assert.equal(r.choices[0].message.content, XAI_TEXT);
    }
    assert.deepEqual(new Set(asked(later).served), new Set([GOOD, GOOD2]), "both keys still serve");
  });
});
