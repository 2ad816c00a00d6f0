// Token counting: Anthropic's POST /v1/messages/count_tokens (@anthropic-ai/sdk
// messages.countTokens) and generate-content's :countTokens (@google/genai
// models.countTokens). A model on a channel of the route's own protocol is counted there
// (passed through: model_map, channel key, version headers; failover); any other model gets
// the documented local estimate in the route's shape. Free (nothing reserved or charged),
// authenticated, rate-limited, logged at cost 0; errors in the route's shape.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI, type Content } from "@google/genai";
import { IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS } from "../../src/billing/estimate.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { ANTHROPIC_FAKE_COUNT, startFakeAnthropic, type FakeAnthropic, type Script as AScript } from "../helpers/fake-anthropic.js";
import { GEMINI_FAKE_COUNT, fakePngBase64, startFakeGemini, type FakeGemini, type Script as GScript } from "../helpers/fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { entryOf, eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { CHANNEL_KEY, TOKEN, channel, config, rawRequest, token, type Obj, type RawResponse } from "./support.js";

/** Client-facing models and the channels that serve them. */
const M = {
  /** anthropic channel `an`, renamed by its model_map. */
  claude: "claude-sonnet-4-6",
  /** gemini channel `gm`, renamed by its model_map. */
  gemini: "gemini-2.5-flash",
  /** openai channel `oa` only. */
  gpt: "gpt-4o-mini",
  /** anthropic `an-bad` (priority 10, failing on cue) then anthropic `an`. */
  claudeFailover: "claude-failover",
  /** anthropic `an-bad` (priority 0) and openai `oa` (priority 10). */
  claudeMixed: "claude-mixed",
} as const;
const CLAUDE_UPSTREAM = "claude-sonnet-4-6-20260217";
const GEMINI_UPSTREAM = "gemini-2.5-flash-001";
const TINY_KEY = "sk-gw-test-tiny-count-000001";
/** A token allowed gpt-4o-mini only. */
const NARROW_KEY = "sk-gw-test-narrow-count-0001";

const price = { input: 3, output: 15 };
const models: Obj = Object.fromEntries(Object.values(M).map((m) => [m, { price }]));

interface Fakes {
  an: FakeAnthropic;
  bad: FakeAnthropic;
  gm: FakeGemini;
  oa: FakeOpenAI;
}

const scripts: { an?: () => AScript; bad?: () => AScript; gm?: () => GScript } = {};

async function startFakes(): Promise<Fakes> {
  return {
    an: await startFakeAnthropic({ name: "an", keys: [CHANNEL_KEY], script: () => scripts.an?.() ?? { kind: "ok" } }),
    bad: await startFakeAnthropic({ name: "bad", keys: [CHANNEL_KEY], script: () => scripts.bad?.() ?? { kind: "ok" } }),
    gm: await startFakeGemini({ name: "gm", keys: [CHANNEL_KEY], script: () => scripts.gm?.() ?? { kind: "ok" } }),
    oa: await startFakeOpenAI({ name: "oa", keys: [CHANNEL_KEY] }),
  };
}

function gatewayYaml(f: Fakes, extra: { limits?: Obj } = {}): string {
  return config({
    // A model call its client left is waited for only briefly (its hung upstream never answers).
    server: { upstream_attempts: 3, usage_drain_timeout: "200ms" },
    limits: extra.limits,
    users: { alice: { credit: 100, groups: ["default"] }, tiny: { credit: 0.000001, groups: ["default"] } },
    tokens: [token("alice-main", TOKEN), token("tiny-main", TINY_KEY, { user: "tiny" }), token("alice-narrow", NARROW_KEY, { models: [M.gpt] })],
    channels: [
      channel("an", f.an.url, { protocol: "anthropic", models: [M.claude, M.claudeFailover], model_map: { [M.claude]: CLAUDE_UPSTREAM } }),
      channel("an-bad", f.bad.url, { protocol: "anthropic", models: [M.claudeFailover, M.claudeMixed], priority: 10 }),
      channel("gm", f.gm.url, { protocol: "gemini", models: [M.gemini], model_map: { [M.gemini]: GEMINI_UPSTREAM } }),
      channel("oa", f.oa.url, { protocol: "openai", models: [M.gpt, M.claudeMixed], priority: 20 }),
    ],
    models,
  });
}

const received = (f: Fakes) => f.an.received.length + f.bad.received.length + f.gm.received.length + f.oa.received.length;

/** The documented estimate of text alone: characters / 4 (rounded up), plus per-message framing. */
function estimateRange(chars: number, messages: number): [number, number] {
  const base = Math.ceil(chars / 4);
  return [base, base + MESSAGE_OVERHEAD_TOKENS * messages];
}

function assertInRange(n: number, [lo, hi]: [number, number], what: string): void {
  assert.ok(Number.isInteger(n) && n >= lo && n <= hi, `${what}: ${n} not in [${lo}, ${hi}]`);
}

const LONG = "The quick brown fox jumps over the lazy dog. ".repeat(40);
const SHORT = "Hello there, how are you today?";

function countMessages(base: string, body: Obj, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(`${base}/v1/messages/count_tokens`, {
    method: "POST",
    headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

function countGemini(base: string, model: string, body: Obj, headers: Record<string, string> = { "x-goog-api-key": TOKEN }, query = ""): Promise<RawResponse> {
  return rawRequest(`${base}/v1beta/models/${model}:countTokens${query}`, {
    method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body),
  });
}

describe("token counting", () => {
  let f: Fakes;
  let gw: TestGateway;
  let claude: Anthropic;
  let ai: GoogleGenAI;

  before(async () => {
    f = await startFakes();
    gw = await startTestGateway(gatewayYaml(f));
    claude = new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });
    ai = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: gw.url } });
  });
  after(async () => {
    await gw?.close();
    await Promise.all(Object.values(f ?? {}).map((x) => x.close()));
    destroyAgents();
  });
  beforeEach(() => {
    delete scripts.an;
    delete scripts.bad;
    delete scripts.gm;
  });

  describe("messages count_tokens → anthropic channel (pass-through)", () => {
    test("the SDK gets the upstream's count; model renamed, channel key and version headers sent, client token never", async () => {
      const before = f.an.received.length;
      const { data, response } = await claude.messages.countTokens({
        model: M.claude, system: "Be brief.", messages: [{ role: "user", content: SHORT }],
      }, { headers: { "anthropic-version": "2023-06-01", "anthropic-beta": "token-counting-2024-11-01" } }).withResponse();
      assert.deepEqual(data, { input_tokens: ANTHROPIC_FAKE_COUNT });
      assert.equal(response.headers.get("x-gateway-token-count"), null, "not an estimate");
      assert.equal(f.an.received.length, before + 1);
      const got = f.an.received.at(-1)!;
      assert.equal(got.path, "/v1/messages/count_tokens");
      assert.equal(got.body.model, CLAUDE_UPSTREAM);
      assert.deepEqual(got.body.messages, [{ role: "user", content: SHORT }]);
      assert.equal(got.body.system, "Be brief.");
      assert.equal(got.headers["x-api-key"], CHANNEL_KEY);
      assert.equal(got.headers["anthropic-version"], "2023-06-01");
      assert.deepEqual(got.betas, ["token-counting-2024-11-01"]);
      assert.ok(!JSON.stringify(got.headers).includes(TOKEN), "the client token went upstream");
      assert.ok(!got.raw.toString().includes(TOKEN));
      const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
      assert.equal(e.status, 200);
      assert.equal(e.costNano, 0n);
      assert.equal(e.channel, "an");
      assert.equal(e.upstreamModel, CLAUDE_UPSTREAM);
      assert.equal(e.inboundProtocol, "messages-count-tokens");
      assert.deepEqual(e.usage, { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
      assert.equal(e.estimated, false);
    });

    test("an upstream refusal is relayed in Anthropic's shape (not failed over, not charged)", async () => {
      scripts.an = () => ({ kind: "error", status: 400, message: "messages.0.content: Input should be a valid list" });
      const before = f.an.received.length;
      await assert.rejects(claude.messages.countTokens({ model: M.claude, messages: [{ role: "user", content: SHORT }] }), (e: unknown) => {
        assert.ok(e instanceof Anthropic.BadRequestError, String(e));
        assert.equal(e.status, 400);
        assert.match(e.message, /Input should be a valid list/);
        assert.equal((e.error as { type?: string }).type, "error");
        return true;
      });
      assert.equal(f.an.received.length, before + 1, "a 400 is the answer, not a reason to retry");
      assert.equal(gw.store.spentByUser("alice"), 0n);
    });

    test("fails over across channels like any request: a 529 on the first, the count from the next", async () => {
      scripts.bad = () => ({ kind: "error", status: 529 });
      const b = f.bad.received.length;
      const a = f.an.received.length;
      const r = await countMessages(gw.url, { model: M.claudeFailover, messages: [{ role: "user", content: SHORT }] });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { input_tokens: ANTHROPIC_FAKE_COUNT });
      assert.equal(f.bad.received.length, b + 1);
      assert.equal(f.an.received.length, a + 1);
      assert.equal(f.an.received.at(-1)!.path, "/v1/messages/count_tokens");
      const e = await entryOf(gw.store, String(r.headers["x-gateway-request-id"]));
      assert.equal(e.channel, "an");
      assert.equal(e.costNano, 0n);
    });

    test("every channel of the protocol failing: 502 in Anthropic's shape when no other channel serves the model", async () => {
      scripts.bad = () => ({ kind: "error", status: 500 });
      scripts.an = () => ({ kind: "error", status: 503 });
      const r = await countMessages(gw.url, { model: M.claudeFailover, messages: [{ role: "user", content: SHORT }] });
      assert.ok(r.status >= 500, r.text);
      assert.equal(r.json.type, "error");
      assert.equal(r.json.error.code, "upstream_error");
    });

    test("every channel of the protocol failing, another protocol's channel serving the model: the estimate", async () => {
      scripts.bad = () => ({ kind: "error", status: 503 });
      const b = f.bad.received.length;
      const o = f.oa.received.length;
      const r = await countMessages(gw.url, { model: M.claudeMixed, messages: [{ role: "user", content: LONG }] });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers["x-gateway-token-count"], "estimate");
      assertInRange(r.json.input_tokens, estimateRange(LONG.length, 1), "estimate");
      assert.equal(f.bad.received.length, b + 1, "the anthropic channel was asked first, whatever its priority");
      assert.equal(f.oa.received.length, o, "an openai channel cannot count: nothing sent to it");
      const e = await entryOf(gw.store, String(r.headers["x-gateway-request-id"]));
      assert.equal(e.channel, undefined, "no channel answered");
      assert.equal(e.costNano, 0n);
    });

    test("anthropic-version is required, as on /v1/messages", async () => {
      const before = received(f);
      const r = await rawRequest(`${gw.url}/v1/messages/count_tokens`, {
        method: "POST", headers: { "x-api-key": TOKEN, "content-type": "application/json" },
        body: JSON.stringify({ model: M.claude, messages: [{ role: "user", content: SHORT }] }),
      });
      assert.equal(r.status, 400);
      assert.equal(r.json.type, "error");
      assert.equal(r.json.error.code, "missing_version_header");
      assert.equal(received(f), before);
    });
  });

  describe("messages count_tokens → other protocols (the estimate)", () => {
    for (const model of [M.gpt, M.gemini]) {
      test(`${model}: within the documented range of the text, growing with content; nothing sent upstream`, async () => {
        const before = received(f);
        const { data: one, response } = await claude.messages.countTokens({ model, messages: [{ role: "user", content: SHORT }] }).withResponse();
        assert.equal(response.headers.get("x-gateway-token-count"), "estimate");
        assertInRange(one.input_tokens, estimateRange(SHORT.length, 1), "short");
        const system = "You are a careful assistant.";
        const long = await claude.messages.countTokens({
          model, system, messages: [{ role: "user", content: SHORT }, { role: "assistant", content: "Fine." }, { role: "user", content: LONG }],
        });
        assertInRange(long.input_tokens, estimateRange(system.length + SHORT.length + "Fine.".length + LONG.length, 3), "long");
        assert.ok(long.input_tokens > one.input_tokens + 400);
        const withTool = await claude.messages.countTokens({
          model, messages: [{ role: "user", content: SHORT }],
          tools: [{ name: "get_weather", description: "Weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
        });
        assert.ok(withTool.input_tokens > one.input_tokens, "tool definitions count");
        const withImage = await claude.messages.countTokens({
          model, messages: [{ role: "user", content: [
            { type: "text", text: SHORT },
            { type: "image", source: { type: "base64", media_type: "image/png", data: fakePngBase64 } },
          ] }],
        });
        assert.equal(withImage.input_tokens, one.input_tokens + IMAGE_TOKENS, "an image at its fixed cost");
        assert.equal(received(f), before, "no upstream was asked");
        const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
        assert.equal(e.status, 200);
        assert.equal(e.costNano, 0n);
        assert.equal(e.channel, undefined);
        assert.equal(e.model, model);
      });
    }

    test("a tool loop (tool_use and tool_result) counts its arguments and results", async () => {
      const ask: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Zürich?" }];
      const base = await claude.messages.countTokens({ model: M.gpt, messages: ask });
      const loop = await claude.messages.countTokens({
        model: M.gpt, messages: [...ask,
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Zürich", days: [1, 2, 3] } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "Sunny, 21 degrees, light wind from the west." }] }],
      });
      assert.ok(loop.input_tokens >= base.input_tokens + 2 * MESSAGE_OVERHEAD_TOKENS + 15, `${loop.input_tokens} vs ${base.input_tokens}`);
    });

    test("a body the messages decoder cannot read: 400 naming the field, in Anthropic's shape", async () => {
      const r = await countMessages(gw.url, { model: M.gpt, messages: [{ role: "user", content: [{ type: "bogus" }] }] });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.type, "error");
      assert.equal(r.json.error.type, "invalid_request_error");
      assert.match(r.json.error.message, /messages\[0\]\.content\[0\]/);
    });
  });

  describe("generate-content :countTokens → gemini channel (pass-through)", () => {
    test("the SDK gets the upstream's count; the path names the mapped model; channel key sent, client token never", async () => {
      const before = f.gm.received.length;
      const out = await ai.models.countTokens({ model: M.gemini, contents: SHORT });
      assert.equal(out.totalTokens, GEMINI_FAKE_COUNT);
      assert.equal(out.sdkHttpResponse?.headers?.["x-gateway-token-count"], undefined);
      assert.equal(f.gm.received.length, before + 1);
      const got = f.gm.received.at(-1)!;
      assert.equal(got.action, "countTokens");
      assert.equal(got.model, GEMINI_UPSTREAM);
      assert.equal(got.key, CHANNEL_KEY);
      assert.deepEqual(got.body, { contents: [{ role: "user", parts: [{ text: SHORT }] }] });
      assert.ok(!JSON.stringify(got.headers).includes(TOKEN) && !got.path.includes(TOKEN), "the client token went upstream");
      const id = out.sdkHttpResponse?.headers?.["x-gateway-request-id"];
      const e = await entryOf(gw.store, String(id));
      assert.equal(e.costNano, 0n);
      assert.equal(e.channel, "gm");
      assert.equal(e.inboundProtocol, "generate-content-count-tokens");
    });

    test("?key= auth is not forwarded; a generateContentRequest's model is renamed too", async () => {
      const body = { generateContentRequest: { model: `models/${M.gemini}`, contents: [{ role: "user", parts: [{ text: SHORT }] }] } };
      const r = await countGemini(gw.url, M.gemini, body, {}, `?key=${TOKEN}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.totalTokens, GEMINI_FAKE_COUNT);
      const got = f.gm.received.at(-1)!;
      assert.equal(got.query.key, undefined);
      assert.equal(got.key, CHANNEL_KEY);
      assert.equal((got.body.generateContentRequest as Obj).model, `models/${GEMINI_UPSTREAM}`);
    });

    test("an upstream refusal is relayed in the Gemini shape", async () => {
      scripts.gm = () => ({ kind: "error", status: 400, message: "* CountTokensRequest.contents: contents is not specified" });
      await assert.rejects(ai.models.countTokens({ model: M.gemini, contents: SHORT }), (e: unknown) => {
        assert.ok(e instanceof ApiError, String(e));
        assert.equal(e.status, 400);
        assert.match(e.message, /contents is not specified/);
        assert.match(e.message, /INVALID_ARGUMENT/);
        return true;
      });
    });
  });

  describe("generate-content :countTokens → other protocols (the estimate)", () => {
    for (const model of [M.claude, M.gpt]) {
      test(`${model}: totalTokens and promptTokensDetails within the documented range; nothing sent upstream`, async () => {
        const before = received(f);
        const one = await ai.models.countTokens({ model, contents: SHORT });
        assertInRange(one.totalTokens!, estimateRange(SHORT.length, 1), "short");
        assert.equal(one.sdkHttpResponse?.headers?.["x-gateway-token-count"], "estimate");
        const contents: Content[] = [
          { role: "user", parts: [{ text: SHORT }] }, { role: "model", parts: [{ text: "Fine." }] }, { role: "user", parts: [{ text: LONG }] },
        ];
        const long = await ai.models.countTokens({ model, contents });
        assertInRange(long.totalTokens!, estimateRange(SHORT.length + "Fine.".length + LONG.length, 3), "long");
        assert.ok(long.totalTokens! > one.totalTokens! + 400);
        const image = await ai.models.countTokens({ model, contents: [{ role: "user", parts: [{ text: SHORT }, { inlineData: { mimeType: "image/png", data: fakePngBase64 } }] }] });
        assert.equal(image.totalTokens, one.totalTokens! + IMAGE_TOKENS);
        assert.equal(received(f), before, "no upstream was asked");
      });
    }

    test("the raw answer: totalTokens with promptTokensDetails by modality", async () => {
      const r = await countGemini(gw.url, M.gpt, { contents: [{ role: "user", parts: [{ text: SHORT }, { inlineData: { mimeType: "image/png", data: fakePngBase64 } }] }] });
      assert.equal(r.status, 200, r.text);
      const [lo, hi] = estimateRange(SHORT.length, 1);
      const text = r.json.promptTokensDetails[0];
      assert.equal(text.modality, "TEXT");
      assertInRange(text.tokenCount, [lo, hi], "text");
      assert.deepEqual(r.json.promptTokensDetails[1], { modality: "IMAGE", tokenCount: IMAGE_TOKENS });
      assert.equal(r.json.totalTokens, text.tokenCount + IMAGE_TOKENS);
    });

    test("a generateContentRequest counts its systemInstruction and tools too", async () => {
      const contents = [{ role: "user", parts: [{ text: SHORT }] }];
      const plain = await countGemini(gw.url, M.claude, { contents });
      const full = await countGemini(gw.url, M.claude, { generateContentRequest: {
        model: `models/${M.claude}`, contents, systemInstruction: { parts: [{ text: LONG }] },
        tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] }],
      } });
      assert.equal(full.status, 200, full.text);
      assert.ok(full.json.totalTokens > plain.json.totalTokens + LONG.length / 4, `${full.json.totalTokens} vs ${plain.json.totalTokens}`);
    });
  });

  describe("free", () => {
    test("nothing is reserved while a count is in flight (a messages call holds a reservation)", async () => {
      scripts.an = () => ({ kind: "hang" });
      for (const [path, body] of [
        ["/v1/messages", { model: M.claude, max_tokens: 10, messages: [{ role: "user", content: SHORT }] }],
        ["/v1/messages/count_tokens", { model: M.claude, messages: [{ role: "user", content: SHORT }] }],
      ] as const) {
        const before = f.an.received.length;
        const abort = new AbortController();
        const pending = fetch(`${gw.url}${path}`, {
          method: "POST", signal: abort.signal, body: JSON.stringify(body),
          headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
        }).catch(() => undefined);
        await eventually(() => f.an.received.length > before, 3000, "the upstream call");
        assert.equal(gw.ledger.reservationsHeld, path === "/v1/messages" ? 1 : 0, path);
        abort.abort();
        await pending;
        await eventually(() => gw.ledger.reservationsHeld === 0, 3000, "the reservation released");
      }
    });

    test("a balance too small for any reservation still counts; no spend, on either route", async () => {
      const msg = await rawRequest(`${gw.url}/v1/messages`, {
        method: "POST", headers: { "x-api-key": TINY_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify({ model: M.claude, max_tokens: 1000, messages: [{ role: "user", content: SHORT }] }),
      });
      assert.equal(msg.status, 402, "the control: a model call must reserve more than the balance");
      const a = await countMessages(gw.url, { model: M.claude, messages: [{ role: "user", content: SHORT }] }, { "x-api-key": TINY_KEY });
      assert.equal(a.status, 200, a.text);
      assert.equal(a.json.input_tokens, ANTHROPIC_FAKE_COUNT);
      const b = await countMessages(gw.url, { model: M.gpt, messages: [{ role: "user", content: SHORT }] }, { "x-api-key": TINY_KEY });
      assert.equal(b.status, 200, b.text);
      const g = await countGemini(gw.url, M.gemini, { contents: [{ parts: [{ text: SHORT }] }] }, { "x-goog-api-key": TINY_KEY });
      assert.equal(g.status, 200, g.text);
      assert.equal(g.json.totalTokens, GEMINI_FAKE_COUNT);
      for (const r of [a, b, g]) assert.equal((await entryOf(gw.store, String(r.headers["x-gateway-request-id"]))).costNano, 0n);
      assert.equal(gw.store.spentByUser("tiny"), 0n);
      assert.equal(gw.ledger.reservedByUser("tiny"), 0n);
      assert.equal(r0(a.headers["x-gateway-cost"]), undefined, "no cost header on a free answer");
    });
  });

  describe("errors in the route's shape", () => {
    test("401 without a valid token", async () => {
      const bad = new Anthropic({ apiKey: "sk-gw-wrong", baseURL: gw.url, maxRetries: 0 });
      await assert.rejects(bad.messages.countTokens({ model: M.claude, messages: [{ role: "user", content: SHORT }] }),
        (e: unknown) => e instanceof Anthropic.AuthenticationError && e.status === 401);
      const none = await rawRequest(`${gw.url}/v1/messages/count_tokens`, {
        method: "POST", headers: { "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify({ model: M.claude, messages: [] }),
      });
      assert.equal(none.status, 401);
      assert.equal(none.json.type, "error");
      assert.equal(none.json.error.type, "authentication_error");
      const badAi = new GoogleGenAI({ apiKey: "sk-gw-wrong", httpOptions: { baseUrl: gw.url } });
      await assert.rejects(badAi.models.countTokens({ model: M.gemini, contents: SHORT }), (e: unknown) => {
        assert.ok(e instanceof ApiError, String(e));
        assert.equal(e.status, 401);
        assert.match(e.message, /UNAUTHENTICATED/);
        return true;
      });
    });

    test("403 for a model outside the token's allowlist; its allowed model counts", async () => {
      const before = received(f);
      const a = await countMessages(gw.url, { model: M.claude, messages: [{ role: "user", content: SHORT }] }, { "x-api-key": NARROW_KEY });
      assert.equal(a.status, 403, a.text);
      assert.equal(a.json.error.type, "permission_error");
      assert.equal(a.json.error.code, "model_not_allowed");
      const g = await countGemini(gw.url, M.gemini, { contents: [{ parts: [{ text: SHORT }] }] }, { "x-goog-api-key": NARROW_KEY });
      assert.equal(g.status, 403, g.text);
      assert.equal(g.json.error.status, "PERMISSION_DENIED");
      assert.equal(received(f), before);
      const ok = await countMessages(gw.url, { model: M.gpt, messages: [{ role: "user", content: SHORT }] }, { "x-api-key": NARROW_KEY });
      assert.equal(ok.status, 200, ok.text);
    });

    test("404 for an unknown model", async () => {
      await assert.rejects(claude.messages.countTokens({ model: "claude-nope", messages: [{ role: "user", content: SHORT }] }), (e: unknown) => {
        assert.ok(e instanceof Anthropic.NotFoundError, String(e));
        assert.equal((e.error as { error?: { type?: string } }).error?.type, "not_found_error");
        return true;
      });
      await assert.rejects(ai.models.countTokens({ model: "gemini-nope", contents: SHORT }), (e: unknown) => {
        assert.ok(e instanceof ApiError, String(e));
        assert.equal(e.status, 404);
        assert.match(e.message, /NOT_FOUND/);
        return true;
      });
    });

    test("400 for a bad body, naming the field", async () => {
      const before = received(f);
      const noMessages = await countMessages(gw.url, { model: M.claude });
      assert.equal(noMessages.status, 400);
      assert.equal(noMessages.json.error.type, "invalid_request_error");
      assert.match(noMessages.json.error.message, /messages/);
      const notArray = await countMessages(gw.url, { model: M.claude, messages: "hi" });
      assert.equal(notArray.status, 400);
      assert.match(notArray.json.error.message, /messages: must be an array/);
      const notJson = await rawRequest(`${gw.url}/v1/messages/count_tokens`, {
        method: "POST", headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" }, body: "{",
      });
      assert.equal(notJson.status, 400);
      assert.equal(notJson.json.type, "error");
      const noModel = await countMessages(gw.url, { messages: [{ role: "user", content: SHORT }] });
      assert.equal(noModel.status, 400);
      assert.match(noModel.json.error.message, /model/);
      const noContents = await countGemini(gw.url, M.gemini, {});
      assert.equal(noContents.status, 400);
      assert.equal(noContents.json.error.status, "INVALID_ARGUMENT");
      assert.match(noContents.json.error.message, /contents/);
      const both = await countGemini(gw.url, M.gemini, { contents: [], generateContentRequest: { contents: [] } });
      assert.equal(both.status, 400);
      assert.match(both.json.error.message, /generateContentRequest/);
      const badPart = await countGemini(gw.url, M.gpt, { contents: [{ role: "robot", parts: [{ text: "x" }] }] });
      assert.equal(badPart.status, 400);
      assert.match(badPart.json.error.message, /contents\[0\]\.role/);
      assert.equal(received(f), before, "nothing reached an upstream");
    });
  });
});

describe("token counting is rate-limited like any request", () => {
  let f: Fakes;
  let gw: TestGateway;

  before(async () => {
    f = await startFakes();
    gw = await startTestGateway(gatewayYaml(f, { limits: { request_rate: { max: 3, per: "1m" } } }));
  });
  after(async () => {
    await gw?.close();
    await Promise.all(Object.values(f ?? {}).map((x) => x.close()));
    destroyAgents();
  });

  test("request_rate counts counts (pass-through and estimate); the next is a 429 in each route's shape", async () => {
    const body = { model: M.claude, messages: [{ role: "user", content: SHORT }] };
    assert.equal((await countMessages(gw.url, body)).status, 200);
    assert.equal((await countMessages(gw.url, { ...body, model: M.gpt })).status, 200);
    assert.equal((await countGemini(gw.url, M.gemini, { contents: [{ parts: [{ text: SHORT }] }] })).status, 200);
    const before = received(f);
    const a = await countMessages(gw.url, body);
    assert.equal(a.status, 429, a.text);
    assert.equal(a.json.type, "error");
    assert.equal(a.json.error.type, "rate_limit_error");
    assert.match(a.json.error.message, /3 requests per 1 minute/);
    assert.ok(Number(a.headers["retry-after"]) > 0);
    const g = await countGemini(gw.url, M.gemini, { contents: [{ parts: [{ text: SHORT }] }] });
    assert.equal(g.status, 429);
    assert.equal(g.json.error.status, "RESOURCE_EXHAUSTED");
    assert.equal(received(f), before, "refused before any upstream call");
  });
});

/** A recorded client request (test/fixtures/clients/<client>/<n>-<what>.json). */
interface Recorded {
  readonly file: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string>;
  readonly body: Obj;
}

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/clients");

function recorded(): Recorded[] {
  return fs.readdirSync(FIXTURES, { withFileTypes: true }).filter((d) => d.isDirectory()).flatMap((d) =>
    fs.readdirSync(path.join(FIXTURES, d.name)).filter((n) => n.endsWith(".json")).map((n) => {
      const fx = JSON.parse(fs.readFileSync(path.join(FIXTURES, d.name, n), "utf8"));
      return { file: `${d.name}/${n}`, path: fx.path, query: fx.query ?? {}, headers: fx.headers ?? {}, body: fx.body ?? {} };
    }));
}

/** Fields of a messages request that count_tokens does not take. */
const NOT_COUNTED = ["max_tokens", "stream", "metadata", "stop_sequences", "temperature", "top_p", "top_k", "service_tier"];

/** The count a client would send for a recorded request: a recorded count as it is; a
 * recorded messages call without its generation fields; a generate call's contents. */
function countOf(fx: Recorded): { route: "messages" | "generate"; body: Obj } | undefined {
  if (fx.path === "/v1/messages/count_tokens") return { route: "messages", body: fx.body };
  if (fx.path === "/v1/messages") return { route: "messages", body: Object.fromEntries(Object.entries(fx.body).filter(([k]) => !NOT_COUNTED.includes(k))) };
  if (/:countTokens$/.test(fx.path)) return { route: "generate", body: fx.body };
  if (/:(stream)?[gG]enerateContent$/.test(fx.path)) return { route: "generate", body: { contents: fx.body.contents } };
  return undefined;
}

/** The recorded headers a replay sends: the client's own, but its credential is ours. */
function replayHeaders(fx: Recorded, auth: Record<string, string>): Record<string, string> {
  const drop = new Set(["connection", "accept-encoding", "content-length", "host"]);
  return { ...Object.fromEntries(Object.entries(fx.headers).filter(([k]) => !drop.has(k))), "content-type": "application/json", ...auth };
}

describe("token counting: the recorded clients' requests", () => {
  let f: Fakes;
  let gw: TestGateway;
  const cases = recorded().flatMap((fx) => {
    const count = countOf(fx);
    return count ? [{ fx, ...count }] : [];
  });

  before(async () => {
    f = await startFakes();
    gw = await startTestGateway(gatewayYaml(f));
  });
  after(async () => {
    await gw?.close();
    await Promise.all(Object.values(f ?? {}).map((x) => x.close()));
    destroyAgents();
  });

  test("Claude Code and Gemini CLI recordings are there to replay", () => {
    assert.ok(cases.some((c) => c.route === "messages"), "a recorded messages-protocol request");
    assert.ok(cases.some((c) => c.route === "generate"), "a recorded generate-content request");
  });

  for (const c of cases) {
    test(`${c.fx.file}: counted by the channel of its protocol, and estimated for the others`, async (t) => {
      const query = new URLSearchParams(c.fx.query).toString();
      const send = (model: string) => c.route === "messages"
        ? rawRequest(`${gw.url}/v1/messages/count_tokens${query ? "?" + query : ""}`, {
          method: "POST", headers: replayHeaders(c.fx, { "x-api-key": TOKEN }), body: JSON.stringify({ ...c.body, model }),
        })
        : rawRequest(`${gw.url}/v1beta/models/${model}:countTokens`, {
          method: "POST", headers: replayHeaders(c.fx, { "x-goog-api-key": TOKEN }), body: JSON.stringify(c.body),
        });
      const native = await send(c.route === "messages" ? M.claude : M.gemini);
      assert.equal(native.status, 200, native.text);
      assert.deepEqual(native.json, c.route === "messages" ? { input_tokens: ANTHROPIC_FAKE_COUNT }
        : { totalTokens: GEMINI_FAKE_COUNT, promptTokensDetails: [{ modality: "TEXT", tokenCount: GEMINI_FAKE_COUNT }] });
      const got = (c.route === "messages" ? f.an.received : f.gm.received).at(-1)!;
      assert.deepEqual(got.body.messages ?? got.body.contents, c.body.messages ?? c.body.contents, "the body went as sent");
      // The same request as a model call, for a model on another protocol's channel.
      const convert = (model: string) => c.route === "messages"
        ? rawRequest(`${gw.url}/v1/messages`, {
          method: "POST", headers: replayHeaders(c.fx, { "x-api-key": TOKEN }), body: JSON.stringify({ ...c.body, model, max_tokens: 64 }),
        })
        : rawRequest(`${gw.url}/v1beta/models/${model}:generateContent`, {
          method: "POST", headers: replayHeaders(c.fx, { "x-goog-api-key": TOKEN }), body: JSON.stringify(c.body),
        });
      for (const model of c.route === "messages" ? [M.gpt, M.gemini] : [M.claude, M.gpt]) {
        const estimate = await send(model);
        if (estimate.status !== 200) {
          // The estimate reads the request as a conversion does: it refuses only what the
          // conversion refuses (a field the decoders learn to carry or drop counts too).
          assert.equal(estimate.status, 400, `${model}: ${estimate.text}`);
          const converted = await convert(model);
          assert.equal(converted.status, 400, `${model}: the count was refused (${estimate.text}) but the conversion served it`);
          assert.equal(converted.json.error.message, estimate.json.error.message);
          t.diagnostic(`${model}: refused, as its conversion is: ${estimate.json.error.message}`);
          continue;
        }
        assert.equal(estimate.headers["x-gateway-token-count"], "estimate");
        const n = c.route === "messages" ? estimate.json.input_tokens : estimate.json.totalTokens;
        assert.ok(Number.isInteger(n) && n > 0, String(n));
      }
    });
  }
});

/** A header's single value. */
function r0(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
