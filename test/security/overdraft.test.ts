// Issue 18, items 4 and 5: a client that leaves pays for what the upstream did, and no user
// overdraws past what was reserved. Against the real gateway and fakes that answer as long
// as the request allows (a model that always writes to its output limit, and at great length
// when given none), report usage as the providers do, and stall mid-stream like a model
// reasoning out of sight. Raw HTTP throughout; pass-through and converted routes.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { costOf } from "../../src/billing/cost.js";
import { CUT_OUTPUT_TOKENS_PER_SECOND, fallbackUsage } from "../../src/billing/estimate.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeAnthropic, type FakeAnthropic, type Script as AnthropicScript } from "../helpers/fake-anthropic.js";
import { startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI, type Script as OpenAIScript } from "../helpers/fake-openai.js";
import { entryOf, eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { CHANNEL_KEY, TOKEN, config, rawRequest, token, type Obj, type RawResponse } from "../integration/support.js";

/** A user with 0.01 of credit, and one with plenty. */
const POOR_KEY = "sk-gw-test-poor-000000000001";
const CREDIT_NANO = 10_000_000n;
/** Output tokens a fake writes when the request sets no limit: a runaway answer. */
const UNLIMITED = 1_000_000;
/** The models' max_output_tokens (the default), reserved when a client sets no limit. */
const DEFAULT_LIMIT = 4096;
/** README's bound: text requests cannot overdraw at all. */
const OVERDRAFT_BOUND_NANO = 0n;
const PARALLEL = 12;

const models: Obj = {
  "gpt-long": { endpoint: "chat", price: { input: 1, output: 1 } },
  // A generate-content client converted to an OpenAI-protocol channel.
  "gen-long": { endpoint: "chat", price: { input: 1, output: 1 } },
  "claude-long": { endpoint: "chat", price: { input: 0.5, output: 0.5 } },
  // A chat-completions client converted to an anthropic channel.
  "claude-conv": { endpoint: "chat", price: { input: 1, output: 1 } },
  "gemini-x": { endpoint: "chat", price: { input: 1, output: 1 } },
};
const nano = (input: number, output: number) => costOf({ input, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 },
  { inputPer1M: 1_000_000_000n, outputPer1M: 1_000_000_000n }, 1_000_000n);

describe("overdraft: the reservation bounds the answer, a client that leaves still pays", () => {
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;
  let openaiScript: OpenAIScript = { kind: "metered", unlimited: UNLIMITED };
  let anthropicScript: AnthropicScript = { kind: "metered", input: 12 };
  const open: TestGateway[] = [];

  before(async () => {
    openai = await startFakeOpenAI({ keys: [CHANNEL_KEY], script: () => openaiScript });
    anthropic = await startFakeAnthropic({ keys: [CHANNEL_KEY], script: () => anthropicScript });
    gemini = await startFakeGemini({ keys: [CHANNEL_KEY] });
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    openaiScript = { kind: "metered", unlimited: UNLIMITED };
    anthropicScript = { kind: "metered", input: 12 };
  });
  after(async () => {
    await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
    destroyAgents();
  });

  async function gateway(server: Obj = {}): Promise<TestGateway> {
    const gw = await startTestGateway(config({
      server,
      groups: { default: { multiplier: 1 } },
      users: { alice: { credit: 100, groups: ["default"] }, poor: { credit: 0.01, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN), token("poor-main", POOR_KEY, { user: "poor" })],
      models,
      channels: [
        { name: "oa", protocol: "openai", base_url: openai.url, keys: [CHANNEL_KEY], groups: ["default"], models: ["gpt-long", "gen-long"] },
        { name: "an", protocol: "anthropic", base_url: anthropic.url, keys: [CHANNEL_KEY], groups: ["default"], models: ["claude-long", "claude-conv"] },
        { name: "ge", protocol: "gemini", base_url: gemini.url, keys: [CHANNEL_KEY], groups: ["default"], models: ["gemini-x"] },
      ],
    }));
    open.push(gw);
    return gw;
  }

  const chat = (gw: TestGateway, key: string, body: Obj) => rawRequest(`${gw.url}/v1/chat/completions`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body),
  });
  const messages = (gw: TestGateway, key: string, body: Obj) => rawRequest(`${gw.url}/v1/messages`, {
    method: "POST", headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" }, body: JSON.stringify(body),
  });
  const generate = (gw: TestGateway, key: string, model: string, body: Obj) => rawRequest(`${gw.url}/v1beta/models/${model}:generateContent`, {
    method: "POST", headers: { "x-goog-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body),
  });

  /** Fires PARALLEL requests of the poor user at once; checks the spend against the credit. */
  async function race(gw: TestGateway, send: () => Promise<RawResponse>): Promise<void> {
    const answers = await Promise.all(Array.from({ length: PARALLEL }, send));
    const ok = answers.filter((r) => r.status === 200).length;
    // Refused with the pre-deduction error, in the caller's protocol shape.
    const refused = answers.filter((r) => r.status === 402 && /Pre-deduction failed/.test(r.json.error.message)).length;
    assert.equal(ok + refused, PARALLEL, answers.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join("\n"));
    assert.ok(ok >= 1, "what the credit covers is served");
    await eventually(() => gw.ledger.reservedByUser("poor") === 0n, 3000, "every reservation settled");
    const spent = gw.ledger.spentByUser("poor");
    assert.ok(spent > 0n);
    assert.ok(spent <= CREDIT_NANO + OVERDRAFT_BOUND_NANO, `spent ${spent} nano of a ${CREDIT_NANO} credit (${ok} answers)`);
  }

  test("chat-completions pass-through: 12 parallel requests without max_tokens spend no more than the credit", async () => {
    const gw = await gateway();
    await race(gw, () => chat(gw, POOR_KEY, { model: "gpt-long", messages: [{ role: "user", content: "Write forever." }] }));
    assert.ok(openai.received.every((r) => r.body.max_completion_tokens === DEFAULT_LIMIT), "every call went up with the reserved limit");
  });

  test("messages pass-through: images by URL are reserved for, 12 parallel requests spend no more than the credit", async () => {
    anthropicScript = { kind: "metered", input: 12, perImage: 1600 };
    const gw = await gateway();
    const image = { type: "image", source: { type: "url", url: "https://example.test/photo.png" } };
    await race(gw, () => messages(gw, POOR_KEY, {
      model: "claude-long", max_tokens: 100, messages: [{ role: "user", content: [image, image, image, { type: "text", text: "Describe." }] }],
    }));
  });

  test("generate-content converted to chat-completions: 12 parallel requests spend no more than the credit", async () => {
    const gw = await gateway();
    await race(gw, () => generate(gw, POOR_KEY, "gen-long", { contents: [{ role: "user", parts: [{ text: "Write forever." }] }] }));
    assert.ok(openai.received.every((r) => r.body.max_completion_tokens === DEFAULT_LIMIT), "every call went up with the reserved limit");
  });

  test("the upstream gets the limit reserved for, and nothing else of the client's body changes", async () => {
    const gw = await gateway();
    const raw = '{"model":"gpt-long",  "messages":[{"role":"user","content":"hi"}] }';
    const r = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: raw,
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(openai.received.at(-1)!.raw.toString(), `{"max_completion_tokens":${DEFAULT_LIMIT},${raw.slice(1)}`);
    // The client's own limit (even under the older name) is kept, bytes untouched.
    const own = '{"model":"gpt-long","max_tokens":77,"messages":[{"role":"user","content":"hi"}]}';
    await rawRequest(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: own });
    assert.equal(openai.received.at(-1)!.raw.toString(), own);
    // generate-content pass-through: generationConfig.maxOutputTokens, beside the client's own config.
    const g = await generate(gw, TOKEN, "gemini-x", { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { temperature: 0.2 } });
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(gemini.received.at(-1)!.body.generationConfig, { temperature: 0.2, maxOutputTokens: DEFAULT_LIMIT });
    // Converted (generate-content client, OpenAI channel): the target's own field.
    await generate(gw, TOKEN, "gen-long", { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    assert.equal(openai.received.at(-1)!.body.max_completion_tokens, DEFAULT_LIMIT);
  });

  test("n = 2 and candidateCount = 2 double the output reserved", async () => {
    const gw = await gateway();
    /** The pre-deduction a refused request states (the poor user cannot hold 0.1 of output). */
    const required = async (send: Promise<RawResponse>) => {
      const r = await send;
      assert.equal(r.status, 402, r.text);
      const m = /pre-deduction of (\d+(?:\.\d+)?)/.exec(r.text);
      assert.ok(m, r.text);
      return Math.round(Number(m[1]) * 1e6); // in tokens, at 1 per 1M
    };
    const ask = (extra: Obj) => chat(gw, POOR_KEY, { model: "gpt-long", max_tokens: 50_000, messages: [{ role: "user", content: "hi" }], ...extra });
    const one = await required(ask({}));
    const two = await required(ask({ n: 2 }));
    // 50,000 output tokens more (at 1 per 1M), give or take the few bytes of "n":2.
    assert.ok(Math.abs(two - one - 50_000) <= 10, `n=1 ${one}, n=2 ${two}`);
    const gen = (extra: Obj) => generate(gw, POOR_KEY, "gemini-x",
      { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 50_000, ...extra } });
    const single = await required(gen({}));
    const double = await required(gen({ candidateCount: 2 }));
    assert.ok(Math.abs(double - single - 50_000) <= 10, `candidateCount 1 ${single}, 2 ${double}`);
  });

  test("a converted request whose encoder raises the limit (thinking on top of a small max) reserves what is sent", async () => {
    const gw = await gateway();
    const sent = anthropic.received.length;
    // chat → messages: reasoning_effort high is a 24,576-token thinking budget; with max_tokens 1000
    // the channel is sent max_tokens 25,576 (messages-protocol rule: it must exceed the budget).
    const r = await chat(gw, POOR_KEY, { model: "claude-conv", max_tokens: 1000, reasoning_effort: "high", messages: [{ role: "user", content: "hi" }] });
    assert.equal(r.status, 402, r.text);
    const m = /pre-deduction of (\d+(?:\.\d+)?)/.exec(r.text);
    assert.ok(m && Number(m[1]) >= 25_576 / 1e6, r.text);
    assert.equal(anthropic.received.length, sent, "nothing went upstream");
  });

  test("a provider that answers past the limit is billed what it reports, past the reservation", async () => {
    openaiScript = { kind: "metered", unlimited: UNLIMITED, overrun: 5000 };
    const gw = await gateway();
    const r = await chat(gw, TOKEN, { model: "gpt-long", max_completion_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    assert.equal(r.status, 200, r.text);
    const e = await entryOf(gw.store, String(r.headers["x-gateway-request-id"]));
    assert.equal(e.usage.output, 5100);
    assert.equal(e.costNano, nano(12, 5100));
  });

  /** Streams a request, reads its first bytes, and leaves; the request id. */
  async function cutAfterFirstBytes(url: string, headers: Record<string, string>, body: Obj): Promise<{ id: string; bodyBytes: number }> {
    const abort = new AbortController();
    const text = JSON.stringify(body);
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text, signal: abort.signal });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.ok(first.value && first.value.length > 0, "the stream began");
    abort.abort();
    return { id: res.headers.get("x-gateway-request-id")!, bodyBytes: Buffer.byteLength(text) };
  }
  const chatUrl = (gw: TestGateway) => `${gw.url}/v1/chat/completions`;
  const bearer = { authorization: `Bearer ${TOKEN}` };

  test("chat-completions pass-through: a reasoning stream cut before any usage is read on to its final usage, billed from it", async () => {
    openaiScript = { kind: "metered", unlimited: UNLIMITED, reasoning: 20_000, stallMs: 300 };
    const gw = await gateway({ usage_drain_timeout: "10s" });
    const cut = await cutAfterFirstBytes(chatUrl(gw), bearer,
      { model: "gpt-long", stream: true, max_completion_tokens: 30_000, messages: [{ role: "user", content: "Think hard." }] });
    const e = await entryOf(gw.store, cut.id);
    assert.equal(e.estimated, false, "the provider's own usage, read after the client left");
    assert.deepEqual([e.usage.output, e.usage.reasoning], [30_000, 20_000]);
    assert.equal(e.costNano, nano(12, 30_000));
  });

  for (const route of ["chat-completions pass-through", "messages converted to chat-completions"] as const) {
    test(`${route}: a stream cut before any usage, whose upstream never reports it, is billed for the time read, marked an estimate`, async () => {
      openaiScript = { kind: "metered", unlimited: UNLIMITED };
      const gw = await gateway({ usage_drain_timeout: "300ms" });
      const cut = route === "chat-completions pass-through"
        ? await cutAfterFirstBytes(chatUrl(gw), bearer, { model: "gpt-long", stream: true, messages: [{ role: "user", content: "Think." }] })
        : await cutAfterFirstBytes(`${gw.url}/v1/messages`, { "x-api-key": TOKEN, "anthropic-version": "2023-06-01" },
          { model: "gpt-long", stream: true, max_tokens: DEFAULT_LIMIT, messages: [{ role: "user", content: "Think." }] });
      const e = await entryOf(gw.store, cut.id);
      assert.equal(e.estimated, true, "marked an estimate");
      const bytesOnly = fallbackUsage(cut.bodyBytes, 0);
      assert.ok(e.costNano > nano(bytesOnly.input, bytesOnly.output), `cost ${e.costNano} above the byte estimate`);
      // At least the 300 ms read on for, at the documented pace; never past the reservation.
      assert.ok(e.usage.output >= 0.3 * CUT_OUTPUT_TOKENS_PER_SECOND, `output ${e.usage.output}`);
      assert.ok(e.usage.output <= DEFAULT_LIMIT, `output ${e.usage.output} within the reservation`);
      assert.equal(gw.ledger.reservedByUser("alice"), 0n);
    });
  }

  for (const route of ["messages pass-through", "chat-completions converted to messages"] as const) {
    test(`${route}: a thinking stream cut after usage-bearing events is billed from them, marked an estimate`, async () => {
      anthropicScript = { kind: "metered", input: 3000 }; // message_start reports 3,000 input tokens, then silence
      const gw = await gateway({ usage_drain_timeout: "300ms" });
      const cut = route === "messages pass-through"
        ? await cutAfterFirstBytes(`${gw.url}/v1/messages`, { "x-api-key": TOKEN, "anthropic-version": "2023-06-01" },
          { model: "claude-long", stream: true, max_tokens: 8000, thinking: { type: "enabled", budget_tokens: 4000 },
            messages: [{ role: "user", content: "Think." }] })
        : await cutAfterFirstBytes(chatUrl(gw), bearer, { model: "claude-conv", stream: true, messages: [{ role: "user", content: "Think." }] });
      const e = await entryOf(gw.store, cut.id);
      assert.equal(e.estimated, true);
      assert.equal(e.usage.input, 3000, "the input the upstream reported, over the byte estimate");
      assert.ok(e.usage.output >= 0.3 * CUT_OUTPUT_TOKENS_PER_SECOND, `output ${e.usage.output}: hidden thinking is not free`);
      assert.ok(e.usage.output <= 8000);
    });
  }
});
