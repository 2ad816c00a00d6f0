// Self-test of the fake upstreams: raw fetch sees the documented wire format, and the
// official SDKs (@anthropic-ai/sdk, @google/genai) parse what the fakes send.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI, HarmBlockThreshold, HarmCategory } from "@google/genai";
import {
  anthropicFakeCacheUsage, anthropicFakeUsage, LONG_CONTEXT_BETA, LONG_CONTEXT_REFUSAL,
  startFakeAnthropic, type FakeAnthropic, type Script as AScript,
} from "../helpers/fake-anthropic.js";
import {
  fakePngBase64, geminiFakeBlockedUsage, geminiFakeThinkingUsage, geminiFakeUsage, SAFETY_ECHO_HEADER,
  startFakeGemini, type FakeGemini, type Script as GScript,
} from "../helpers/fake-gemini.js";

const T = { timeout: 10_000 };

/** Parses `event:`/`data:` SSE text into [event name, parsed data] pairs. */
function parseSse(text: string, sep: string): [string, Record<string, unknown>][] {
  return text.split(sep).filter((b) => b.trim() !== "").map((block) => {
    const lines = block.split(/\r?\n/);
    const name = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "";
    const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    return [name, JSON.parse(data) as Record<string, unknown>];
  });
}

describe("fake Anthropic", () => {
  let fake: FakeAnthropic;
  let client: Anthropic;
  const scripts: AScript[] = [];
  before(async () => {
    fake = await startFakeAnthropic({
      keys: ["sk-ant-good"], name: "claude-fake", refuseBetas: [LONG_CONTEXT_BETA],
      script: () => scripts.shift() ?? { kind: "ok" },
    });
    client = new Anthropic({ apiKey: "sk-ant-good", baseURL: fake.url, maxRetries: 0, timeout: 5_000 });
  });
  after(() => fake.close());

  const raw = (body: object, headers: Record<string, string> = {}) => fetch(`${fake.url}/v1/messages`, {
    method: "POST", body: JSON.stringify(body),
    headers: { "content-type": "application/json", "x-api-key": "sk-ant-good", "anthropic-version": "2023-06-01", ...headers },
    signal: AbortSignal.timeout(5_000),
  });
  const req = { model: "claude-sonnet-5-5", max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] };

  test("auth, version and beta refusals use Anthropic error bodies", T, async () => {
    let res = await raw(req, { "x-api-key": "sk-ant-bad" });
    assert.equal(res.status, 401);
    const body = await res.json() as { type: string; error: { type: string; message: string }; request_id: string };
    assert.equal(body.type, "error");
    assert.deepEqual(body.error, { type: "authentication_error", message: "invalid x-api-key" });
    assert.match(body.request_id, /^req_/);

    res = await fetch(`${fake.url}/v1/messages`, { method: "POST", body: JSON.stringify(req), headers: { "x-api-key": "sk-ant-good" } });
    assert.equal(res.status, 400);
    assert.equal((await res.json() as { error: { type: string } }).error.type, "invalid_request_error");

    res = await raw(req, { "anthropic-beta": `foo-2025-01-01, ${LONG_CONTEXT_BETA}` });
    assert.equal(res.status, 400);
    assert.equal((await res.json() as { error: { message: string } }).error.message, LONG_CONTEXT_REFUSAL);
    assert.deepEqual(fake.received.at(-1)!.betas, ["foo-2025-01-01", LONG_CONTEXT_BETA]);

    await assert.rejects(client.messages.create(req, { headers: { "anthropic-beta": LONG_CONTEXT_BETA } }),
      (e: unknown) => e instanceof Anthropic.BadRequestError && e.type === "invalid_request_error");
    // 2026-10-21 removed temperature/top_p/top_k; 2023-06-01 still takes them.
    await assert.rejects(client.messages.create({ ...req, temperature: 0.2 } as typeof req),
      (e: unknown) => e instanceof Anthropic.BadRequestError && /temperature/.test(e.apiMessage ?? ""));
    assert.equal((await raw({ ...req, temperature: 0.2 })).status, 200);
    scripts.push({ kind: "error", status: 529 });
    await assert.rejects(client.messages.create(req), (e: unknown) =>
      e instanceof Anthropic.APIError && e.status === 529 && e.type === "overloaded_error" && /^req_/.test(e.requestID ?? ""));
  });

  test("a tool_result must answer a tool_use of the assistant turn right before it, as the API says", T, async () => {
    const use = { type: "tool_use", id: "toolu_1", name: "w", input: {} };
    const result = (id: string) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "12 °C" }] });
    const ask = { role: "user", content: "weather?" };
    assert.equal((await raw({ ...req, messages: [ask, { role: "assistant", content: [use] }, result("toolu_1")] })).status, 200);
    const res = await raw({ ...req, messages: [ask, { role: "assistant", content: [use] }, result("toolu_2")] });
    assert.equal(res.status, 400);
    const body = await res.json() as { error: { type: string; message: string } };
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /^messages\.2\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2\./);
    assert.equal((await raw({ ...req, messages: [ask, result("toolu_1")] })).status, 400);
  });

  test("raw non-stream reply is a Message object", T, async () => {
    const res = await raw(req);
    assert.equal(res.status, 200);
    const m = await res.json() as Record<string, unknown>;
    assert.match(String(m.id), /^msg_/);
    assert.equal(m.type, "message");
    assert.equal(m.role, "assistant");
    assert.equal(m.model, "claude-sonnet-5-5");
    assert.deepEqual(m.content, [{ type: "text", text: "claude-fake says: hi" }]);
    assert.equal(m.stop_reason, "end_turn");
    assert.equal(m.stop_sequence, null);
    assert.deepEqual(m.usage, { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 5, service_tier: "standard" });
    const r = fake.received.at(-1)!;
    assert.equal(r.path, "/v1/messages");
    assert.equal(r.headers["anthropic-version"], "2023-06-01");
  });

  test("raw stream: named events in the documented order", T, async () => {
    scripts.push({ kind: "tool_use", name: "get_weather", input: { city: "Paris", unit: "c" } });
    const res = await raw({ ...req, stream: true });
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = parseSse(await res.text(), "\n\n");
    for (const [name, data] of events) assert.equal(data.type, name);
    const names = events.map(([n]) => n);
    assert.deepEqual([names[0], names[1], names[2]], ["message_start", "ping", "content_block_start"]);
    assert.deepEqual(names.slice(-3), ["content_block_stop", "message_delta", "message_stop"]);
    const start = events[0][1].message as { usage: { input_tokens: number; output_tokens: number }; content: unknown[] };
    assert.equal(start.usage.input_tokens, anthropicFakeUsage.input_tokens);
    assert.equal(start.usage.output_tokens, 1);
    assert.deepEqual(start.content, []);
    const fragments = events.filter(([n]) => n === "content_block_delta")
      .map(([, d]) => d.delta as { type: string; partial_json: string });
    assert.ok(fragments.filter((f) => f.partial_json !== "").length >= 2);
    assert.ok(fragments.every((f) => f.type === "input_json_delta"));
    assert.deepEqual(JSON.parse(fragments.map((f) => f.partial_json).join("")), { city: "Paris", unit: "c" });
    assert.deepEqual(events.at(-2)![1], { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } });
  });

  test("SDK non-stream: text, tool use, thinking, cache usage", T, async () => {
    const m = await client.messages.create(req);
    assert.equal(m.content[0].type === "text" && m.content[0].text, "claude-fake says: hi");
    assert.equal(m.usage.input_tokens, anthropicFakeUsage.input_tokens);
    assert.equal(m.usage.output_tokens, anthropicFakeUsage.output_tokens);

    scripts.push({ kind: "tool_use", name: "get_weather", input: { city: "Paris" } });
    const t = await client.messages.create(req);
    assert.equal(t.stop_reason, "tool_use");
    const tu = t.content.find((b) => b.type === "tool_use");
    assert.ok(tu && tu.type === "tool_use" && tu.name === "get_weather");
    assert.deepEqual(tu.input, { city: "Paris" });

    scripts.push({ kind: "thinking", thinking: "hmm", text: "42" });
    const th = await client.messages.create({ ...req, thinking: { type: "enabled", budget_tokens: 1024 } });
    assert.deepEqual(th.content.map((b) => b.type), ["thinking", "text"]);
    assert.ok(th.content[0].type === "thinking" && th.content[0].thinking === "hmm" && th.content[0].signature.length > 0);

    scripts.push({ kind: "cache" });
    const c = await client.messages.create(req);
    assert.equal(c.usage.cache_creation_input_tokens, anthropicFakeCacheUsage.cache_creation_input_tokens);
    assert.equal(c.usage.cache_read_input_tokens, anthropicFakeCacheUsage.cache_read_input_tokens);

    // SDK 1.x targets API version 2026-10-21 and sends the key as a Bearer token, not x-api-key.
    const h = fake.received.at(-1)!.headers;
    assert.equal(h.authorization, "Bearer sk-ant-good");
    assert.equal(h["x-api-key"], undefined);
    assert.equal(h["anthropic-version"], "2026-10-21");
  });

  test("SDK stream: text, tool use, thinking accumulate into final messages", T, async () => {
    scripts.push({ kind: "ok", text: "Hello there, world", chunks: 3, chunkDelayMs: 2 });
    const s = client.messages.stream(req);
    const deltas: string[] = [];
    s.on("text", (d) => deltas.push(d));
    const m = await s.finalMessage();
    assert.deepEqual(deltas.length, 3);
    assert.equal(m.content[0].type === "text" && m.content[0].text, "Hello there, world");
    assert.equal(m.usage.input_tokens, anthropicFakeUsage.input_tokens);
    assert.equal(m.usage.output_tokens, anthropicFakeUsage.output_tokens);

    scripts.push({ kind: "tool_use", name: "lookup", input: { q: "x", n: [1, 2] }, text: "Let me look." });
    const t = await client.messages.stream(req).finalMessage();
    assert.equal(t.stop_reason, "tool_use");
    assert.deepEqual(t.content.map((b) => b.type), ["text", "tool_use"]);
    assert.deepEqual(t.content[1].type === "tool_use" && t.content[1].input, { q: "x", n: [1, 2] });

    scripts.push({ kind: "thinking", thinking: "deep thought", text: "done", signature: "sig123" });
    const th = await client.messages.stream({ ...req, thinking: { type: "enabled", budget_tokens: 1024 } }).finalMessage();
    assert.ok(th.content[0].type === "thinking" && th.content[0].thinking === "deep thought" && th.content[0].signature === "sig123");
    assert.equal(th.content[1].type === "text" && th.content[1].text, "done");

    // Raw SDK event iteration, and an error event mid-stream.
    scripts.push({ kind: "error", status: 529, inStream: true });
    const events: string[] = [];
    await assert.rejects((async () => {
      for await (const e of await client.messages.create({ ...req, stream: true })) events.push(e.type);
    })(), (e: unknown) => e instanceof Anthropic.APIError);
    assert.deepEqual(events, ["message_start"]);
  });

  test("hang and destroy", T, async () => {
    scripts.push({ kind: "destroy" });
    await assert.rejects(raw(req));
    scripts.push({ kind: "hang" });
    await assert.rejects(fetch(`${fake.url}/v1/messages`, { method: "POST", body: "{}", headers: { "anthropic-version": "2023-06-01", "x-api-key": "sk-ant-good" }, signal: AbortSignal.timeout(100) }));
  });
});

describe("fake Gemini", () => {
  let fake: FakeGemini;
  let ai: GoogleGenAI;
  const scripts: GScript[] = [];
  before(async () => {
    fake = await startFakeGemini({ keys: ["AIza-good"], name: "gemini-fake", script: () => scripts.shift() ?? { kind: "ok" } });
    ai = new GoogleGenAI({ apiKey: "AIza-good", httpOptions: { baseUrl: fake.url, timeout: 5_000 } });
  });
  after(() => fake.close());

  const model = "gemini-2.5-flash";
  const contents = [{ role: "user", parts: [{ text: "hi" }] }];
  const raw = (action: string, body: object, headers: Record<string, string> = { "x-goog-api-key": "AIza-good" }, query = "") =>
    fetch(`${fake.url}/v1beta/models/${model}:${action}${query}`, {
      method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers }, signal: AbortSignal.timeout(5_000),
    });

  test("auth: header or ?key=, Google error bodies", T, async () => {
    let res = await raw("generateContent", { contents }, { "x-goog-api-key": "nope" });
    assert.equal(res.status, 400);
    const body = await res.json() as { error: { code: number; message: string; status: string; details: { "@type": string; reason?: string; domain?: string }[] } };
    assert.equal(body.error.code, 400);
    assert.equal(body.error.message, "API key not valid. Please pass a valid API key.");
    assert.equal(body.error.status, "INVALID_ARGUMENT");
    assert.equal(body.error.details[0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    assert.equal(body.error.details[0].reason, "API_KEY_INVALID");
    assert.equal(body.error.details[0].domain, "googleapis.com");

    res = await raw("generateContent", { contents }, {});
    assert.equal(res.status, 403);
    assert.equal((await res.json() as { error: { status: string } }).error.status, "PERMISSION_DENIED");

    res = await raw("generateContent", { contents }, {}, "?key=AIza-good");
    assert.equal(res.status, 200);
    assert.equal(fake.received.at(-1)!.key, "AIza-good");

    const bad = new GoogleGenAI({ apiKey: "nope", httpOptions: { baseUrl: fake.url } });
    await assert.rejects(bad.models.generateContent({ model, contents: "hi" }),
      (e: unknown) => e instanceof ApiError && e.status === 400 && e.message.includes("API_KEY_INVALID"));
    scripts.push({ kind: "error", status: 429 });
    await assert.rejects(ai.models.generateContent({ model, contents: "hi" }),
      (e: unknown) => e instanceof ApiError && e.status === 429 && e.message.includes("RESOURCE_EXHAUSTED"));
  });

  test("raw non-stream reply is a GenerateContentResponse", T, async () => {
    const res = await raw("generateContent", { contents });
    const b = await res.json() as Record<string, unknown>;
    assert.deepEqual(b.candidates, [{ content: { parts: [{ text: "gemini-fake says: hi" }], role: "model" }, finishReason: "STOP", index: 0 }]);
    assert.deepEqual(b.usageMetadata, { ...geminiFakeUsage, promptTokensDetails: [{ modality: "TEXT", tokenCount: 12 }] });
    assert.equal(b.modelVersion, model);
    assert.equal(typeof b.responseId, "string");
    const r = fake.received.at(-1)!;
    assert.deepEqual([r.model, r.action, r.apiVersion], [model, "generateContent", "v1beta"]);
    assert.equal(res.headers.get(SAFETY_ECHO_HEADER), "false");
  });

  test("raw stream: CRLF-delimited data chunks, usage on each, finishReason on the last", T, async () => {
    scripts.push({ kind: "ok", text: "abcdef", chunks: 3 });
    const res = await raw("streamGenerateContent", { contents, safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }] }, undefined, "?alt=sse");
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    assert.equal(res.headers.get(SAFETY_ECHO_HEADER), "true");
    const text = await res.text();
    assert.ok(text.endsWith("\r\n\r\n"));
    assert.ok(!/[^\r]\n/.test(text), "only CRLF line ends");
    const chunks = parseSse(text, "\r\n\r\n").map(([, d]) => d as { candidates: { content: { parts: { text: string }[] }; finishReason?: string }[]; usageMetadata: Record<string, number> });
    assert.equal(chunks.length, 3);
    assert.equal(chunks.map((c) => c.candidates[0].content.parts[0].text).join(""), "abcdef");
    assert.ok(chunks.every((c) => c.usageMetadata.promptTokenCount === 12));
    assert.deepEqual(chunks.map((c) => c.candidates[0].finishReason), [undefined, undefined, "STOP"]);
    assert.equal(chunks[2].usageMetadata.totalTokenCount, geminiFakeUsage.totalTokenCount);
    assert.deepEqual(fake.received.at(-1)!.safetySettings, [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }]);
  });

  test("raw safety and image replies", T, async () => {
    scripts.push({ kind: "safety" });
    let b = await (await raw("generateContent", { contents })).json() as { candidates: { finishReason: string; content?: unknown; safetyRatings: unknown[] }[] };
    assert.equal(b.candidates[0].finishReason, "SAFETY");
    assert.equal(b.candidates[0].content, undefined);
    assert.ok(b.candidates[0].safetyRatings.length > 0);

    scripts.push({ kind: "safety", prompt: true });
    const p = await (await raw("generateContent", { contents })).json() as { candidates?: unknown; promptFeedback: { blockReason: string }; usageMetadata: unknown };
    assert.equal(p.candidates, undefined);
    assert.equal(p.promptFeedback.blockReason, "SAFETY");
    assert.deepEqual(p.usageMetadata, { ...geminiFakeBlockedUsage, promptTokensDetails: [{ modality: "TEXT", tokenCount: 12 }] });

    scripts.push({ kind: "image" });
    const img = await ai.models.generateContent({ model: "gemini-2.5-flash-image", contents: "draw" });
    assert.equal(img.data, fakePngBase64);
    assert.equal(img.candidates?.[0].content?.parts?.[0].inlineData?.mimeType, "image/png");
    assert.equal(fake.received.at(-1)!.model, "gemini-2.5-flash-image");
  });

  test("SDK non-stream: text, function call, thinking, safety settings pass through", T, async () => {
    const r = await ai.models.generateContent({
      model, contents: "hi",
      config: { safetySettings: [{ category: HarmCategory.HARM_CATEGORY_HATE_SPEECH, threshold: HarmBlockThreshold.BLOCK_ONLY_HIGH }] },
    });
    assert.equal(r.text, "gemini-fake says: hi");
    assert.equal(r.usageMetadata?.promptTokenCount, geminiFakeUsage.promptTokenCount);
    assert.equal(r.usageMetadata?.candidatesTokenCount, geminiFakeUsage.candidatesTokenCount);
    assert.equal(r.usageMetadata?.totalTokenCount, geminiFakeUsage.totalTokenCount);
    assert.deepEqual(fake.received.at(-1)!.safetySettings, [{ category: "HARM_CATEGORY_HATE_SPEECH", threshold: "BLOCK_ONLY_HIGH" }]);

    scripts.push({ kind: "function_call", name: "get_weather", args: { city: "Paris" } });
    const f = await ai.models.generateContent({ model, contents: "weather?" });
    assert.deepEqual(f.functionCalls?.map((c) => [c.name, c.args]), [["get_weather", { city: "Paris" }]]);

    scripts.push({ kind: "thinking", thought: "pondering", text: "42" });
    const th = await ai.models.generateContent({ model, contents: "q", config: { thinkingConfig: { includeThoughts: true } } });
    assert.equal(th.text, "42");
    assert.equal(th.candidates?.[0].content?.parts?.[0].thought, true);
    assert.equal(th.usageMetadata?.thoughtsTokenCount, geminiFakeThinkingUsage.thoughtsTokenCount);

    scripts.push({ kind: "safety" });
    const s = await ai.models.generateContent({ model, contents: "bad" });
    assert.equal(s.candidates?.[0].finishReason, "SAFETY");
    assert.equal(s.text, undefined);
  });

  test("SDK stream: text over chunks, function call, thinking, usage", T, async () => {
    scripts.push({ kind: "ok", text: "Hello there, world", chunks: 4, chunkDelayMs: 2 });
    const texts: string[] = [];
    let last: Awaited<ReturnType<typeof ai.models.generateContent>> | undefined;
    for await (const c of await ai.models.generateContentStream({ model, contents: "hi" })) { texts.push(c.text ?? ""); last = c; }
    assert.equal(texts.length, 4);
    assert.equal(texts.join(""), "Hello there, world");
    assert.equal(last?.candidates?.[0].finishReason, "STOP");
    assert.equal(last?.usageMetadata?.totalTokenCount, geminiFakeUsage.totalTokenCount);
    const r = fake.received.at(-1)!;
    assert.equal(r.action, "streamGenerateContent");
    assert.equal(r.query.alt, "sse");

    scripts.push({ kind: "function_call", name: "lookup", args: { q: "x" } });
    const calls: unknown[] = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: "hi" })) calls.push(...(c.functionCalls ?? []));
    assert.deepEqual(calls, [{ name: "lookup", args: { q: "x" } }]);

    scripts.push({ kind: "thinking", thought: "hmm", text: "answer" });
    const parts: { text?: string; thought?: boolean }[] = [];
    let thoughts = 0;
    for await (const c of await ai.models.generateContentStream({ model, contents: "hi" })) {
      parts.push(...(c.candidates?.[0].content?.parts ?? []));
      thoughts = c.usageMetadata?.thoughtsTokenCount ?? thoughts;
    }
    assert.deepEqual(parts[0], { text: "hmm", thought: true });
    assert.equal(parts.slice(1).map((p) => p.text).join(""), "answer");
    assert.equal(thoughts, geminiFakeThinkingUsage.thoughtsTokenCount);

    scripts.push({ kind: "error", status: 503, inStream: true });
    const got: string[] = [];
    await assert.rejects((async () => {
      for await (const c of await ai.models.generateContentStream({ model, contents: "hi" })) got.push(c.text ?? "");
    })());
    assert.equal(got.length, 1);
  });

  test("hang and destroy", T, async () => {
    scripts.push({ kind: "destroy" });
    await assert.rejects(raw("generateContent", { contents }));
    scripts.push({ kind: "hang" });
    await assert.rejects(fetch(`${fake.url}/v1beta/models/${model}:generateContent`, { method: "POST", body: "{}", headers: { "x-goog-api-key": "AIza-good" }, signal: AbortSignal.timeout(100) }));
  });

  test("what @google/genai sends", T, async (t) => {
    await ai.models.generateContent({ model, contents: "hi" });
    await (async () => { for await (const _ of await ai.models.generateContentStream({ model, contents: "hi" })) { /* drain */ } })();
    const [unary, stream] = fake.received.slice(-2);
    assert.equal(unary.path, `/v1beta/models/${model}:generateContent`);
    assert.equal(stream.path, `/v1beta/models/${model}:streamGenerateContent?alt=sse`);
    assert.equal(unary.headers["x-goog-api-key"], "AIza-good");
    assert.equal(unary.query.key, undefined);
    t.diagnostic(`genai headers: ${JSON.stringify(unary.headers)}`);
    t.diagnostic(`genai body: ${JSON.stringify(unary.body)}`);
  });
});
