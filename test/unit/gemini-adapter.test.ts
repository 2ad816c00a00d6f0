import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import fc from "fast-check";
import { GoogleGenAI, type GenerateContentResponse } from "@google/genai";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { CanonicalEvent, CanonicalRequest, CanonicalResponse } from "../../src/protocols/canonical.js";
import { generateInbound, generateOutbound } from "../../src/protocols/gemini/index.js";
import { normalizeGeminiUsage } from "../../src/protocols/gemini/usage.js";
import { usageMetadataOf } from "../../src/protocols/gemini/mapping.js";
import { eventData, SseSplitter } from "../../src/protocols/sse.js";
import { assertStreamContract } from "../helpers/stream-contract.js";

type Json = Record<string, unknown>;
const golden = (name: string): unknown => JSON.parse(readFileSync(new URL(`../golden/gemini/${name}`, import.meta.url), "utf8"));
const goldenRequest = golden("request.json") as Json;
const goldenResponse = golden("response.json") as Json;
const goldenStream = golden("stream.json") as Json[];

const decode = (body: Json, model = "gemini-2.5-flash", stream = false): CanonicalRequest =>
  generateInbound.decodeRequest(body, { pathModel: model, pathStream: stream });
const userText = (text: string): Json => ({ role: "user", parts: [{ text }] });

/** Runs `fn` and asserts it throws a 400 GatewayError whose message names `field`. */
function assertRejects(fn: () => unknown, field: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError, `not a GatewayError: ${String(err)}`);
    assert.equal(err.status, 400);
    assert.ok(err.message.includes(`\`${field}\``), `message ${JSON.stringify(err.message)} does not name ${field}`);
    return true;
  });
}

function decodeStream(chunks: readonly unknown[]): CanonicalEvent[] {
  const decoder = generateOutbound.streamDecoder();
  const events = chunks.flatMap((c) => decoder.decode({ data: JSON.stringify(c) }));
  return [...events, ...decoder.end()];
}

/** SSE text → the JSON chunks, split by the gateway's own incremental SSE rules. */
function sseChunks(text: string): unknown[] {
  const splitter = new SseSplitter();
  const raw = [...splitter.push(Buffer.from(text)), splitter.flush()].filter((e) => e.trim() !== "");
  return raw.map((e) => JSON.parse(eventData(e) ?? "null"));
}

function encodeStream(events: readonly CanonicalEvent[]): string {
  const encoder = generateInbound.streamEncoder(decode({ contents: [userText("hi")] }, "m", true));
  return events.map((e) => encoder.encode(e)).join("") + generateInbound.streamTrailer;
}

/** A GoogleGenAI client whose fetch answers with `body` and records the request. */
function sdk(body: string, sse = false): { ai: GoogleGenAI; sent: { url?: string; body?: Json } } {
  const sent: { url?: string; body?: Json } = {};
  const ai = new GoogleGenAI({
    apiKey: "test-key",
    httpOptions: {
      baseUrl: "http://gateway.test",
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        sent.url = String(input);
        sent.body = JSON.parse(String(init?.body));
        return new Response(body, { status: 200, headers: { "content-type": sse ? "text/event-stream" : "application/json" } });
      },
    },
  });
  return { ai, sent };
}

const jpeg = (((goldenRequest.contents as Json[])[0].parts as Json[])[1].inlineData as Json).data as string;

const expectedRequest: CanonicalRequest = {
  model: "gemini-2.5-flash",
  system: [{ type: "text", text: "You are a concise travel assistant." }],
  messages: [
    { role: "user", content: [
      { type: "text", text: "What is in this picture, and what is the weather in Paris?" },
      { type: "image", source: { kind: "base64", mediaType: "image/jpeg", data: jpeg } },
      { type: "image", source: { kind: "url", url: "https://example.com/paris-map.png" } },
    ] },
    { role: "assistant", content: [
      { type: "thinking", text: "The user wants an image description and the current weather; I should call get_weather.", signature: "CiQB0e2Kb3lYtT8p1m4XQz3a9w==" },
      { type: "text", text: "The picture shows a small grey square. Let me look up the weather." },
      { type: "thinking", text: "", signature: "EoQBCoEBAdHtim9x2kLq==" },
      { type: "tool_use", id: "fc_7d1a", name: "get_weather", input: { city: "Paris", unit: "celsius" } },
    ] },
    { role: "user", content: [
      { type: "tool_result", toolUseId: "fc_7d1a", name: "get_weather", content: [{ type: "text", text: '{"temperature":18,"conditions":"light rain"}' }] },
    ] },
    { role: "assistant", content: [{ type: "text", text: "It is 18 °C with light rain in Paris." }] },
    { role: "user", content: [{ type: "text", text: "Thanks. Give me the forecast as JSON, please." }] },
  ],
  stream: false,
  tools: [{
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
      required: ["city"],
    },
  }],
  toolChoice: { type: "tool", name: "get_weather" },
  maxTokens: 4096,
  temperature: 0.4,
  topP: 0.95,
  topK: 40,
  stop: ["END"],
  presencePenalty: 0.1,
  frequencyPenalty: 0.2,
  seed: 7,
  reasoning: { budgetTokens: 2048, effort: "low" },
};

test("request: golden generate-content body decodes to the expected canonical request", () => {
  assert.deepEqual(decode(goldenRequest), expectedRequest);
});

test("request: canonical encodes back to the golden body (round trip keeps everything)", () => {
  assert.deepEqual(generateOutbound.encodeRequest(expectedRequest, "gemini-2.5-flash"), goldenRequest);
  assert.deepEqual(generateOutbound.encodeRequest(decode(goldenRequest), "gemini-2.5-flash"), goldenRequest);
});

test("request: path names the URL-encoded model; streaming uses streamGenerateContent?alt=sse", () => {
  assert.equal(generateOutbound.path({ ...expectedRequest, stream: false }, "gemini-2.5-flash"), "/v1beta/models/gemini-2.5-flash:generateContent");
  assert.equal(generateOutbound.path({ ...expectedRequest, stream: true }, "tuned/my model"), "/v1beta/models/tuned%2Fmy%20model:streamGenerateContent?alt=sse");
  const streamed = decode({ contents: [userText("hi")] }, "gemini-2.5-flash", true);
  assert.equal(streamed.stream, true);
  assert.equal(streamed.streamUsage, true);
});

test("request: the official SDK's body decodes (config fields, OpenAPI schema, system string)", async () => {
  const { ai, sent } = sdk(JSON.stringify(goldenResponse));
  await ai.models.generateContent({
    model: "gemini-2.5-flash",
    contents: "Plan a trip",
    config: {
      systemInstruction: "Be brief.",
      maxOutputTokens: 100,
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT" as never, threshold: "BLOCK_NONE" as never }],
      tools: [{ functionDeclarations: [{ name: "book", parameters: { type: "OBJECT" as never, properties: { day: { type: "STRING" as never, nullable: true } }, required: ["day"], propertyOrdering: ["day"] } }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY" as never } },
      responseMimeType: "application/json",
      responseSchema: { type: "ARRAY" as never, items: { type: "INTEGER" as never } },
      thinkingConfig: { thinkingLevel: "HIGH" as never },
    },
  });
  assert.equal(sent.url, "http://gateway.test/v1beta/models/gemini-2.5-flash:generateContent");
  const r = decode(sent.body!);
  assert.deepEqual(r.system, [{ type: "text", text: "Be brief." }]);
  assert.deepEqual(r.messages, [{ role: "user", content: [{ type: "text", text: "Plan a trip" }] }]);
  assert.deepEqual(r.tools, [{ name: "book", parameters: { type: "object", properties: { day: { type: ["string", "null"] } }, required: ["day"] } }]);
  assert.deepEqual(r.toolChoice, { type: "any" });
  assert.deepEqual(r.responseFormat, { schema: { type: "array", items: { type: "integer" } } });
  assert.deepEqual(r.reasoning, { effort: "high" });
  assert.equal(r.maxTokens, 100);
});

test("request: function calls without ids get call_<n>, and responses pair with them by name", () => {
  const r = decode({
    contents: [
      userText("weather in Paris and Lyon, then time"),
      { role: "model", parts: [{ functionCall: { name: "weather", args: { city: "Paris" } } }, { functionCall: { name: "weather", args: { city: "Lyon" } } }, { functionCall: { name: "time" } }] },
      { role: "user", parts: [
        { functionResponse: { name: "time", response: { output: "noon" } } },
        { functionResponse: { name: "weather", response: { error: "unknown city" } } },
        { functionResponse: { name: "weather", response: { output: { temp: 9 } } } },
      ] },
    ],
  });
  assert.deepEqual(r.messages[1].content.map((b) => b.type === "tool_use" && [b.id, b.input]), [["call_0", { city: "Paris" }], ["call_1", { city: "Lyon" }], ["call_2", {}]]);
  assert.deepEqual(r.messages[2].content, [
    { type: "tool_result", toolUseId: "call_2", name: "time", content: [{ type: "text", text: "noon" }] },
    { type: "tool_result", toolUseId: "call_0", name: "weather", content: [{ type: "text", text: "unknown city" }], isError: true },
    { type: "tool_result", toolUseId: "call_1", name: "weather", content: [{ type: "text", text: '{"output":{"temp":9}}' }] },
  ]);
  // …and the encoder gives the same functionResponse bodies back.
  const wire = generateOutbound.encodeRequest(r, "gemini-2.5-flash") as { contents: { parts: Json[] }[] };
  assert.deepEqual(wire.contents[2].parts.map((p) => (p.functionResponse as Json).response), [{ output: "noon" }, { error: "unknown city" }, { output: { temp: 9 } }]);
});

test("request: thinking budgets and levels map to canonical reasoning", () => {
  const reasoning = (thinkingConfig: Json) => decode({ contents: [userText("x")], generationConfig: { thinkingConfig } }).reasoning;
  assert.equal(reasoning({ thinkingBudget: 0 }), undefined);
  assert.deepEqual(reasoning({ thinkingBudget: -1 }), { effort: "medium" });
  assert.deepEqual(reasoning({ thinkingBudget: 30000, includeThoughts: true }), { budgetTokens: 30000, effort: "high" });
  assert.deepEqual(reasoning({ thinkingLevel: "LOW" }), { effort: "low" });
  assert.deepEqual(reasoning({ includeThoughts: true }), { effort: "medium" });
  const encoded = (r: CanonicalRequest) => (generateOutbound.encodeRequest(r, "gemini-2.5-pro").generationConfig as Json).thinkingConfig;
  const base = decode({ contents: [userText("x")] });
  assert.deepEqual(encoded({ ...base, reasoning: { effort: "high" } }), { thinkingBudget: 24576, includeThoughts: true });
  assert.deepEqual(encoded({ ...base, reasoning: { effort: "minimal", budgetTokens: 3000 } }), { thinkingBudget: 3000, includeThoughts: true });
});

test("request: safetySettings are dropped and named for conversion (the same-protocol path passes them through)", () => {
  const r = decode({ contents: [userText("x")], safetySettings: [{ category: "HARM_CATEGORY_HATE_SPEECH", threshold: "BLOCK_NONE" }],
    generationConfig: { topK: 40, routingConfig: {} } });
  assert.deepEqual(r.messages, [{ role: "user", content: [{ type: "text", text: "x" }] }]);
  assert.deepEqual(r.dropped, ["safetySettings", "generationConfig.routingConfig"]);
  assert.equal(r.topK, 40);
});

test("request: what the hub cannot carry is a 400 naming the field", () => {
  const c = [userText("x")];
  assertRejects(() => decode({ contents: c, cachedContent: "cachedContents/abc" }), "cachedContent");
  assertRejects(() => decode({ contents: [{ role: "user", parts: [{ inlineData: { mimeType: "application/pdf", data: "JVBER" } }] }] }), "contents[0].parts[0].inlineData.mimeType");
  assertRejects(() => decode({ contents: [{ role: "system", parts: [{ text: "x" }] }] }), "contents[0].role");
  assertRejects(() => decode({ contents: c, toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["a", "b"] } } }), "toolConfig.functionCallingConfig.allowedFunctionNames");
  assertRejects(() => decode({ contents: c, generationConfig: { responseMimeType: "text/x.enum" } }), "generationConfig.responseMimeType");
  assertRejects(() => decode({ contents: c, generationConfig: { responseModalities: ["TEXT", "IMAGE"] } }), "generationConfig.responseModalities");
  assertRejects(() => decode({ contents: c, generationConfig: { candidateCount: 2 } }), "generationConfig.candidateCount");
  assertRejects(() => decode({ contents: c, generationConfig: { speechConfig: {} } }), "generationConfig.speechConfig");
  assertRejects(() => decode({ contents: c, generationConfig: { temperature: "hot" } }), "generationConfig.temperature");
  assertRejects(() => decode({}), "contents");
  assertRejects(() => generateInbound.decodeRequest({ contents: c }, {}), "model");
});

// Issue 19 changed these deliberately (they were 400s): Google Search is the hosted web search
// the target maps to its own; other server-side tools, parts the hub cannot carry and unknown
// fields are dropped and named (conversion: strict refuses them).
test("request: server-side tools, unknown parts and fields are dropped and named; Google Search is web search", () => {
  const c = [userText("x")];
  const r = decode({ contents: c, somethingNew: 1, tools: [{ googleSearch: {} }, { codeExecution: {} }, { urlContext: {} }] });
  assert.deepEqual(r.hostedTools, [{ kind: "web_search" }]);
  assert.deepEqual(r.dropped, ["somethingNew", "tools[].codeExecution", "tools[].urlContext"]);
  const parts = decode({ contents: [userText("x"), { role: "model", parts: [{ executableCode: { language: "PYTHON", code: "1" } }, { text: "done" }] },
    { role: "user", parts: [{ codeExecutionResult: { outcome: "OUTCOME_OK" } }, { text: "ok" }] }] });
  assert.deepEqual(parts.dropped, ["contents[].parts[].executableCode", "contents[].parts[].codeExecutionResult"]);
  assert.deepEqual(parts.messages.map((m) => m.content), [[{ type: "text", text: "x" }], [{ type: "text", text: "done" }], [{ type: "text", text: "ok" }]]);
});

test("request encode: what generate-content cannot express is a 400 naming the field", () => {
  const base = decode({ contents: [userText("x")] });
  // parallelToolCalls false and user are dropped by the field policy: not written.
  const body = generateOutbound.encodeRequest({ ...base, parallelToolCalls: false, user: "u" }, "g");
  assert.deepEqual(Object.keys(body), ["contents"]);
  const orphan: CanonicalRequest = { ...base, messages: [{ role: "user", content: [{ type: "tool_result", toolUseId: "t1", content: [{ type: "text", text: "ok" }] }] }] };
  assertRejects(() => generateOutbound.encodeRequest(orphan, "g"), "messages[0].content[0].name");
});

test("request encode: tool names found by id, same-role turns merged, Gemini 3 gets the signature sentinel", () => {
  const r: CanonicalRequest = {
    model: "m", system: [], stream: false, toolChoice: { type: "any" },
    messages: [
      { role: "user", content: [{ type: "text", text: "go", cache: { type: "ephemeral" } }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "a", input: { x: 1 } }, { type: "tool_use", id: "toolu_2", name: "b", input: {} }] },
      { role: "user", content: [{ type: "tool_result", toolUseId: "toolu_1", content: [{ type: "text", text: "one" }, { type: "image", source: { kind: "url", url: "https://x.test/p.webp?s=1" } }] }] },
      { role: "user", content: [{ type: "tool_result", toolUseId: "toolu_2", content: [{ type: "text", text: "two" }], isError: true }] },
      { role: "assistant", content: [{ type: "redacted_thinking", data: "opaque" }] },
    ],
  };
  const wire = generateOutbound.encodeRequest(r, "gemini-3-pro-preview");
  assert.deepEqual(wire.contents, [
    { role: "user", parts: [{ text: "go" }] },
    { role: "model", parts: [
      { functionCall: { id: "toolu_1", name: "a", args: { x: 1 } }, thoughtSignature: "skip_thought_signature_validator" },
      { functionCall: { id: "toolu_2", name: "b", args: {} } },
    ] },
    { role: "user", parts: [
      { functionResponse: { id: "toolu_1", name: "a", response: { output: "one" }, parts: [{ fileData: { fileUri: "https://x.test/p.webp?s=1", mimeType: "image/webp" } }] } },
      { functionResponse: { id: "toolu_2", name: "b", response: { error: "two" } } },
    ] },
  ]);
  assert.deepEqual(wire.toolConfig, { functionCallingConfig: { mode: "ANY" } });
  const older = generateOutbound.encodeRequest(r, "gemini-2.5-pro") as { contents: { parts: Json[] }[] };
  assert.equal(older.contents[1].parts[0].thoughtSignature, undefined);
});

const expectedResponse: CanonicalResponse = {
  id: "mVvKaJ6yC9GmkdUPzq2Y8AE",
  model: "gemini-2.5-flash",
  content: [
    { type: "thinking", text: "**Checking the forecast**\n\nThe user wants tomorrow's forecast; I will call get_forecast." },
    { type: "text", text: "Let me fetch tomorrow's forecast." },
    { type: "thinking", text: "", signature: "CpUBAdHtim8Zq4Rw==" },
    { type: "tool_use", id: "fc_a9c2", name: "get_forecast", input: { city: "Paris", days: 1 } },
  ],
  stopReason: "tool_use",
  usage: { input: 496, cacheRead: 1024, cacheWrite: 0, output: 143, reasoning: 112 },
};

test("response: golden upstream answer decodes to canonical, and encodes back to the golden", () => {
  assert.deepEqual(generateOutbound.decodeResponse(goldenResponse), expectedResponse);
  assert.deepEqual(generateInbound.encodeResponse(expectedResponse, expectedRequest), goldenResponse);
});

test("response: the official SDK reads the encoded answer (text, function calls, usage)", async () => {
  const { ai } = sdk(JSON.stringify(generateInbound.encodeResponse(expectedResponse, expectedRequest)));
  const res = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "x" });
  assert.equal(res.text, "Let me fetch tomorrow's forecast.");
  assert.deepEqual(res.functionCalls, [{ id: "fc_a9c2", name: "get_forecast", args: { city: "Paris", days: 1 } }]);
  assert.equal(res.usageMetadata?.cachedContentTokenCount, 1024);
  assert.equal(res.responseId, "mVvKaJ6yC9GmkdUPzq2Y8AE");
});

test("response: ids synthesized when missing; SAFETY and blocked prompts are content_filter", () => {
  const r = generateOutbound.decodeResponse({
    candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "f", args: {} } }, { functionCall: { name: "g" } }] }, finishReason: "STOP" }],
  });
  assert.deepEqual(r.content.map((b) => b.type === "tool_use" && b.id), ["call_0", "call_1"]);
  assert.equal(r.stopReason, "tool_use");
  assert.ok(r.id.length > 0);
  const safety = generateOutbound.decodeResponse({ candidates: [{ finishReason: "SAFETY", index: 0, safetyRatings: [] }], usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } });
  assert.deepEqual([safety.stopReason, safety.content, safety.usage.input], ["content_filter", [], 9]);
  const blocked = generateOutbound.decodeResponse({ promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 4 } });
  assert.equal(blocked.stopReason, "content_filter");
  assert.equal(generateOutbound.decodeResponse({ candidates: [{ content: { parts: [{ text: "a" }] }, finishReason: "MAX_TOKENS" }] }).stopReason, "max_tokens");
  assert.equal(generateOutbound.decodeResponse({ candidates: [{ finishReason: "MALFORMED_FUNCTION_CALL" }] }).stopReason, "error");
  const encoded = generateInbound.encodeResponse({ ...expectedResponse, content: [], stopReason: "content_filter" }, expectedRequest) as Json;
  assert.deepEqual((encoded.candidates as Json[])[0], { content: { role: "model", parts: [{ text: "" }] }, finishReason: "SAFETY", index: 0 });
  assert.equal(generateOutbound.errorMessage({ error: { code: 429, message: "Quota exceeded", status: "RESOURCE_EXHAUSTED" } }), "Quota exceeded");
});

test("usage: canonical ↔ usageMetadata follows the shared convention", () => {
  const u = { input: 100, cacheRead: 40, cacheWrite: 0, output: 50, reasoning: 20 };
  assert.deepEqual(usageMetadataOf(u), { promptTokenCount: 140, cachedContentTokenCount: 40, candidatesTokenCount: 30, thoughtsTokenCount: 20, totalTokenCount: 190 });
  assert.deepEqual(normalizeGeminiUsage(usageMetadataOf(u)), u);
});

const expectedStream: CanonicalEvent[] = [
  { type: "message_start", id: "q1zKaOnEIs2gkdUP5Zu2qQs", model: "gemini-2.5-pro", usage: { input: 512, cacheRead: 1536, cacheWrite: 0, output: 0, reasoning: 0 } },
  { type: "block_start", index: 0, block: { type: "thinking" } },
  { type: "thinking_delta", index: 0, text: "**Planning**\n\nThe user asks for the weather" },
  { type: "thinking_delta", index: 0, text: " in Paris; I should call get_weather." },
  { type: "block_stop", index: 0 },
  { type: "block_start", index: 1, block: { type: "text" } },
  { type: "text_delta", index: 1, text: "Sure — " },
  { type: "text_delta", index: 1, text: "checking the weather now." },
  { type: "block_stop", index: 1 },
  { type: "block_start", index: 2, block: { type: "thinking" } },
  { type: "signature_delta", index: 2, signature: "CtwBAdHtim8pX2nQ==" },
  { type: "block_stop", index: 2 },
  { type: "block_start", index: 3, block: { type: "tool_use", id: "call_0", name: "get_weather" } },
  { type: "tool_input_delta", index: 3, partialJson: '{"city":"Paris"}' },
  { type: "block_stop", index: 3 },
  { type: "block_start", index: 4, block: { type: "tool_use", id: "call_1", name: "get_weather" } },
  { type: "tool_input_delta", index: 4, partialJson: '{"city":"Lyon"}' },
  { type: "block_stop", index: 4 },
  { type: "message_stop", stopReason: "tool_use", usage: { input: 512, cacheRead: 1536, cacheWrite: 0, output: 126, reasoning: 90 } },
];

test("stream decode: the golden stream yields the expected contract-valid events", () => {
  const events = decodeStream(goldenStream);
  assertStreamContract(events);
  assert.deepEqual(events, expectedStream);
});

test("stream decode: SAFETY, blocked prompt, mid-stream error and a cut-off stream", () => {
  const safety = decodeStream([
    { candidates: [{ content: { role: "model", parts: [{ text: "Here is" }] } }] },
    { candidates: [{ finishReason: "SAFETY", index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 } },
  ]);
  assertStreamContract(safety);
  assert.deepEqual(safety.at(-1), { type: "message_stop", stopReason: "content_filter", usage: { input: 5, cacheRead: 0, cacheWrite: 0, output: 2, reasoning: 0 } });
  const blocked = decodeStream([{ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } }]);
  assertStreamContract(blocked);
  assert.deepEqual(blocked.map((e) => e.type), ["message_start", "message_stop"]);
  assert.equal((blocked[1] as { stopReason: string }).stopReason, "content_filter");
  const failed = decodeStream([{ candidates: [{ content: { parts: [{ text: "a" }] } }] }, { error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } }]);
  assertStreamContract(failed);
  assert.deepEqual(failed.at(-1), { type: "error", status: 503, message: "overloaded" });
  const cut = decodeStream([{ candidates: [{ content: { parts: [{ text: "a" }] } }] }]);
  assertStreamContract(cut);
  assert.equal(cut.at(-1)?.type, "error");
});

/** The block events of a stream, with consecutive deltas of one block joined. */
function blockEvents(list: readonly CanonicalEvent[]): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  for (const e of list) {
    const prev = out.at(-1);
    if (e.type === "message_start" || e.type === "message_stop") continue;
    if (e.type === "tool_input_delta" && prev?.type === "tool_input_delta" && prev.index === e.index) {
      out[out.length - 1] = { ...prev, partialJson: prev.partialJson + e.partialJson };
    } else if (e.type === "text_delta" && prev?.type === "text_delta" && prev.index === e.index) {
      out[out.length - 1] = { ...prev, text: prev.text + e.text };
    } else if (e.type === "thinking_delta" && prev?.type === "thinking_delta" && prev.index === e.index) {
      out[out.length - 1] = { ...prev, text: prev.text + e.text };
    } else out.push(e);
  }
  return out;
}

/** An Anthropic-shaped canonical stream: signed thinking, text, tool input in fragments. */
const foreignStream: CanonicalEvent[] = [
  { type: "message_start", id: "msg_01", model: "claude-sonnet-4" },
  { type: "block_start", index: 0, block: { type: "thinking" } },
  { type: "thinking_delta", index: 0, text: "Need the weather." },
  { type: "signature_delta", index: 0, signature: "EqQBCkYIBxgC" },
  { type: "block_stop", index: 0 },
  { type: "block_start", index: 1, block: { type: "text" } },
  { type: "text_delta", index: 1, text: "Checking." },
  { type: "block_stop", index: 1 },
  { type: "block_start", index: 2, block: { type: "tool_use", id: "toolu_9", name: "get_weather" } },
  { type: "tool_input_delta", index: 2, partialJson: '{"city":' },
  { type: "tool_input_delta", index: 2, partialJson: '"Paris"}' },
  { type: "block_stop", index: 2 },
  { type: "message_stop", stopReason: "tool_use", usage: { input: 10, cacheRead: 5, cacheWrite: 0, output: 30, reasoning: 12 } },
];

test("stream encode: output re-parses into chunks that decode back to the same content", () => {
  for (const events of [expectedStream, foreignStream]) {
    const chunks = sseChunks(encodeStream(events));
    for (const c of chunks) {
      const candidate = ((c as Json).candidates as Json[])[0];
      assert.equal((candidate.content as Json).role, "model");
      assert.ok(((candidate.content as Json).parts as Json[]).length > 0);
    }
    const last = chunks.at(-1) as Json;
    assert.equal(((last.candidates as Json[])[0]).finishReason, "STOP");
    const again = decodeStream(chunks);
    assertStreamContract(again);
    const stop = events.at(-1) as Extract<CanonicalEvent, { type: "message_stop" }>;
    assert.deepEqual(again.at(-1), { ...stop, stopReason: "tool_use" });
    assert.deepEqual(blockEvents(again), blockEvents(events));
  }
});

test("stream encode: the official SDK parses the stream and keeps a valid chat history", async () => {
  const { ai } = sdk(encodeStream(foreignStream), true);
  const chunks: GenerateContentResponse[] = [];
  for await (const c of await ai.models.generateContentStream({ model: "claude-sonnet-4", contents: "x" })) chunks.push(c);
  assert.equal(chunks.map((c) => c.text ?? "").join(""), "Checking.");
  assert.deepEqual(chunks.flatMap((c) => c.functionCalls ?? []), [{ id: "toolu_9", name: "get_weather", args: { city: "Paris" } }]);
  assert.equal(chunks.at(-1)?.usageMetadata?.thoughtsTokenCount, 12);
  assert.equal(chunks.at(-1)?.responseId, "msg_01");

  const chat = ai.chats.create({ model: "claude-sonnet-4" });
  for await (const _ of await chat.sendMessageStream({ message: "x" })) void _;
  const history = chat.getHistory(true);
  assert.ok(history.length > 2 && history.slice(1).every((c) => c.role === "model"), "the SDK recorded the streamed turn as valid");
  // The client's next request carries that history (one Content per chunk); it decodes to
  // one assistant turn with the same blocks.
  const back = decode({ contents: history as unknown as Json[] });
  assert.equal(back.messages.length, 2);
  assert.deepEqual(back.messages[1].content, [
    { type: "thinking", text: "Need the weather.", signature: "EqQBCkYIBxgC" },
    { type: "text", text: "Checking." },
    { type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Paris" } },
  ]);
});

test("stream encode: an error event becomes a Gemini error chunk the SDK raises", async () => {
  const text = encodeStream([
    { type: "message_start", id: "x", model: "m" },
    { type: "error", status: 529, message: "Overloaded" },
  ]);
  assert.deepEqual(sseChunks(text), [{ error: { code: 529, message: "Overloaded", status: "INTERNAL", type: "gateway_error", details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "upstream_error", domain: "gateway" }] } }]);
  const { ai } = sdk(text, true);
  await assert.rejects(async () => {
    for await (const _ of await ai.models.generateContentStream({ model: "m", contents: "x" })) void _;
  }, /Overloaded/);
});

const arbitraryAnswer = fc.record({
  text: fc.string({ minLength: 1 }),
  calls: fc.array(fc.record({
    name: fc.stringMatching(/^[a-z_][a-z0-9_]{0,15}$/),
    input: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null))),
  }), { maxLength: 3 }),
  usage: fc.record({ input: fc.nat(1e6), cacheRead: fc.nat(1e6), output: fc.nat(1e6) }).chain((u) =>
    fc.nat(u.output).map((reasoning) => ({ ...u, cacheWrite: 0, reasoning }))),
});

test("property: response and stream conversion keep text, tool calls and usage", () => {
  fc.assert(fc.property(arbitraryAnswer, ({ text, calls, usage }) => {
    // JSON round trip: fast-check builds null-prototype objects; wire JSON has ordinary ones.
    const tools = calls.map((c, i) => ({ type: "tool_use" as const, id: `call_${i}`, name: c.name, input: JSON.parse(JSON.stringify(c.input)) as Json }));
    const response: CanonicalResponse = {
      id: "r1", model: "m", content: [{ type: "text", text }, ...tools], stopReason: tools.length > 0 ? "tool_use" : "end_turn", usage,
    };
    const wire = JSON.parse(JSON.stringify(generateInbound.encodeResponse(response, expectedRequest)));
    assert.deepEqual(generateOutbound.decodeResponse(wire), response);

    const events: CanonicalEvent[] = [
      { type: "message_start", id: "r1", model: "m" },
      { type: "block_start", index: 0, block: { type: "text" } },
      ...[...text].map((ch): CanonicalEvent => ({ type: "text_delta", index: 0, text: ch })),
      { type: "block_stop", index: 0 },
      ...tools.flatMap((t, i): CanonicalEvent[] => [
        { type: "block_start", index: i + 1, block: { type: "tool_use", id: t.id, name: t.name } },
        { type: "tool_input_delta", index: i + 1, partialJson: JSON.stringify(t.input) },
        { type: "block_stop", index: i + 1 },
      ]),
      { type: "message_stop", stopReason: response.stopReason, usage },
    ];
    const again = decodeStream(sseChunks(encodeStream(events)));
    assertStreamContract(again);
    assert.deepEqual(blockEvents(again), blockEvents(events));
    assert.deepEqual(again.at(-1), events.at(-1));
  }), { numRuns: 200 });
});
