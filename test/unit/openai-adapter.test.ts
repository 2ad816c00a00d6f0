import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import fc from "fast-check";
import OpenAI from "openai";
import { Stream } from "openai/core/streaming";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { Block, CanonicalEvent, CanonicalRequest, CanonicalResponse } from "../../src/protocols/canonical.js";
import { chatInbound, chatOutbound } from "../../src/protocols/openai/index.js";
import { eventData, SseSplitter } from "../../src/protocols/sse.js";
import { assertStreamContract } from "../helpers/stream-contract.js";

const golden = (name: string): any => JSON.parse(readFileSync(new URL(`../golden/openai/${name}`, import.meta.url), "utf8"));
const sse = (items: readonly unknown[]) => items.map((d) => ({ data: typeof d === "string" ? d : JSON.stringify(d) }));
const base = { model: "gpt-5", messages: [{ role: "user", content: "hi" }] };

/** Parses SSE text by the protocol's rules: whole events, `data:` joined, "[DONE]" kept as text. */
function parseSse(text: string): unknown[] {
  const s = new SseSplitter();
  const raw = [...s.push(Buffer.from(text)), s.flush()].filter((e) => e.trim() !== "");
  return raw.map((e) => {
    const data = eventData(e);
    assert.ok(data !== undefined, `event without data: ${e}`);
    return data === "[DONE]" ? data : JSON.parse(data);
  });
}

function withCreated(items: unknown[], created: number): unknown[] {
  return items.map((i) => (typeof i === "object" && i !== null && "created" in i ? { ...i, created } : i));
}

function decodeStream(items: readonly unknown[]): CanonicalEvent[] {
  const d = chatOutbound.streamDecoder();
  return [...sse(items).flatMap((e) => d.decode(e)), ...d.end()];
}

function encodeStream(events: readonly CanonicalEvent[], req: CanonicalRequest): string {
  const enc = chatInbound.streamEncoder(req);
  return events.map((e) => enc.encode(e)).join("") + chatInbound.streamTrailer;
}

/** An OpenAI SDK client whose "network" answers every call with `body`. */
function sdkClient(body: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: "test",
    baseURL: "http://gateway.test/v1",
    maxRetries: 0,
    fetch: async () => new Response(body, { headers: { "content-type": contentType } }),
  });
}

function rejects400(fn: () => unknown, field: string | RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GatewayError, `expected GatewayError, got ${String(e)}`);
    assert.equal(e.status, 400);
    if (typeof field === "string") assert.ok(e.message.includes(field), `"${e.message}" should name ${field}`);
    else assert.match(e.message, field);
    return true;
  });
}

describe("chat-completions inbound request", () => {
  test("the golden request decodes to the golden canonical request", () => {
    assert.deepEqual(chatInbound.decodeRequest(golden("request.json"), {}), golden("request.canonical.json"));
  });

  test("max_completion_tokens wins over max_tokens; response formats and efforts map", () => {
    const d = (extra: object) => chatInbound.decodeRequest({ ...base, ...extra }, {});
    assert.equal(d({ max_tokens: 10, max_completion_tokens: 20 }).maxTokens, 20);
    assert.deepEqual(d({ response_format: { type: "json_object" } }).responseFormat, {});
    assert.deepEqual(d({ response_format: { type: "json_schema", json_schema: { name: "r", schema: { type: "object" }, strict: true } } }).responseFormat,
      { name: "r", schema: { type: "object" } });
    assert.equal(d({ response_format: { type: "text" } }).responseFormat, undefined);
    assert.deepEqual(d({ reasoning_effort: "xhigh" }).reasoning, { effort: "high" });
    assert.equal(d({ reasoning_effort: "none" }).reasoning, undefined);
    assert.deepEqual(d({ stop: "END" }).stop, ["END"]);
    assert.deepEqual(d({ tool_choice: "required" }).toolChoice, { type: "any" });
    assert.deepEqual(d({ tool_choice: { type: "function", function: { name: "f" } } }).toolChoice, { type: "tool", name: "f" });
    assert.equal(d({ stream: true }).streamUsage, undefined);
    assert.equal(d({ safety_identifier: "u9" }).user, "u9");
  });

  test("a system message after the first turn stays in place as a system turn", () => {
    const r = chatInbound.decodeRequest({ ...base, messages: [
      { role: "system", content: "A" }, { role: "user", content: "hi" },
      { role: "assistant", content: "hello" }, { role: "developer", content: "B" }, { role: "user", content: "go" },
    ] }, {});
    assert.deepEqual(r.system.map((b) => b.text), ["A"]);
    assert.deepEqual(r.messages.map((m) => m.role), ["user", "assistant", "system", "user"]);
    assert.deepEqual(r.messages[2].content, [{ type: "text", text: "B" }]);
    const wire = chatOutbound.encodeRequest(r, "m").messages as { role: string; content: unknown }[];
    assert.deepEqual(wire.map((m) => m.role), ["system", "user", "assistant", "system", "user"]);
    assert.equal(wire[3].content, "B");
  });

  test("fields that change nothing in the answer are accepted, the dropped ones named", () => {
    const r = chatInbound.decodeRequest({ ...base, store: true, metadata: { a: "b" }, service_tier: "flex",
      prompt_cache_key: "k", prediction: { type: "content", content: "x" }, logprobs: false, modalities: ["text"],
      logit_bias: {}, n: 1, verbosity: "low", stream_options: { include_obfuscation: false } }, {});
    assert.equal(r.model, "gpt-5");
    assert.deepEqual(r.dropped, ["store", "metadata", "service_tier", "prompt_cache_key", "prediction", "verbosity", "stream_options.include_obfuscation"]);
  });

  const cases: [string, object, string | RegExp][] = [
    ["a legacy function without a name", { functions: [{ description: "f" }] }, "functions[0].name"],
    ["a bad legacy function_call", { function_call: "required" }, "function_call"],
    ["n > 1", { n: 2 }, /`n` \(above 1\)/],
    ["logprobs", { logprobs: true }, "logprobs"],
    ["top_logprobs", { top_logprobs: 2 }, "top_logprobs"],
    ["audio output", { modalities: ["text", "audio"] }, "modalities"],
    ["logit_bias", { logit_bias: { "50256": -100 } }, "logit_bias"],
    ["a custom tool", { tools: [{ type: "custom", custom: { name: "x" } }] }, "tools[0].type"],
    ["allowed_tools tool_choice", { tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [] } } }, "tool_choice"],
    ["a bad reasoning_effort", { reasoning_effort: "extreme" }, "reasoning_effort"],
    ["a non-number temperature", { temperature: "hot" }, "temperature"],
    ["input audio", { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AA==", format: "wav" } }] }] }, "messages[0].content[0].type"],
    ["a file part", { messages: [{ role: "user", content: [{ type: "file", file: { file_id: "f" } }] }] }, "messages[0].content[0].type"],
    ["an ftp image", { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x/y.png" } }] }] }, "messages[0].content[0].image_url.url"],
    ["a function result without its call", { messages: [{ role: "function", name: "f", content: "1" }] }, "messages[0]"],
    ["legacy call arguments that are not JSON", { messages: [{ role: "assistant", function_call: { name: "f", arguments: "{oops" } }] }, "messages[0].function_call.arguments"],
    ["arguments that are not JSON", { messages: [{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }] }] }, "messages[0].tool_calls[0].function.arguments"],
    ["a tool message without id", { messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
    ["an image in a system message", { messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] }, "messages[0].content[0].type"],
  ];
  for (const [name, extra, field] of cases) {
    test(`400 for ${name}`, () => rejects400(() => chatInbound.decodeRequest({ ...base, ...extra }, {}), field));
  }

  // Issue 19 changed these deliberately: unknown fields (top level or nested) were a 400; they
  // are now dropped and named (conversion: strict refuses them), and web_search_options is the
  // hosted web search the target maps to its own.
  test("unknown fields, top level and nested, are dropped and named by their path", () => {
    const r = chatInbound.decodeRequest({ ...base, foo: 1, stream_options: { foo: true },
      messages: [{ role: "user", content: "x", audio: {} }] }, {});
    assert.deepEqual(r.dropped, ["foo", "stream_options.foo", "messages[].audio"]);
  });
  test("web_search_options is offered web search", () => {
    assert.deepEqual(chatInbound.decodeRequest({ ...base, web_search_options: {} }, {}).hostedTools, [{ kind: "web_search" }]);
  });

  test("missing model or messages is missing_required_parameter", () => {
    for (const body of [{ messages: base.messages }, { model: "m" }, { model: "m", messages: [] }]) {
      assert.throws(() => chatInbound.decodeRequest(body, {}), (e: unknown) =>
        e instanceof GatewayError && e.code === "missing_required_parameter");
    }
  });
});

describe("chat-completions outbound request", () => {
  test("the golden canonical request encodes to the golden wire request", () => {
    assert.deepEqual(chatOutbound.encodeRequest(golden("request.canonical.json"), "gpt-5-2025-08-07"), golden("outbound-request.json"));
    assert.equal(chatOutbound.path(golden("request.canonical.json"), "gpt-5"), "/v1/chat/completions");
  });

  test("wire → canonical → wire → canonical keeps text, images, tool calls and results", () => {
    const first = chatInbound.decodeRequest(golden("request.json"), {});
    const again = chatInbound.decodeRequest(chatOutbound.encodeRequest(first, "gpt-5") as Record<string, unknown>, {});
    // Not carried by design: cache hints (OpenAI caches by itself) and earlier turns' reasoning.
    // Dropped fields (and the spellings of cache hints) are named once, on the way in.
    const strip = (r: CanonicalRequest) => JSON.parse(JSON.stringify({ ...r, model: "", dropped: undefined, spelledAs: undefined, system: r.system.map((b) => b.text),
      messages: r.messages.map((m) => ({ ...m, content: m.content.filter((b) => b.type !== "thinking") })) }));
    assert.deepEqual(strip(again), strip(first));
  });

  test("budgets become efforts; streams always ask for usage; json modes map", () => {
    const req: CanonicalRequest = { model: "m", system: [], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      stream: true, reasoning: { budgetTokens: 5000 }, responseFormat: {} };
    const body = chatOutbound.encodeRequest(req, "m");
    assert.equal(body.reasoning_effort, "medium");
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.deepEqual(body.response_format, { type: "json_object" });
    assert.deepEqual(chatOutbound.encodeRequest({ ...req, responseFormat: { schema: { type: "object" } } }, "m").response_format,
      { type: "json_schema", json_schema: { name: "response", schema: { type: "object" } } });
    assert.deepEqual(chatOutbound.encodeRequest({ ...req, toolChoice: { type: "any" } }, "m").tool_choice, "required");
    const err = chatOutbound.encodeRequest({ ...req, messages: [{ role: "user", content: [
      { type: "tool_result", toolUseId: "t1", content: [{ type: "text", text: "boom" }], isError: true }] }] }, "m");
    assert.deepEqual((err.messages as unknown[])[0], { role: "tool", tool_call_id: "t1", content: "Error: boom" });
  });

  test("400 naming the canonical field for what chat-completions cannot express", () => {
    const req: CanonicalRequest = { model: "m", system: [], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], stream: false };
    // top-k is dropped by the field policy (checked in field-policy.test.ts): not written.
    assert.equal(chatOutbound.encodeRequest({ ...req, topK: 40 }, "m").top_k, undefined);
    const img: Block = { type: "image", source: { kind: "url", url: "https://x/y.png" } };
    rejects400(() => chatOutbound.encodeRequest({ ...req, messages: [{ role: "user", content: [
      { type: "tool_result", toolUseId: "t", content: [img] }] }] }, "m"), "messages[0].content[0].content[0]");
    // An assistant image (an earlier answer's) is dropped by the field policy (modelImages): left out.
    const answered = chatOutbound.encodeRequest({ ...req, messages: [{ role: "assistant", content: [img, { type: "text", text: "here" }] }] }, "m");
    assert.deepEqual((answered.messages as unknown[])[0], { role: "assistant", content: "here" });
  });
});

describe("chat-completions responses", () => {
  test("the golden response decodes to the golden canonical response", () => {
    assert.deepEqual(chatOutbound.decodeResponse(golden("response.json")), golden("response.canonical.json"));
  });

  test("a canonical response (thinking, cache write) encodes to the golden ChatCompletion", () => {
    const body = chatInbound.encodeResponse(golden("encode-response.canonical.json"), golden("request.canonical.json")) as { created: number };
    assert.ok(Math.abs(body.created - Date.now() / 1000) < 5);
    assert.deepEqual({ ...body, created: 0 }, golden("encode-response.json"));
  });

  test("wire → canonical → wire keeps text, tool calls and usage, and the SDK reads it", async () => {
    const canonical = chatOutbound.decodeResponse(golden("response.json"));
    const wire = chatInbound.encodeResponse(canonical, golden("request.canonical.json"));
    assert.deepEqual(chatOutbound.decodeResponse(wire), canonical);
    const sdk = sdkClient(JSON.stringify(wire), "application/json");
    const got = await sdk.chat.completions.create({ model: "gpt-5", messages: [{ role: "user", content: "hi" }] });
    const original = golden("response.json");
    assert.equal(got.choices[0].message.content, original.choices[0].message.content);
    assert.deepEqual(got.choices[0].message.tool_calls, original.choices[0].message.tool_calls);
    assert.equal(got.usage?.prompt_tokens, original.usage.prompt_tokens);
    assert.equal(got.usage?.prompt_tokens_details?.cached_tokens, 1024);
  });

  test("refusals, legacy function calls, and upstream garbage", () => {
    const refusal = chatOutbound.decodeResponse({ id: "x", model: "m", choices: [{ index: 0, finish_reason: "stop",
      message: { role: "assistant", content: null, refusal: "I can't help with that." } }] });
    assert.equal(refusal.stopReason, "refusal");
    assert.deepEqual(refusal.content, [{ type: "text", text: "I can't help with that." }]);
    const legacy = chatOutbound.decodeResponse({ id: "x", model: "m", choices: [{ index: 0, finish_reason: "function_call",
      message: { role: "assistant", content: null, function_call: { name: "f", arguments: "{\"a\":1}" } } }] });
    assert.deepEqual(legacy.content, [{ type: "tool_use", id: "call_0", name: "f", input: { a: 1 } }]);
    assert.equal(legacy.stopReason, "tool_use");
    assert.throws(() => chatOutbound.decodeResponse({ choices: [{ message: { tool_calls: [{ id: "c", function: { name: "f", arguments: "[" } }] } }] }),
      (e: unknown) => e instanceof GatewayError && e.status === 502);
    assert.equal(chatOutbound.errorMessage({ error: { message: "Rate limit reached", type: "requests" } }), "Rate limit reached");
    assert.equal(chatOutbound.errorMessage("nope"), undefined);
  });

  test("every stop reason maps both ways", () => {
    const mk = (finish: string) => chatOutbound.decodeResponse({ id: "i", model: "m", choices: [{ index: 0, message: { content: "x" }, finish_reason: finish }] }).stopReason;
    assert.deepEqual(["stop", "length", "tool_calls", "content_filter"].map(mk), ["end_turn", "max_tokens", "tool_use", "content_filter"]);
    const out = (stopReason: CanonicalResponse["stopReason"]) => (chatInbound.encodeResponse({ id: "i", model: "m", content: [], stopReason,
      usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 } }, golden("request.canonical.json")) as any).choices[0].finish_reason;
    assert.deepEqual((["end_turn", "stop_sequence", "pause_turn", "max_tokens", "tool_use", "content_filter", "refusal", "error"] as const).map(out),
      ["stop", "stop", "stop", "length", "tool_calls", "content_filter", "content_filter", "stop"]);
  });
});

describe("chat-completions streams", () => {
  for (const name of ["stream", "stream-reasoning"]) {
    test(`the golden ${name} decodes to the golden canonical events, contract-valid`, () => {
      const events = decodeStream(golden(`${name}.json`));
      assertStreamContract(events);
      assert.deepEqual(events, golden(`${name}.canonical.json`));
    });
  }

  test("canonical events encode to the golden chunks, and the SDK accumulates them", async () => {
    const events: CanonicalEvent[] = golden("encode-stream.canonical.json");
    assertStreamContract(events);
    const req = { ...golden("request.canonical.json"), streamUsage: true } as CanonicalRequest;
    const text = encodeStream(events, req);
    assert.deepEqual(withCreated(parseSse(text), 0), golden("encode-stream.json"));

    const chunks: ChatCompletionChunk[] = [];
    for await (const c of Stream.fromSSEResponse<ChatCompletionChunk>(new Response(text), new AbortController())) chunks.push(c);
    assert.equal(chunks.length, golden("encode-stream.json").length - 1);

    const final = await sdkClient(text, "text/event-stream").chat.completions
      .stream({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "weather?" }] }).finalChatCompletion();
    assert.equal(final.choices[0].message.content, "I'll look that up.");
    assert.deepEqual(final.choices[0].message.tool_calls, [{ id: "toolu_01A09q90qw90lq917835lq9", type: "function",
      function: { name: "get_weather", arguments: "{\"city\": \"Paris\"}" } }]);
    assert.equal(final.choices[0].finish_reason, "tool_calls");
    assert.equal(final.usage?.prompt_tokens, 2071);
    assert.equal(final.usage?.completion_tokens, 120);
  });

  test("wire → canonical → wire keeps text, tool calls and usage through the SDK", async () => {
    const original = golden("stream.json");
    const events = decodeStream(original);
    const text = encodeStream(events, { ...golden("request.canonical.json"), streamUsage: true });
    assert.deepEqual(decodeStream(parseSse(text)), events);
    const stream = await sdkClient(text, "text/event-stream").chat.completions.create({ model: "gpt-5", messages: [], stream: true });
    let content = "";
    const args: string[] = [];
    let usage: unknown;
    for await (const c of stream) {
      content += c.choices[0]?.delta.content ?? "";
      for (const tc of c.choices[0]?.delta.tool_calls ?? []) args[tc.index] = (args[tc.index] ?? "") + (tc.function?.arguments ?? "");
      if (c.usage) usage = c.usage;
    }
    assert.equal(content, "Let me check both cities.");
    assert.deepEqual(args.map((a) => JSON.parse(a)), [{ city: "Paris" }, { city: "Tokyo", unit: "celsius" }]);
    assert.deepEqual(usage, { prompt_tokens: 1117, completion_tokens: 146, total_tokens: 1263,
      prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 64 } });
  });

  test("without include_usage there is no usage chunk and no usage field", () => {
    const events = decodeStream(golden("stream.json"));
    const chunks = parseSse(encodeStream(events, { ...golden("request.canonical.json"), streamUsage: undefined }));
    assert.equal(chunks.at(-1), "[DONE]");
    for (const c of chunks.slice(0, -1)) {
      assert.ok(!("usage" in (c as object)));
      assert.equal((c as { choices: unknown[] }).choices.length, 1);
    }
  });

  test("an error event reaches the SDK as an APIError", async () => {
    const text = encodeStream([{ type: "message_start", id: "x", model: "m" }, { type: "error", status: 529, message: "Overloaded" }],
      golden("request.canonical.json"));
    const stream = await sdkClient(text, "text/event-stream").chat.completions.create({ model: "m", messages: [], stream: true });
    await assert.rejects(async () => { for await (const _ of stream) { /* drain */ } }, (e: unknown) =>
      e instanceof OpenAI.APIError && e.message.includes("Overloaded"));
  });

  test("the decoder closes what the upstream leaves open, and reports truncation", () => {
    const chunk = (delta: object, finish: string | null = null) => ({ id: "c", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
    // a finish reason without [DONE]: the usage chunk may have been cut, so not whole
    const noDone = decodeStream([chunk({ content: "hi" }), chunk({}, "length")]);
    assertStreamContract(noDone);
    assert.equal(noDone.at(-1)?.type, "error");
    // with [DONE] and without usage
    const done = decodeStream([chunk({ content: "hi" }), chunk({}, "length"), "[DONE]"]);
    assertStreamContract(done);
    assert.deepEqual(done.at(-1), { type: "message_stop", stopReason: "max_tokens", usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 } });
    // cut off mid-answer
    const cut = decodeStream([chunk({ content: "hi" })]);
    assertStreamContract(cut);
    assert.equal(cut.at(-1)?.type, "error");
    // nothing at all
    assert.deepEqual(decodeStream([]).map((e) => e.type), ["error"]);
    // an error chunk mid-stream
    const failed = decodeStream([chunk({ content: "hi" }), { error: { message: "server_error", type: "server_error" } }, "[DONE]"]);
    assertStreamContract(failed);
    assert.deepEqual(failed.at(-1), { type: "error", status: 502, message: "server_error" });
    // a refusal
    const refused = decodeStream([chunk({ refusal: "No." }), chunk({}, "stop"), "[DONE]"]);
    assertStreamContract(refused);
    assert.equal((refused.at(-1) as { stopReason: string }).stopReason, "refusal");
    // tool calls without ids or index get deterministic ones
    const bare = decodeStream([chunk({ tool_calls: [{ function: { name: "f", arguments: "{}" } }] }), chunk({}, "tool_calls"), "[DONE]"]);
    assertStreamContract(bare);
    assert.deepEqual(bare[1], { type: "block_start", index: 0, block: { type: "tool_use", id: "call_0", name: "f" } });
  });

  test("tool calls streamed whole (vLLM, Ollama) keep their arguments: one per chunk, two in one chunk, or with the finish", () => {
    const chunk = (delta: object, finish: string | null = null) => ({ id: "c", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
    const call = (index: number, name: string, args: string) => ({ index, id: `call_${name}`, type: "function", function: { name, arguments: args } });
    const toolEvents = (events: CanonicalEvent[]) => events.filter((e) => e.type !== "message_start" && e.type !== "message_stop");
    const expected: CanonicalEvent[] = [
      { type: "block_start", index: 0, block: { type: "tool_use", id: "call_w", name: "w" } },
      { type: "tool_input_delta", index: 0, partialJson: '{"city":"Bern"}' },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_use", id: "call_t", name: "t" } },
      { type: "tool_input_delta", index: 1, partialJson: "{}" },
      { type: "block_stop", index: 1 },
    ];
    const variants = [
      [chunk({ tool_calls: [call(0, "w", '{"city":"Bern"}')] }), chunk({ tool_calls: [call(1, "t", "{}")] }), chunk({}, "tool_calls"), "[DONE]"],
      [chunk({ tool_calls: [call(0, "w", '{"city":"Bern"}'), call(1, "t", "{}")] }), chunk({}, "tool_calls"), "[DONE]"],
      [chunk({ tool_calls: [call(0, "w", '{"city":"Bern"}'), call(1, "t", "{}")] }, "tool_calls"), "[DONE]"],
    ];
    for (const items of variants) {
      const events = decodeStream(items);
      assertStreamContract(events);
      assert.deepEqual(toolEvents(events), expected);
      assert.equal((events.at(-1) as { stopReason: string }).stopReason, "tool_use");
    }
  });
});

describe("chat-completions conversion properties", () => {
  /** fast-check builds null-prototype objects; JSON values have ordinary ones. */
  const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v));
  const text = fc.string({ minLength: 1, maxLength: 20 });
  const count = fc.nat({ max: 100000 });
  const usage = fc.record({ input: count, cacheRead: count, cacheWrite: fc.constant(0), output: count, reasoning: fc.constant(0) });
  const block: fc.Arbitrary<Block> = fc.oneof(
    text.map((t): Block => ({ type: "text", text: t })),
    fc.record({ id: fc.stringMatching(/^call_[a-z0-9]{1,8}$/), name: fc.stringMatching(/^[a-z_]{1,10}$/),
      input: fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.oneof(fc.integer(), text)) })
      .map((t): Block => ({ type: "tool_use", ...t })),
  );
  // A chat message has one text and then tool calls, so generate in that order.
  const content = fc.tuple(fc.option(text, { nil: undefined }), fc.uniqueArray(block.filter((b) => b.type === "tool_use"), { maxLength: 3, selector: (b) => (b as { id: string }).id }))
    .map(([t, calls]): Block[] => [...(t === undefined ? [] : [{ type: "text", text: t } as Block]), ...calls]);

  test("responses keep text, tool calls and usage", () => {
    fc.assert(fc.property(content, usage, (rawBlocks, rawUsage) => {
      const [blocks, u] = plain([rawBlocks, rawUsage]);
      const res: CanonicalResponse = { id: "chatcmpl-1", model: "m", content: blocks, stopReason: "end_turn", usage: u };
      const back = chatOutbound.decodeResponse(chatInbound.encodeResponse(res, golden("request.canonical.json")));
      assert.deepEqual(back.content, blocks);
      assert.deepEqual(back.usage, u);
    }));
  });

  test("streams keep text, tool calls and usage, chunked any way", () => {
    fc.assert(fc.property(content, usage, fc.array(fc.nat({ max: 5 }), { minLength: 1 }), (rawBlocks, rawUsage, cuts) => {
      const [blocks, u] = plain([rawBlocks, rawUsage]);
      const events: CanonicalEvent[] = [{ type: "message_start", id: "c1", model: "m" }];
      blocks.forEach((b, index) => {
        const full = b.type === "text" ? b.text : JSON.stringify((b as { input: object }).input);
        events.push({ type: "block_start", index, block: b.type === "text" ? { type: "text" } : { type: "tool_use", id: (b as any).id, name: (b as any).name } });
        for (let i = 0, k = 0; i < full.length; k++) {
          const n = 1 + cuts[k % cuts.length];
          const piece = full.slice(i, i + n);
          events.push(b.type === "text" ? { type: "text_delta", index, text: piece } : { type: "tool_input_delta", index, partialJson: piece });
          i += n;
        }
        events.push({ type: "block_stop", index });
      });
      events.push({ type: "message_stop", stopReason: blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn", usage: u });
      assertStreamContract(events);
      const back = decodeStream(parseSse(encodeStream(events, { ...golden("request.canonical.json"), streamUsage: true })));
      assertStreamContract(back);
      assert.deepEqual(back, events);
    }));
  });
});
