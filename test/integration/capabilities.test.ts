// models.<name>.capabilities end to end: a request is fitted to what its model supports on
// every route. Reasoning fields toward a model without reasoning are dropped and named
// (Claude Code sends thinking / reasoning_effort to whatever model it is given), an output
// limit above the model's maximum is clamped and named, and the reservation is of the
// clamped limit. The fake OpenAI refuses both as OpenAI does, so relaying them fails.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { M, startWorld, type World } from "../helpers/protocol-world.js";
import { CHANNEL_KEY, channel, rawRequest, TOKEN, type RawResponse } from "./support.js";

/** A chat model without reasoning whose provider allows 16384 output tokens. */
const PLAIN = "gpt-4o-plain";
const MAX = 16384;
/** A Gemini model declared without reasoning. */
const GEMINI_PLAIN = "gemini-2.0-flash-plain";

const post = (w: World, path: string, body: unknown, headers: Record<string, string>): Promise<RawResponse> =>
  rawRequest(`${w.gw.url}${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
const chat = (w: World, body: unknown) => post(w, "/v1/chat/completions", body, { authorization: `Bearer ${TOKEN}` });
const messages = (w: World, body: unknown) => post(w, "/v1/messages", body, { "x-api-key": TOKEN, "anthropic-version": "2023-06-01" });

function dropped(res: RawResponse): string[] {
  const v = res.headers["x-gateway-dropped-fields"];
  return typeof v === "string" ? v.split(/,\s*/) : [];
}
const requestId = (res: RawResponse): string => String(res.headers["x-gateway-request-id"]);

describe("capability-aware fields", () => {
  let w: World;
  let plain: FakeOpenAI;

  before(async () => {
    plain = await startFakeOpenAI({ name: "plain", keys: [CHANNEL_KEY], models: { [PLAIN]: { reasoning: false, maxOutput: MAX } } });
    w = await startWorld({
      extraChannels: (urls) => [
        channel("oa-plain", plain.url, { protocol: "openai", models: [PLAIN] }),
        channel("gm-plain", urls.gemini, { protocol: "gemini", models: [GEMINI_PLAIN] }),
      ],
      extraModels: {
        // Output priced so that 2M reserved output tokens cost more than alice's credit (100).
        [PLAIN]: { endpoint: ["chat", "responses"], price: { input: 1, output: 60 }, capabilities: { reasoning: false, tools: true, vision: true, max_output: MAX } },
        [GEMINI_PLAIN]: { price: { input: 0.1, output: 0.4 }, capabilities: { reasoning: false } },
      },
    });
  });
  after(async () => {
    await w?.close();
    await plain?.close();
  });

  test("chat pass-through: reasoning_effort toward a model without reasoning is dropped and named, not refused upstream", async () => {
    const res = await chat(w, { model: PLAIN, reasoning_effort: "high", messages: [{ role: "user", content: "hi" }] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(dropped(res), ["reasoning_effort"]);
    const sent = plain.received.at(-1)!.body;
    assert.equal(sent.reasoning_effort, undefined);
    assert.deepEqual(sent.messages, [{ role: "user", content: "hi" }]);
    assert.deepEqual((await w.entry(requestId(res))).droppedFields, ["reasoning_effort"]);
  });

  test("streamed pass-through: the dropped field is named in the stream's head", async () => {
    const res = await chat(w, { model: PLAIN, stream: true, reasoning_effort: "high", messages: [{ role: "user", content: "hi" }] });
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /data: \[DONE\]/);
    assert.deepEqual(dropped(res), ["reasoning_effort"]);
    assert.equal(plain.received.at(-1)!.body.reasoning_effort, undefined);
  });

  test("Claude Code through /v1/messages toward a model without reasoning: thinking dropped, max_tokens clamped", async () => {
    const res = await messages(w, {
      model: PLAIN, max_tokens: 32000, thinking: { type: "enabled", budget_tokens: 4096 },
      messages: [{ role: "user", content: "list the files" }],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(dropped(res), ["thinking", `max_tokens (clamped to ${MAX})`]);
    const sent = plain.received.at(-1)!.body;
    assert.equal(sent.reasoning_effort, undefined);
    assert.equal(sent.max_completion_tokens ?? sent.max_tokens, MAX);
    assert.deepEqual((await w.entry(requestId(res))).droppedFields, ["thinking", `max_tokens (clamped to ${MAX})`]);
  });

  test("an output limit above max_output is clamped, and the reservation is of the clamped limit", async () => {
    // 2M output tokens at 60/1M would reserve 120 > alice's credit: refused (402) unclamped.
    const res = await chat(w, { model: PLAIN, max_tokens: 2_000_000, messages: [{ role: "user", content: "hi" }] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(dropped(res), [`max_tokens (clamped to ${MAX})`]);
    assert.equal(plain.received.at(-1)!.body.max_tokens, MAX);
  });

  test("a limit within max_output and no reasoning fields: the client's bytes go as they are, nothing named", async () => {
    const body = `{"model":"${PLAIN}",  "max_tokens": 100, "messages":[{"role":"user","content":"hi"}]}`;
    const res = await rawRequest(`${w.gw.url}/v1/chat/completions`, {
      method: "POST", body, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers["x-gateway-dropped-fields"], undefined);
    assert.equal(plain.received.at(-1)!.raw.toString("utf8"), body);
  });

  test("generate-content pass-through: thinkingConfig toward a Gemini model without reasoning is dropped and named", async () => {
    const res = await post(w, `/v1beta/models/${GEMINI_PLAIN}:generateContent`, {
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
      generationConfig: { temperature: 0.2, thinkingConfig: { thinkingBudget: 1024 } },
    }, { "x-goog-api-key": TOKEN });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(dropped(res), ["generationConfig.thinkingConfig"]);
    assert.deepEqual(w.sent("gemini").generationConfig, { temperature: 0.2, maxOutputTokens: 4096 });
  });

  test("without capabilities nothing changes: reasoning_effort reaches the provider", async () => {
    const res = await chat(w, { model: M.openai, reasoning_effort: "high", messages: [{ role: "user", content: "hi" }] });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers["x-gateway-dropped-fields"], undefined);
    assert.equal(w.sent("openai").reasoning_effort, "high");
  });

  // Each client protocol's reasoning field and output limit, toward the same model without
  // reasoning (converted to chat-completions but for the chat client's pass-through).
  const clients: readonly { name: string; send: () => Promise<RawResponse>; named: string[] }[] = [
    { name: "chat-completions", named: ["reasoning_effort", `max_completion_tokens (clamped to ${MAX})`],
      send: () => chat(w, { model: PLAIN, reasoning_effort: "low", max_completion_tokens: 50_000, messages: [{ role: "user", content: "hi" }] }) },
    { name: "messages", named: ["thinking", `max_tokens (clamped to ${MAX})`],
      send: () => messages(w, { model: PLAIN, max_tokens: 50_000, thinking: { type: "enabled", budget_tokens: 2048 }, messages: [{ role: "user", content: "hi" }] }) },
    { name: "responses", named: ["reasoning", `max_output_tokens (clamped to ${MAX})`],
      send: () => post(w, "/v1/responses", { model: PLAIN, reasoning: { effort: "high" }, max_output_tokens: 50_000, input: "hi" }, { authorization: `Bearer ${TOKEN}` }) },
    { name: "generate-content", named: ["generationConfig.thinkingConfig", `generationConfig.maxOutputTokens (clamped to ${MAX})`],
      send: () => post(w, `/v1beta/models/${PLAIN}:generateContent`, {
        contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 50_000, thinkingConfig: { thinkingBudget: 8192 } },
      }, { "x-goog-api-key": TOKEN }) },
  ];
  for (const client of clients) {
    test(`${client.name} client toward a model without reasoning: reasoning dropped, limit clamped, both named`, async () => {
      const res = await client.send();
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(dropped(res).filter((n) => client.named.includes(n)), client.named);
      const sent = plain.received.at(-1)!.body;
      assert.equal(sent.reasoning_effort, undefined);
      assert.equal(sent.max_completion_tokens ?? sent.max_tokens, MAX);
    });
  }
});
