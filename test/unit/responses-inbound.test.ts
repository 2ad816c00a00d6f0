// The responses protocol as an inbound spoke: request decoding (every input item kind, tools,
// settings, what is dropped and what is refused), the Response encoding, the stream's event
// sequence as the openai SDK's own accumulator reads it, and round-trip properties.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { Response, ResponseStreamEvent } from "openai/resources/responses/responses";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { Block, CanonicalEvent, CanonicalRequest, CanonicalResponse, StopReason } from "../../src/protocols/canonical.js";
import { CLIENT_FIELDS } from "../../src/protocols/field-policy.js";
import { decodeResponsesRequest } from "../../src/protocols/openai/responses-request-decode.js";
import { encodeResponsesResponse } from "../../src/protocols/openai/responses-response-encode.js";
import { responsesStreamEncoder } from "../../src/protocols/openai/responses-stream-encode.js";
import { responsesInbound } from "../../src/protocols/openai/responses-inbound.js";
import { normalizeResponsesUsage } from "../../src/protocols/openai/responses-usage.js";
import { passesThrough, routeProtocols } from "../../src/protocols/registry.js";
import { parseEvent, SseSplitter } from "../../src/protocols/sse.js";
import type { Usage } from "../../src/protocols/usage.js";

const decode = (json: Record<string, unknown>) => decodeResponsesRequest({ model: "m", ...json });

/** Asserts `fn` throws a 400 whose message matches `pattern`. */
function refuses(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GatewayError, String(e));
    assert.equal(e.status, 400);
    assert.match(e.message, pattern);
    return true;
  });
}

const usage: Usage = { input: 10, cacheRead: 4, cacheWrite: 0, output: 8, reasoning: 3 };

describe("responses request → canonical", () => {
  test("a string input and instructions", () => {
    const req = decode({ input: "Hi there", instructions: "Be brief." });
    assert.deepEqual(req, {
      model: "m", system: [{ type: "text", text: "Be brief." }],
      messages: [{ role: "user", content: [{ type: "text", text: "Hi there" }] }], stream: false,
    });
  });

  test("message items: every role, string and part content, images; system/developer join the system prompt", () => {
    const req = decode({
      instructions: "I1",
      input: [
        { role: "developer", content: "D1" },
        { type: "message", role: "system", content: [{ type: "input_text", text: "S1" }] },
        { role: "user", content: [
          { type: "input_text", text: "look" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
          { type: "input_image", image_url: "https://example.test/cat.jpg" },
        ] },
        { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [
          { type: "output_text", text: "a cat", annotations: [], logprobs: [] },
          { type: "refusal", refusal: "no more" },
        ] },
        { role: "assistant", content: "plain assistant text" },
        { role: "user", content: "and?" },
      ],
    });
    assert.deepEqual(req.system, [{ type: "text", text: "I1" }, { type: "text", text: "D1" }, { type: "text", text: "S1" }]);
    assert.deepEqual(req.messages, [
      { role: "user", content: [
        { type: "text", text: "look" },
        { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
        { type: "image", source: { kind: "url", url: "https://example.test/cat.jpg" } },
      ] },
      { role: "assistant", content: [
        { type: "text", text: "a cat" }, { type: "text", text: "no more" }, { type: "text", text: "plain assistant text" },
      ] },
      { role: "user", content: [{ type: "text", text: "and?" }] },
    ]);
  });

  test("a system or developer message after the first turn stays in place as a system turn", () => {
    const req = decode({
      instructions: "I",
      input: [
        { role: "developer", content: "lead" },
        { role: "user", content: "q1" },
        { role: "developer", content: [{ type: "input_text", text: "mid 1" }] },
        { role: "system", content: "mid 2" },
        { role: "user", content: "q2" },
      ],
    });
    assert.deepEqual(req.system, [{ type: "text", text: "I" }, { type: "text", text: "lead" }]);
    assert.deepEqual(req.messages, [
      { role: "user", content: [{ type: "text", text: "q1" }] },
      { role: "system", content: [{ type: "text", text: "mid 1" }, { type: "text", text: "mid 2" }] },
      { role: "user", content: [{ type: "text", text: "q2" }] },
    ]);
    refuses(() => decode({ input: [{ role: "developer", content: "only instructions" }] }), /input must hold/);
  });

  test("what the openai SDK's finalResponse() adds to items (parsed_arguments, parsed) is accepted when sent back", () => {
    const req = decode({ input: [
      { role: "user", content: "q" },
      { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "t", annotations: [], parsed: null }] },
      { type: "function_call", call_id: "c1", name: "f", arguments: '{"a":1}', parsed_arguments: { a: 1 } },
    ] });
    assert.deepEqual(req.messages[1].content, [{ type: "text", text: "t" }, { type: "tool_use", id: "c1", name: "f", input: { a: 1 } }]);
  });

  test("function_call and function_call_output items pair into tool_use / tool_result (with the call's name)", () => {
    const req = decode({
      input: [
        { role: "user", content: "weather?" },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "think" }], encrypted_content: "c2lnbmF0dXJl" },
        { type: "function_call", id: "fc_1", call_id: "call_A", name: "get_weather", arguments: '{"city":"Zürich"}', status: "completed" },
        { type: "function_call", call_id: "call_B", name: "get_time", arguments: "" },
        { type: "function_call_output", call_id: "call_A", output: "sunny" },
        { type: "function_call_output", call_id: "call_B", output: [
          { type: "input_text", text: "noon" }, { type: "input_image", image_url: "data:image/jpeg;base64,AAAA" },
        ] },
        { type: "function_call_output", call_id: "call_unknown", output: "" },
      ],
    });
    assert.deepEqual(req.messages, [
      { role: "user", content: [{ type: "text", text: "weather?" }] },
      { role: "assistant", content: [
        { type: "thinking", text: "think", signature: "c2lnbmF0dXJl" },
        { type: "tool_use", id: "call_A", name: "get_weather", input: { city: "Zürich" } },
        { type: "tool_use", id: "call_B", name: "get_time", input: {} },
      ] },
      { role: "user", content: [
        { type: "tool_result", toolUseId: "call_A", name: "get_weather", content: [{ type: "text", text: "sunny" }] },
        { type: "tool_result", toolUseId: "call_B", name: "get_time", content: [
          { type: "text", text: "noon" }, { type: "image", source: { kind: "base64", mediaType: "image/jpeg", data: "AAAA" } },
        ] },
        { type: "tool_result", toolUseId: "call_unknown", content: [] },
      ] },
    ]);
  });

  test("reasoning items: summary alone, signature alone, redacted data, nothing; never garbled", () => {
    const blocks = (item: Record<string, unknown>) =>
      decode({ input: [{ role: "user", content: "q" }, { type: "reasoning", id: "rs_x", ...item }] }).messages.slice(1).flatMap((m) => m.content);
    assert.deepEqual(blocks({ summary: [{ type: "summary_text", text: "a" }, { type: "summary_text", text: "b" }] }),
      [{ type: "thinking", text: "a\n\nb" }]);
    assert.deepEqual(blocks({ summary: [], encrypted_content: "U0lH" }), [{ type: "thinking", text: "", signature: "U0lH" }]);
    assert.deepEqual(blocks({ summary: [], encrypted_content: "redacted_thinking:RA==" }), [{ type: "redacted_thinking", data: "RA==" }]);
    assert.deepEqual(blocks({ summary: [], encrypted_content: null }), []);
    refuses(() => blocks({ summary: [{ type: "reasoning_text", text: "x" }] }), /input\[1\]\.summary\[0\]/);
  });

  test("function tools (flat shape), tool_choice, reasoning effort, text.format, sampling, user", () => {
    const req = decode({
      input: "x",
      tools: [
        { type: "function", name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: true },
        { type: "function", name: "noargs", parameters: null, strict: null },
      ],
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: false,
      reasoning: { effort: "high", summary: "auto" },
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
      max_output_tokens: 300, temperature: 0.2, top_p: 0.9, safety_identifier: "u-1", stream: true, store: false,
    });
    assert.deepEqual(req.tools, [
      { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
      { name: "noargs", parameters: { type: "object", properties: {} } },
    ]);
    assert.deepEqual(req.toolChoice, { type: "tool", name: "get_weather" });
    assert.equal(req.parallelToolCalls, false);
    assert.deepEqual(req.reasoning, { effort: "high" });
    assert.deepEqual(req.responseFormat, { schema: { type: "object" }, name: "out" });
    assert.equal(req.maxTokens, 300);
    assert.equal(req.temperature, 0.2);
    assert.equal(req.topP, 0.9);
    assert.equal(req.user, "u-1");
    assert.equal(req.stream, true);
    assert.equal(req.dropped, undefined, "store: false drops nothing");
    assert.deepEqual(decode({ input: "x", tool_choice: "required" }).toolChoice, { type: "any" });
    assert.deepEqual(decode({ input: "x", tool_choice: "none" }).toolChoice, { type: "none" });
    assert.deepEqual(decode({ input: "x", text: { format: { type: "json_object" } } }).responseFormat, {});
    assert.equal(decode({ input: "x", text: { format: { type: "text" } } }).responseFormat, undefined);
    assert.equal(decode({ input: "x", reasoning: { effort: "none" } }).reasoning, undefined);
    assert.deepEqual(decode({ input: "x", reasoning: { effort: "xhigh" } }).reasoning, { effort: "high" });
  });

  test("namespace tools are offered flat by their own names; their calls get the namespace back; web_search is hosted web search", () => {
    const req = decode({
      input: [{ role: "user", content: "q" }, { type: "function_call", call_id: "c0", name: "spawn_agent", namespace: "multi_agent_v1", arguments: "{}" }],
      tools: [
        { type: "function", name: "exec_command", parameters: { type: "object" }, strict: false },
        { type: "namespace", name: "multi_agent_v1", description: "Sub-agents", tools: [
          { type: "function", name: "spawn_agent", description: "Spawn", strict: false, parameters: { type: "object" } },
          { type: "function", name: "wait_agent", parameters: { type: "object" } },
        ] },
        { type: "web_search", external_web_access: false },
      ],
    });
    assert.deepEqual(req.tools, [
      { name: "exec_command", parameters: { type: "object" } },
      { name: "spawn_agent", description: "Spawn", parameters: { type: "object" }, namespace: "multi_agent_v1" },
      { name: "wait_agent", parameters: { type: "object" }, namespace: "multi_agent_v1" },
    ]);
    // Issue 19: web search is no longer dropped: it is the hosted web search targets map.
    assert.deepEqual(req.hostedTools, [{ kind: "web_search" }]);
    assert.equal(req.dropped, undefined);
    assert.deepEqual(req.messages[1].content, [{ type: "tool_use", id: "c0", name: "spawn_agent", input: {} }]);
    const calls: Block[] = [
      { type: "tool_use", id: "c1", name: "spawn_agent", input: { task: "x" } },
      { type: "tool_use", id: "c2", name: "exec_command", input: {} },
    ];
    const whole = encodeResponsesResponse(answer(calls, "tool_use"), req) as any;
    assert.equal(whole.output[0].namespace, "multi_agent_v1");
    assert.equal("namespace" in whole.output[1], false);
    assert.deepEqual(whole.tools.map((t: any) => t.type), ["function", "namespace"]);
    assert.deepEqual(whole.tools[1].tools.map((t: any) => t.name), ["spawn_agent", "wait_agent"]);
    const final = assertResponsesStream(encodeStream(canonicalStream(calls, "tool_use", usage), { ...req, stream: true }));
    assert.deepEqual(withoutIds(final.output), withoutIds(whole.output));
    refuses(() => decode({ input: "x", tools: [{ type: "namespace", name: "n", tools: [{ type: "custom", name: "c" }] }] }), /tools\[0\]\.tools\[0\]\.type/);
  });

  test("provider hints are dropped and named in `dropped`", () => {
    const req = decode({
      input: "x", metadata: { a: "b" }, service_tier: "flex", prompt_cache_key: "k", include: ["reasoning.encrypted_content", "web_search_call.action.sources"],
      truncation: "auto", background: false, stream_options: { include_obfuscation: false }, store: true,
      text: { verbosity: "low" }, tools: [{ type: "function", name: "f", parameters: {}, strict: false, defer_loading: true }],
    });
    assert.deepEqual([...req.dropped!].sort(), [
      "include", "metadata", "prompt_cache_key", "service_tier", "store", "stream_options", "text.verbosity", "tools[].defer_loading", "truncation",
    ]);
    assert.equal(decode({ input: "x", include: ["reasoning.encrypted_content"] }).dropped, undefined, "an honoured include is not a drop");
  });

  test("the decoder does what field-policy.ts's table (and so docs/conversion.md) says of each responses field", () => {
    /** A request with `field` (a table path) set to `v`. */
    const withField = (field: string, v: unknown): Record<string, unknown> => {
      const [head, rest] = field.split(".", 2) as [string, string | undefined];
      if (head === "tools[]") return { input: "x", tools: [{ type: "function", name: "f", parameters: {}, [rest!]: v }] };
      return { input: "x", [head]: rest === undefined ? v : { [rest]: v } };
    };
    let checked = 0;
    for (const rule of CLIENT_FIELDS.responses) {
      if (rule.field.includes(" ")) continue; // a description, not a path
      if (rule.fate === "drop") {
        const value = rule.field === "include" ? ["file_search_call.results"] : true;
        assert.ok(decode(withField(rule.field, value)).dropped?.includes(rule.field), `${rule.field} is dropped and named`);
        checked++;
      } else if (rule.fate === "refuse") {
        refuses(() => decode(withField(rule.field, true)), new RegExp(`^\`?${rule.field.replace(/[.[\]]/g, "\\$&")}\\b`));
        checked++;
      }
    }
    assert.ok(checked >= 15, `only ${checked} rules checked`);
  });

  test("unknown fields and offered hosted tools other than web search are dropped and named", () => {
    const types = ["file_search", "code_interpreter", "computer_use_preview", "mcp", "image_generation", "local_shell", "custom"];
    const req = decode({ input: "x", frobnicate: 1, tools: [{ type: "function", name: "f", parameters: {} }, ...types.map((type) => ({ type }))] });
    assert.deepEqual(req.dropped, ["frobnicate", ...types.map((t) => `tools[] (type ${t})`)]);
    assert.deepEqual(req.tools?.map((t) => t.name), ["f"]);
    // A hosted tool's call from an earlier answer (a session that switched models) likewise.
    const history = decode({ input: [{ role: "user", content: "q" }, { type: "web_search_call", id: "ws_1", status: "completed" }] });
    assert.deepEqual(history.dropped, ["input[] (type web_search_call)"]);
  });

  test("what cannot be carried is refused with a 400 naming it", () => {
    refuses(() => decode({ input: "x", previous_response_id: "resp_1" }), /previous_response_id.*keeps no conversations/);
    refuses(() => decode({ input: "x", conversation: "conv_1" }), /^conversation.*keeps no conversations/);
    refuses(() => decode({ input: "x", prompt: { id: "pmpt_1" } }), /^prompt/);
    refuses(() => decode({ input: "x", background: true }), /^background/);
    refuses(() => decode({ input: "x", top_logprobs: 5 }), /^top_logprobs/);
    refuses(() => decode({ input: "x", include: ["message.output_text.logprobs"] }), /include "message\.output_text\.logprobs"/);
    // Issue 19: unknown fields and offered hosted tools are dropped and named (test below);
    // forcing a hosted tool is still refused.
    refuses(() => decode({ input: "x", tool_choice: { type: "web_search" } }), /tool_choice/);
    refuses(() => decode({ input: "x", tools: [{ type: "image_generation" }], tool_choice: { type: "image_generation" } }), /^`tool_choice`.*image_generation/);
    refuses(() => decode({ input: [{ role: "user", content: [{ type: "input_image", file_id: "file-1" }] }] }), /input\[0\]\.content\[0\]\.file_id/);
    refuses(() => decode({ input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }] }] }), /input\[0\]\.content\[0\]\.type "input_file"/);
    refuses(() => decode({ input: [{ type: "item_reference", id: "msg_1" }] }), /input\[0\]\.type "item_reference"/);
    refuses(() => decode({ input: [{ type: "function_call", call_id: "c", name: "f", arguments: "[1]" }] }), /input\[0\]\.arguments must be a JSON object/);
    refuses(() => decode({ input: [{ role: "tool", content: "x" }] }), /input\[0\]\.role/);
    refuses(() => decode({ input: "x", text: { format: { type: "json_schema", name: "n" } } }), /text\.format\.schema/);
    refuses(() => decode({ input: "x", reasoning: { effort: "extreme" } }), /reasoning\.effort/);
    refuses(() => decodeResponsesRequest({ model: "m" }), /input is required/);
  });

  test("a Codex-shaped turn (store: false, encrypted reasoning, prompt_cache_key) decodes; only the cache key is a drop", () => {
    const req = decode({
      instructions: "You are Codex.", stream: true, store: false, tool_choice: "auto", parallel_tool_calls: false,
      reasoning: { effort: "medium", summary: "auto" }, include: ["reasoning.encrypted_content"], prompt_cache_key: "0199-uuid",
      tools: [{ type: "function", name: "shell", description: "Runs a command", strict: false,
        parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } }, required: ["command"], additionalProperties: false } }],
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "<permissions instructions>" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>cwd</environment_context>" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "list files" }] },
        { type: "reasoning", summary: [], content: null, encrypted_content: "U0lH" },
        { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: "call_1" },
        { type: "function_call_output", call_id: "call_1", output: "a.txt" },
      ],
    });
    assert.deepEqual(req.dropped, ["prompt_cache_key"]);
    assert.deepEqual(req.system, [{ type: "text", text: "You are Codex." }, { type: "text", text: "<permissions instructions>" }]);
    assert.deepEqual(req.messages.map((m) => m.role), ["user", "assistant", "user"]);
    assert.deepEqual(req.messages[1].content, [
      { type: "thinking", text: "", signature: "U0lH" }, { type: "tool_use", id: "call_1", name: "shell", input: { command: ["ls"] } },
    ]);
    assert.equal(req.parallelToolCalls, false);
    assert.deepEqual(req.toolChoice, { type: "auto" });
  });

  test("pass-through or conversion: /v1/responses goes untouched only to an OpenAI channel of a model priced for responses alone", () => {
    const route = routeProtocols.responses;
    assert.equal(passesThrough("responses", route, "openai", new Set(["responses"])), true);
    assert.equal(passesThrough("responses", route, "openai", new Set(["chat", "responses"])), false, "a chat model: converted to chat-completions");
    assert.equal(passesThrough("responses", route, "anthropic", new Set(["chat", "responses"])), false);
    assert.equal(passesThrough("responses", route, "gemini", new Set(["chat", "responses"])), false);
  });

  test("the inbound adapter is wired for /v1/responses and names fields as the client sent them", () => {
    assert.equal(routeProtocols.responses.inbound, responsesInbound);
    assert.equal(responsesInbound.fieldNames.maxTokens, "max_output_tokens");
    assert.equal(responsesInbound.fieldNames.responseFormat, "text.format");
    assert.equal(responsesInbound.streamTrailer, "");
  });
});

const request = (over: Partial<CanonicalRequest> = {}): CanonicalRequest =>
  ({ model: "client-model", system: [], messages: [{ role: "user", content: [{ type: "text", text: "q" }] }], stream: false, ...over });

const answer = (content: Block[], stopReason: StopReason = "end_turn", u: Usage = usage): CanonicalResponse =>
  ({ id: "msg_upstream", model: "client-model", content, stopReason, usage: u });

describe("canonical answer → Response", () => {
  test("output items of every kind, usage and the echo of the request's settings", () => {
    const req = decodeResponsesRequest({
      model: "client-model", input: "q", instructions: "Be brief.", max_output_tokens: 99, temperature: 0.5,
      tools: [{ type: "function", name: "f", description: "d", parameters: { type: "object" }, strict: true }], tool_choice: "required",
      reasoning: { effort: "low" }, text: { format: { type: "json_schema", name: "n", schema: { type: "object" } } }, user: "u",
    });
    const body = encodeResponsesResponse(answer([
      { type: "thinking", text: "hmm", signature: "U0lH" },
      { type: "redacted_thinking", data: "REFUQQ==" },
      { type: "text", text: "Hello" },
      { type: "tool_use", id: "call_1", name: "f", input: { a: [1, "ü"] } },
      { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" } },
    ], "tool_use", { input: 10, cacheRead: 4, cacheWrite: 2, output: 8, reasoning: 3 }), req) as unknown as Response;
    assert.match(body.id, /^resp_[0-9a-f]{32}$/);
    assert.equal(body.object, "response");
    assert.equal(body.status, "completed");
    assert.equal(body.incomplete_details, null);
    assert.equal(body.model, "client-model");
    assert.equal(typeof body.created_at, "number");
    const [rs, red, msg, fc, img] = body.output as any[];
    assert.match(rs.id, /^rs_/);
    assert.deepEqual({ ...rs, id: 0 }, { id: 0, type: "reasoning", summary: [{ type: "summary_text", text: "hmm" }], encrypted_content: "U0lH", status: "completed" });
    assert.deepEqual(red.summary, []);
    assert.equal(red.encrypted_content, "redacted_thinking:REFUQQ==");
    assert.match(msg.id, /^msg_/);
    assert.deepEqual({ ...msg, id: 0 }, {
      id: 0, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }],
    });
    assert.match(fc.id, /^fc_/);
    assert.deepEqual({ ...fc, id: 0 }, { id: 0, type: "function_call", status: "completed", arguments: '{"a":[1,"ü"]}', call_id: "call_1", name: "f" });
    assert.match(img.id, /^ig_/);
    assert.deepEqual({ ...img, id: 0 }, { id: 0, type: "image_generation_call", status: "completed", result: "iVBOR" });
    assert.equal(new Set(body.output.map((o: any) => o.id)).size, 5, "item ids are unique");
    assert.deepEqual(body.usage, {
      input_tokens: 16, input_tokens_details: { cached_tokens: 4, cache_write_tokens: 2 }, output_tokens: 8, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 24,
    });
    assert.equal(body.instructions, "Be brief.");
    assert.equal(body.max_output_tokens, 99);
    assert.equal(body.temperature, 0.5);
    assert.equal(body.top_p, 1);
    assert.equal(body.tool_choice, "required");
    assert.deepEqual(body.tools, [{ type: "function", name: "f", description: "d", parameters: { type: "object" }, strict: null }]);
    assert.deepEqual(body.reasoning, { effort: "low", summary: null });
    assert.deepEqual(body.text?.format, { type: "json_schema", name: "n", schema: { type: "object" }, strict: null, description: null });
    assert.equal(body.parallel_tool_calls, true);
    assert.equal(body.user, "u");
    assert.equal((body as unknown as { store: boolean }).store, false);
  });

  test("max_tokens and content_filter give status incomplete with the API's reasons; a refusal is a refusal part", () => {
    const incomplete = encodeResponsesResponse(answer([{ type: "text", text: "cut" }], "max_tokens"), request()) as any;
    assert.equal(incomplete.status, "incomplete");
    assert.deepEqual(incomplete.incomplete_details, { reason: "max_output_tokens" });
    const filtered = encodeResponsesResponse(answer([], "content_filter"), request()) as any;
    assert.equal(filtered.status, "incomplete");
    assert.deepEqual(filtered.incomplete_details, { reason: "content_filter" });
    assert.deepEqual(filtered.output, []);
    const refused = encodeResponsesResponse(answer([{ type: "text", text: "I can't help" }], "refusal"), request()) as any;
    assert.equal(refused.status, "completed");
    assert.deepEqual(refused.output[0].content, [{ type: "refusal", refusal: "I can't help" }]);
  });
});

/** The typed events of an SSE text. */
function sseEvents(text: string): { event?: string; data: any }[] {
  const splitter = new SseSplitter();
  const raws = splitter.push(Buffer.from(text));
  assert.equal(splitter.flush(), "", "every event ends with a blank line");
  return raws.map((raw) => {
    const e = parseEvent(raw)!;
    return { event: e.event, data: JSON.parse(e.data) };
  });
}

/** Canonical stream events for an answer's content (text and thinking in 3 pieces). */
function canonicalStream(content: readonly Block[], stopReason: StopReason, u: Usage): CanonicalEvent[] {
  const events: CanonicalEvent[] = [{ type: "message_start", id: "msg_up", model: "client-model" }];
  const pieces = (s: string) => s === "" ? [] : [s.slice(0, 1), s.slice(1, 3), s.slice(3)].filter((p) => p !== "");
  content.forEach((b, index) => {
    if (b.type === "text") {
      events.push({ type: "block_start", index, block: { type: "text" } });
      for (const p of pieces(b.text)) events.push({ type: "text_delta", index, text: p });
    } else if (b.type === "thinking") {
      events.push({ type: "block_start", index, block: { type: "thinking" } });
      for (const p of pieces(b.text)) events.push({ type: "thinking_delta", index, text: p });
      if (b.signature) events.push({ type: "signature_delta", index, signature: b.signature });
    } else if (b.type === "tool_use") {
      events.push({ type: "block_start", index, block: { type: "tool_use", id: b.id, name: b.name } });
      for (const p of pieces(JSON.stringify(b.input))) events.push({ type: "tool_input_delta", index, partialJson: p });
    } else if (b.type === "redacted_thinking") {
      events.push({ type: "block_start", index, block: { type: "redacted_thinking", data: b.data } });
    }
    events.push({ type: "block_stop", index });
  });
  events.push({ type: "message_stop", stopReason, usage: u });
  return events;
}

/** Runs canonical events through the encoder; returns the SSE text. */
function encodeStream(events: readonly CanonicalEvent[], req = request({ stream: true })): string {
  const enc = responsesStreamEncoder(req);
  return events.map((e) => enc.encode(e)).join("");
}

/** Output items without their ids (ids are per response). */
const withoutIds = (output: readonly unknown[]) => output.map((o) => ({ ...(o as object), id: "" }));

/** Asserts the responses stream rules: `event:` names the type; sequence numbers count from
 * 0; every item event belongs to an added, not yet done item; text parts are opened before
 * their deltas. Returns the accumulated Response (the SDK's own accumulator). */
function assertResponsesStream(text: string): Response {
  const events = sseEvents(text);
  let snapshot: Response | undefined;
  const open = new Set<number>();
  const done = new Set<number>();
  events.forEach(({ event, data }, i) => {
    assert.equal(event, data.type, `event ${i}: the event: line names the type`);
    assert.equal(data.sequence_number, i, `event ${i}: sequence_number`);
    if (data.type === "response.output_item.added") {
      assert.ok(!open.has(data.output_index) && !done.has(data.output_index), `event ${i}: output_index reused`);
      open.add(data.output_index);
    } else if (data.type === "response.output_item.done") {
      assert.ok(open.delete(data.output_index), `event ${i}: done for an item not open`);
      done.add(data.output_index);
    } else if ("output_index" in data) {
      assert.ok(open.has(data.output_index), `event ${i} (${data.type}): outside an open item`);
    }
    if (data.type === "response.completed" || data.type === "response.incomplete") {
      assert.equal(i, events.length - 1, "the terminal event is last");
      assert.equal(open.size, 0, "every item is done before the end");
    }
    snapshot = accumulateResponse(data as ResponseStreamEvent, snapshot);
  });
  assert.equal(events[0].data.type, "response.created");
  assert.equal(events[1].data.type, "response.in_progress");
  return snapshot!;
}

describe("canonical stream → responses events", () => {
  test("the exact event sequence of a text answer", () => {
    const sse = encodeStream(canonicalStream([{ type: "text", text: "Hello" }], "end_turn", usage));
    const types = sseEvents(sse).map((e) => e.data.type);
    assert.deepEqual(types, [
      "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
      "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed",
    ]);
    const final = assertResponsesStream(sse);
    assert.equal(final.status, "completed");
    assert.equal(final.output_text, "Hello");
    assert.deepEqual(final.usage, {
      input_tokens: 14, input_tokens_details: { cached_tokens: 4 }, output_tokens: 8, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 22,
    });
    const created = sseEvents(sse)[0].data.response;
    assert.equal(created.status, "in_progress");
    assert.deepEqual(created.output, []);
    assert.equal(created.usage, null);
    assert.equal(created.model, "client-model");
  });

  test("reasoning, tool calls and their events; the final Response equals the non-stream one", () => {
    const content: Block[] = [
      { type: "thinking", text: "let me think", signature: "U0lH" },
      { type: "text", text: "Checking the weather." },
      { type: "tool_use", id: "call_9", name: "get_weather", input: { city: "Zürich" } },
    ];
    const sse = encodeStream(canonicalStream(content, "tool_use", usage));
    const types = sseEvents(sse).map((e) => e.data.type);
    assert.deepEqual(types.slice(2, 9), [
      "response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
    ]);
    const fcAdded = sseEvents(sse).find((e) => e.data.type === "response.output_item.added" && e.data.item.type === "function_call")!.data;
    assert.deepEqual({ ...fcAdded.item, id: "" }, { id: "", type: "function_call", status: "in_progress", arguments: "", call_id: "call_9", name: "get_weather" });
    const argsDone = sseEvents(sse).find((e) => e.data.type === "response.function_call_arguments.done")!.data;
    assert.equal(argsDone.arguments, '{"city":"Zürich"}');
    assert.equal(argsDone.name, "get_weather");
    const final = assertResponsesStream(sse);
    const whole = encodeResponsesResponse(answer(content, "tool_use"), request()) as unknown as Response;
    assert.deepEqual(withoutIds(final.output), withoutIds(whole.output));
    assert.deepEqual(final.usage, whole.usage);
    assert.equal((final.output[0] as any).encrypted_content, "U0lH", "the signature rides in encrypted_content");
  });

  test("images arrive whole: an image_generation_call (base64) or a message linking it (URL), as in the whole answer", () => {
    const content: Block[] = [
      { type: "text", text: "Here:" },
      { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { kind: "url", url: "https://example.test/a.png" } },
    ];
    const events: CanonicalEvent[] = [
      { type: "message_start", id: "x", model: "client-model" },
      { type: "block_start", index: 0, block: { type: "text" } }, { type: "text_delta", index: 0, text: "Here:" }, { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } } },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, block: { type: "image", source: { kind: "url", url: "https://example.test/a.png" } } },
      { type: "block_stop", index: 2 },
      { type: "message_stop", stopReason: "end_turn", usage },
    ];
    const sse = encodeStream(events);
    const final = assertResponsesStream(sse);
    const whole = encodeResponsesResponse(answer(content), request()) as unknown as Response;
    assert.deepEqual(withoutIds(final.output), withoutIds(whole.output));
    assert.deepEqual(withoutIds(final.output.slice(1, 2)), [{ id: "", type: "image_generation_call", status: "completed", result: "iVBORw0KGgo=" }]);
    assert.equal((final.output[2] as any).content[0].text, "![image](https://example.test/a.png)");
    assert.ok(sseEvents(sse).some((e) => e.data.type === "response.image_generation_call.completed"));
  });

  test("a stop at max_tokens ends with response.incomplete", () => {
    const sse = encodeStream(canonicalStream([{ type: "text", text: "cut sh" }], "max_tokens", usage));
    const last = sseEvents(sse).at(-1)!.data;
    assert.equal(last.type, "response.incomplete");
    assert.deepEqual(last.response.incomplete_details, { reason: "max_output_tokens" });
    assertResponsesStream(sse);
  });

  test("an error before the response began is a lone error event; after, error then response.failed", () => {
    const lone = sseEvents(encodeStream([{ type: "error", status: 502, message: "upstream broke" }]));
    assert.deepEqual(lone, [{ event: "error", data: { type: "error", code: "upstream_error", message: "upstream broke", param: null, sequence_number: 0 } }]);
    const enc = responsesStreamEncoder(request({ stream: true }));
    const sse = [
      { type: "message_start", id: "x", model: "client-model" }, { type: "block_start", index: 0, block: { type: "text" } },
      { type: "text_delta", index: 0, text: "partial" }, { type: "error", status: 504, message: "went silent", code: "upstream_timeout" },
    ].map((e) => enc.encode(e as CanonicalEvent)).join("");
    const events = sseEvents(sse);
    assert.deepEqual(events.map((e) => e.data.sequence_number), events.map((_, i) => i));
    const [err, failed] = events.slice(-2).map((e) => e.data);
    assert.equal(err.type, "error");
    assert.equal(err.message, "went silent");
    assert.equal(failed.type, "response.failed");
    assert.equal(failed.response.status, "failed");
    assert.deepEqual(failed.response.error, { code: "server_error", message: "went silent" });
  });
});

// ---- properties ----

const text = fc.string({ minLength: 1, maxLength: 40, unit: "grapheme" });
const json = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
  .map((o) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>); // plain objects, as a client's JSON parses
const toolUse = fc.record({
  type: fc.constant("tool_use" as const),
  id: fc.stringMatching(/^call_[A-Za-z0-9]{1,20}$/),
  name: fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_-]{0,30}$/),
  input: json,
});
const block: fc.Arbitrary<Block> = fc.oneof(
  text.map((t) => ({ type: "text" as const, text: t })),
  toolUse,
  fc.record({ type: fc.constant("thinking" as const), text, signature: fc.base64String({ minLength: 4, maxLength: 24 }) }),
);
const count = fc.nat({ max: 1_000_000 });
const usageArb: fc.Arbitrary<Usage> = fc.record({ input: count, cacheRead: count, cacheWrite: count, output: count, reasoning: count })
  .map((u) => ({ ...u, reasoning: Math.min(u.reasoning, u.output) }));

/** Content as it reads back: consecutive tool calls keep their order, texts stay texts. */
function assistantBlocksOf(output: readonly unknown[]): Block[] {
  const req = decodeResponsesRequest({ model: "m", input: [{ role: "user", content: "q" }, ...(output as object[])] });
  return req.messages.slice(1).flatMap((m) => m.content);
}

describe("properties", () => {
  test("responses → canonical → responses keeps text, tool calls (names, call ids, arguments), reasoning and usage", () => {
    fc.assert(fc.property(fc.array(block, { minLength: 1, maxLength: 6 }), usageArb, (generated, u) => {
      const content = JSON.parse(JSON.stringify(generated)) as Block[]; // plain objects, as decoders make
      const whole = encodeResponsesResponse(answer(content, "end_turn", u), request()) as unknown as Response;
      // A client sends the output back as input items (store: false): the same blocks come back.
      assert.deepEqual(assistantBlocksOf(whole.output), content);
      assert.deepEqual(normalizeResponsesUsage(whole.usage), u);
      // The stream gives the same Response, as the SDK accumulates it.
      const final = assertResponsesStream(encodeStream(canonicalStream(content, "end_turn", u)));
      assert.deepEqual(withoutIds(final.output), withoutIds(whole.output));
      assert.deepEqual(final.usage, whole.usage);
      assert.equal(final.output_text, content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join(""));
    }), { numRuns: 200 });
  });
});
