// The responses protocol as an outbound spoke: the request encoder (every block kind, tools,
// tool_choice, reasoning, formats, what is refused), the Response decoder (each output item
// kind, incomplete answers, usage), the stream decoder over the API's real event sequences
// (held to the canonical stream contract), the adapter choice per channel and model, and a
// property: content written as a responses answer and decoded again keeps text, calls, usage.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Response, ResponseStreamEvent } from "openai/resources/responses/responses";
import { UnsupportedField } from "../../src/protocols/adapter.js";
import type { Block, CanonicalEvent, CanonicalRequest } from "../../src/protocols/canonical.js";
import { chatOutbound } from "../../src/protocols/openai/index.js";
import { responsesOutbound } from "../../src/protocols/openai/responses-outbound.js";
import { encodeResponsesRequest } from "../../src/protocols/openai/responses-request-encode.js";
import { decodeResponsesResponse } from "../../src/protocols/openai/responses-response-decode.js";
import { responsesStreamDecoder } from "../../src/protocols/openai/responses-stream-decode.js";
import { normalizeResponsesUsage } from "../../src/protocols/openai/responses-usage.js";
import { outboundAdapterFor, passesThrough, routeProtocols } from "../../src/protocols/registry.js";
import type { Endpoint } from "../../src/runtime/types.js";
import { assertStreamContract } from "../helpers/stream-contract.js";

const BLOB = "gAAAAABo_encrypted_reasoning_blob==";
const base: CanonicalRequest = { model: "client-name", system: [], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], stream: false };
const encode = (r: Partial<CanonicalRequest>) => encodeResponsesRequest({ ...base, ...r }, "gpt-5-codex");

describe("canonical request → responses request", () => {
  test("every block kind becomes its input item, in order; store false; instructions from the system", () => {
    const body = encode({
      system: [{ type: "text", text: "Be brief." }, { type: "text", text: "Use tools." }],
      messages: [
        { role: "user", content: [
          { type: "text", text: "look", cache: { type: "ephemeral" } },
          { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
          { type: "image", source: { kind: "url", url: "https://example.test/cat.jpg" } },
        ] },
        { role: "assistant", content: [
          { type: "thinking", text: "they want weather", signature: BLOB },
          { type: "thinking", text: "from another vendor", signature: "EqQBCkgIARABGAIiQL" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "text", text: "Checking." },
          { type: "text", text: "One moment." },
          { type: "tool_use", id: "call_1", name: "weather", input: { city: "Bern" } },
          { type: "tool_use", id: "call_2", name: "time", input: {} },
        ] },
        { role: "user", content: [
          { type: "text", text: "also this" },
          { type: "tool_result", toolUseId: "call_1", content: [{ type: "text", text: "12°C" }, { type: "text", text: "rain" }] },
          { type: "tool_result", toolUseId: "call_2", isError: true, content: [{ type: "text", text: "no clock" }] },
        ] },
        { role: "system", content: [{ type: "text", text: "Answer in French." }] },
        { role: "user", content: [
          { type: "tool_result", toolUseId: "call_3", content: [
            { type: "text", text: "chart" }, { type: "image", source: { kind: "url", url: "https://example.test/c.png" } },
          ] },
        ] },
      ],
      maxTokens: 500, temperature: 0.2, topP: 0.9, user: "u-1", stream: true,
    });
    assert.deepEqual(body, {
      model: "gpt-5-codex",
      instructions: "Be brief.\n\nUse tools.",
      input: [
        { type: "message", role: "user", content: [
          { type: "input_text", text: "look" },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
          { type: "input_image", image_url: "https://example.test/cat.jpg", detail: "auto" },
        ] },
        { type: "reasoning", summary: [{ type: "summary_text", text: "they want weather" }], encrypted_content: BLOB },
        { type: "message", role: "assistant", content: [
          { type: "output_text", text: "Checking.", annotations: [] }, { type: "output_text", text: "One moment.", annotations: [] },
        ] },
        { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Bern"}' },
        { type: "function_call", call_id: "call_2", name: "time", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "12°C\nrain" },
        { type: "function_call_output", call_id: "call_2", output: "Error: no clock" },
        { type: "message", role: "user", content: [{ type: "input_text", text: "also this" }] },
        { type: "message", role: "system", content: [{ type: "input_text", text: "Answer in French." }] },
        { type: "function_call_output", call_id: "call_3", output: [
          { type: "input_text", text: "chart" }, { type: "input_image", image_url: "https://example.test/c.png", detail: "auto" },
        ] },
      ],
      max_output_tokens: 500, temperature: 0.2, top_p: 0.9,
      include: ["reasoning.encrypted_content"],
      user: "u-1", store: false, stream: true,
    });
  });

  test("function tools are flat and not strict; every tool_choice; parallel calls", () => {
    const tools = [
      { name: "weather", description: "Weather now", parameters: { type: "object", properties: { city: { type: "string" } } } },
      { name: "noop", parameters: { type: "object", properties: {} } },
    ];
    const body = encode({ tools, toolChoice: { type: "auto" }, parallelToolCalls: false });
    assert.deepEqual(body.tools, [
      { type: "function", name: "weather", description: "Weather now", parameters: tools[0].parameters, strict: false },
      { type: "function", name: "noop", parameters: tools[1].parameters, strict: false },
    ]);
    assert.equal(body.tool_choice, "auto");
    assert.equal(body.parallel_tool_calls, false);
    assert.equal(encode({ tools, toolChoice: { type: "none" } }).tool_choice, "none");
    assert.equal(encode({ tools, toolChoice: { type: "any" } }).tool_choice, "required");
    assert.deepEqual(encode({ tools, toolChoice: { type: "tool", name: "noop" } }).tool_choice, { type: "function", name: "noop" });
    assert.equal("tools" in encode({}), false);
  });

  test("reasoning: effort as given, budgets to the nearest effort, and encrypted reasoning asked back", () => {
    assert.deepEqual(encode({ reasoning: { effort: "high" } }).reasoning, { effort: "high" });
    assert.deepEqual(encode({ reasoning: { budgetTokens: 1000 } }).reasoning, { effort: "minimal" });
    assert.deepEqual(encode({ reasoning: { budgetTokens: 2000 } }).reasoning, { effort: "low" });
    assert.deepEqual(encode({ reasoning: { budgetTokens: 8000 } }).reasoning, { effort: "medium" });
    assert.deepEqual(encode({ reasoning: { budgetTokens: 30000 } }).reasoning, { effort: "high" });
    assert.deepEqual(encode({ reasoning: { effort: "low" } }).include, ["reasoning.encrypted_content"]);
    const plain = encode({});
    assert.equal("reasoning" in plain, false);
    assert.equal("include" in plain, false, "a model that does not reason refuses the include");
  });

  test("JSON formats become text.format; stream only when asked; a tiny output cap is raised to the API's least", () => {
    const schema = { type: "object", properties: { a: { type: "number" } }, required: ["a"] };
    assert.deepEqual(encode({ responseFormat: { schema, name: "answer" } }).text, { format: { type: "json_schema", name: "answer", schema } });
    assert.deepEqual(encode({ responseFormat: { schema } }).text, { format: { type: "json_schema", name: "response", schema } });
    assert.deepEqual(encode({ responseFormat: {} }).text, { format: { type: "json_object" } });
    assert.equal("stream" in encode({}), false);
    assert.equal(encode({ maxTokens: 1 }).max_output_tokens, 16, "the API's least; less is a 400");
    assert.equal(encode({}).store, false);
  });

  test("several candidates and stop sequences are refused naming the canonical field; dropped ones are not written", () => {
    const refused = (r: Partial<CanonicalRequest>, field: string) => assert.throws(() => encode(r), (e: unknown) => {
      assert.ok(e instanceof UnsupportedField, String(e));
      assert.equal(e.field, field);
      return true;
    });
    refused({ candidates: 2 }, "candidates");
    refused({ stop: ["END"] }, "stop");
    // field-policy.ts drops these toward the responses protocol (named to the client).
    const body = encode({ topK: 40, frequencyPenalty: 0.5, presencePenalty: 0.1, seed: 7, candidates: 1, stop: [] });
    for (const k of ["top_k", "frequency_penalty", "presence_penalty", "seed", "n", "stop"]) assert.equal(k in body, false, k);
  });

  test("blocks that cannot stand where they are: 400 naming the place", () => {
    assert.throws(() => encode({ messages: [{ role: "user", content: [{ type: "tool_use", id: "c", name: "n", input: {} }] }] }),
      /messages\[0\]\.content\[0\]: a tool_use block cannot appear in a user message/);
    // An assistant image (an earlier answer's) is dropped by the field policy (modelImages): left out.
    assert.deepEqual(encode({ messages: [{ role: "assistant", content: [{ type: "image", source: { kind: "url", url: "u" } }] }] }).input, []);
  });
});

const usageWire = {
  input_tokens: 1200, input_tokens_details: { cached_tokens: 1000 },
  output_tokens: 300, output_tokens_details: { reasoning_tokens: 120 }, total_tokens: 1500,
};
const usageCanonical = { input: 200, cacheRead: 1000, cacheWrite: 0, output: 300, reasoning: 120 };

/** A Response object as the API returns it, with `output` and overrides. */
function response(output: unknown[], extra: Record<string, unknown> = {}) {
  return {
    id: "resp_abc", object: "response", created_at: 1_741_476_542, status: "completed", error: null, incomplete_details: null,
    instructions: null, model: "gpt-5-codex-2025", output, parallel_tool_calls: true, temperature: 1, tool_choice: "auto",
    tools: [], top_p: 1, store: false, usage: usageWire, ...extra,
  };
}

describe("responses answer → canonical", () => {
  test("reasoning, message text and function calls become thinking, text and tool_use; usage as billing reads it", () => {
    const r = decodeResponsesResponse(response([
      { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "**Plan**" }, { type: "summary_text", text: "look up" }], encrypted_content: BLOB },
      { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Let me check.", annotations: [], logprobs: [] }] },
      { id: "fc_1", type: "function_call", status: "completed", call_id: "call_9", name: "weather", arguments: '{"city":"Bern"}' },
      { id: "fc_2", type: "function_call", status: "completed", call_id: "call_10", name: "time", arguments: "" },
      { id: "ws_1", type: "web_search_call", status: "completed" },
    ]));
    assert.deepEqual(r, {
      id: "resp_abc", model: "gpt-5-codex-2025",
      content: [
        { type: "thinking", text: "**Plan**\n\nlook up", signature: BLOB },
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: "call_9", name: "weather", input: { city: "Bern" } },
        { type: "tool_use", id: "call_10", name: "time", input: {} },
      ],
      stopReason: "tool_use",
      // The hosted web search it ran is billed per call, beside the tokens.
      usage: { ...usageCanonical, toolCalls: { web_search: 1 } },
    });
    assert.deepEqual(r.usage, { ...normalizeResponsesUsage(usageWire), toolCalls: { web_search: 1 } }, "the same usage pass-through billing reads");
  });

  test("reasoning without summary or content is left out; only encrypted content is kept as a signed empty thinking", () => {
    const r = decodeResponsesResponse(response([
      { id: "rs_1", type: "reasoning", summary: [] },
      { id: "rs_2", type: "reasoning", summary: [], encrypted_content: BLOB },
      { id: "rs_3", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "raw thought" }] },
      { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "ok", annotations: [] }] },
    ]));
    assert.deepEqual(r.content, [
      { type: "thinking", text: "", signature: BLOB }, { type: "thinking", text: "raw thought" }, { type: "text", text: "ok" },
    ]);
    assert.equal(r.stopReason, "end_turn");
  });

  test("refusal, incomplete answers and their stop reasons", () => {
    const refusal = decodeResponsesResponse(response([
      { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "refusal", refusal: "I can't help with that." }] },
    ]));
    assert.deepEqual(refusal.content, [{ type: "text", text: "I can't help with that." }]);
    assert.equal(refusal.stopReason, "refusal");
    const cut = decodeResponsesResponse(response([
      { id: "msg_1", type: "message", role: "assistant", status: "incomplete", content: [{ type: "output_text", text: "Once upon", annotations: [] }] },
    ], { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }));
    assert.equal(cut.stopReason, "max_tokens");
    const filtered = decodeResponsesResponse(response([], { status: "incomplete", incomplete_details: { reason: "content_filter" } }));
    assert.equal(filtered.stopReason, "content_filter");
  });

  test("cache writes (input_tokens_details.cache_write_tokens) are split out of input, as in chat-completions usage", () => {
    assert.deepEqual(normalizeResponsesUsage({
      input_tokens: 1500, input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 300 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 },
    }), { input: 200, cacheRead: 1000, cacheWrite: 300, output: 10, reasoning: 0 });
  });

  test("no usage is zero usage; garbage and failed responses are upstream faults", () => {
    assert.deepEqual(decodeResponsesResponse(response([], { usage: null })).usage, { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
    assert.throws(() => decodeResponsesResponse({ choices: [] }), /no output/);
    assert.throws(() => decodeResponsesResponse(response([], { status: "failed", error: { code: "server_error", message: "boom" } })), /boom/);
    assert.throws(() => decodeResponsesResponse(response([{ type: "function_call", call_id: "c", name: "f", arguments: "[1]" }])), /not a JSON object/);
  });
});

type Ev = Record<string, unknown> & { type: ResponseStreamEvent["type"] };

/** Numbers events as the API does and decodes them one SSE event at a time. */
function decodeStream(events: readonly (Ev | WireEvent)[], withEnd = true): CanonicalEvent[] {
  const d = responsesStreamDecoder();
  const out: CanonicalEvent[] = [];
  events.forEach((e, i) => out.push(...d.decode({ event: e.type, data: JSON.stringify({ ...e, sequence_number: i }) })));
  if (withEnd) out.push(...d.end());
  return out;
}

const created = (status = "in_progress") => ({ id: "resp_1", object: "response", created_at: 1, status, model: "gpt-5-codex", output: [], usage: null });

/** An event as the SDK types it, before numbering: the types check the shapes below. */
type WireEvent = ResponseStreamEvent extends infer E ? E extends ResponseStreamEvent ? Omit<E, "sequence_number"> : never : never;

/** A whole Response object as the SDK types it. */
function wireResponse(status: Response["status"], extra: Partial<Response> = {}): Response {
  return {
    id: "resp_1", object: "response", created_at: 1, status, model: "gpt-5-codex", output: [], output_text: "", error: null,
    incomplete_details: null, instructions: null, metadata: {}, parallel_tool_calls: true, temperature: 1, tool_choice: "auto",
    tools: [], top_p: 1, store: false, ...extra,
  } as Response;
}

/** The API's events for: reasoning (two summary parts, encrypted), a message, a function call. */
const fullSequence: WireEvent[] = [
  { type: "response.created", response: wireResponse("in_progress") },
  { type: "response.in_progress", response: wireResponse("in_progress") },
  { type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } },
  { type: "response.reasoning_summary_part.added", item_id: "rs_1", output_index: 0, summary_index: 0, part: { type: "summary_text", text: "" } },
  { type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index: 0, delta: "**Plan" },
  { type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index: 0, delta: "**" },
  { type: "response.reasoning_summary_text.done", item_id: "rs_1", output_index: 0, summary_index: 0, text: "**Plan**" },
  { type: "response.reasoning_summary_part.done", item_id: "rs_1", output_index: 0, summary_index: 0, part: { type: "summary_text", text: "**Plan**" } },
  { type: "response.reasoning_summary_part.added", item_id: "rs_1", output_index: 0, summary_index: 1, part: { type: "summary_text", text: "" } },
  { type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index: 1, delta: "look up" },
  { type: "response.reasoning_summary_text.done", item_id: "rs_1", output_index: 0, summary_index: 1, text: "look up" },
  { type: "response.reasoning_summary_part.done", item_id: "rs_1", output_index: 0, summary_index: 1, part: { type: "summary_text", text: "look up" } },
  { type: "response.output_item.done", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "**Plan**" }, { type: "summary_text", text: "look up" }], encrypted_content: BLOB } },
  { type: "response.output_item.added", output_index: 1, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } },
  { type: "response.content_part.added", item_id: "msg_1", output_index: 1, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } },
  { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "Let me ", logprobs: [] },
  { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "check.", logprobs: [] },
  { type: "response.output_text.done", item_id: "msg_1", output_index: 1, content_index: 0, text: "Let me check.", logprobs: [] },
  { type: "response.content_part.done", item_id: "msg_1", output_index: 1, content_index: 0, part: { type: "output_text", text: "Let me check.", annotations: [], logprobs: [] } },
  { type: "response.output_item.done", output_index: 1, item: { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Let me check.", annotations: [], logprobs: [] }] } },
  { type: "response.output_item.added", output_index: 2, item: { id: "fc_1", type: "function_call", status: "in_progress", arguments: "", call_id: "call_9", name: "weather" } },
  { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 2, delta: '{"city":' },
  { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 2, delta: '"Bern"}' },
  { type: "response.function_call_arguments.done", item_id: "fc_1", output_index: 2, name: "weather", arguments: '{"city":"Bern"}' },
  { type: "response.output_item.done", output_index: 2, item: { id: "fc_1", type: "function_call", status: "completed", arguments: '{"city":"Bern"}', call_id: "call_9", name: "weather" } },
  { type: "response.completed", response: wireResponse("completed", { usage: { ...usageWire, input_tokens_details: { ...usageWire.input_tokens_details, cache_write_tokens: 0 } } }) },
];

describe("responses stream → canonical events", () => {
  test("the full event sequence: thinking with its signature, text, a tool call, the stop with usage", () => {
    const events = decodeStream(fullSequence);
    assertStreamContract(events);
    assert.deepEqual(events, [
      { type: "message_start", id: "resp_1", model: "gpt-5-codex" },
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "thinking_delta", index: 0, text: "**Plan" },
      { type: "thinking_delta", index: 0, text: "**" },
      { type: "thinking_delta", index: 0, text: "\n\n" },
      { type: "thinking_delta", index: 0, text: "look up" },
      { type: "signature_delta", index: 0, signature: BLOB },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "text" } },
      { type: "text_delta", index: 1, text: "Let me " },
      { type: "text_delta", index: 1, text: "check." },
      { type: "block_stop", index: 1 },
      { type: "block_start", index: 2, block: { type: "tool_use", id: "call_9", name: "weather" } },
      { type: "tool_input_delta", index: 2, partialJson: '{"city":' },
      { type: "tool_input_delta", index: 2, partialJson: '"Bern"}' },
      { type: "block_stop", index: 2 },
      { type: "message_stop", stopReason: "tool_use", usage: usageCanonical },
    ]);
  });

  test("reasoning that is only encrypted content opens, signs and closes a thinking block at its done", () => {
    const events = decodeStream([
      { type: "response.created", response: created() },
      { type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } },
      { type: "response.output_item.done", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [], encrypted_content: BLOB } },
      { type: "response.output_item.added", output_index: 1, item: { id: "rs_2", type: "reasoning", summary: [] } },
      { type: "response.output_item.done", output_index: 1, item: { id: "rs_2", type: "reasoning", summary: [] } },
      { type: "response.output_item.added", output_index: 2, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } },
      { type: "response.output_text.delta", item_id: "msg_1", output_index: 2, content_index: 0, delta: "Hi", logprobs: [] },
      { type: "response.output_item.done", output_index: 2, item: { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hi", annotations: [] }] } },
      { type: "response.completed", response: { ...created("completed"), usage: usageWire } },
    ]);
    assertStreamContract(events);
    assert.deepEqual(events.slice(1, 4), [
      { type: "block_start", index: 0, block: { type: "thinking" } },
      { type: "signature_delta", index: 0, signature: BLOB },
      { type: "block_stop", index: 0 },
    ]);
    assert.deepEqual(events.at(-1), { type: "message_stop", stopReason: "end_turn", usage: usageCanonical });
  });

  test("response.incomplete stops at the limit; a refusal stops as a refusal", () => {
    const cut = decodeStream([
      { type: "response.created", response: created() },
      { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Once upon", logprobs: [] },
      { type: "response.incomplete", response: { ...created("incomplete"), incomplete_details: { reason: "max_output_tokens" }, usage: usageWire } },
    ]);
    assertStreamContract(cut);
    assert.deepEqual(cut.at(-1), { type: "message_stop", stopReason: "max_tokens", usage: usageCanonical });
    const refused = decodeStream([
      { type: "response.created", response: created() },
      { type: "response.output_item.added", output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } },
      { type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "refusal", refusal: "" } },
      { type: "response.refusal.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "I can't" },
      { type: "response.refusal.done", item_id: "msg_1", output_index: 0, content_index: 0, refusal: "I can't" },
      { type: "response.output_item.done", output_index: 0, item: { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "refusal", refusal: "I can't" }] } },
      { type: "response.completed", response: { ...created("completed"), usage: usageWire } },
    ]);
    assertStreamContract(refused);
    assert.deepEqual(refused.filter((e) => e.type === "text_delta"), [{ type: "text_delta", index: 0, text: "I can't" }]);
    assert.equal((refused.at(-1) as { stopReason: string }).stopReason, "refusal");
  });

  test("items a server sends only whole (no deltas) are emitted at their done", () => {
    const events = decodeStream([
      { type: "response.created", response: created() },
      { type: "response.output_item.done", output_index: 0, item: { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "whole", annotations: [] }] } },
      { type: "response.output_item.added", output_index: 1, item: { id: "fc_1", type: "function_call", arguments: "", call_id: "call_1", name: "f" } },
      { type: "response.output_item.done", output_index: 1, item: { id: "fc_1", type: "function_call", arguments: '{"a":1}', call_id: "call_1", name: "f" } },
      { type: "response.completed", response: { ...created("completed"), usage: usageWire } },
    ]);
    assertStreamContract(events);
    assert.deepEqual(events.filter((e) => e.type === "text_delta" || e.type === "tool_input_delta"), [
      { type: "text_delta", index: 0, text: "whole" }, { type: "tool_input_delta", index: 1, partialJson: '{"a":1}' },
    ]);
  });

  test("failures end the stream with one error: error event, response.failed, garbage, an early end", () => {
    const open: Ev[] = [
      { type: "response.created", response: created() },
      { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hel", logprobs: [] },
    ];
    const cases: [Ev[], RegExp, number][] = [
      [[...open, { type: "error", code: "rate_limit_exceeded", message: "Slow down", param: null }], /Slow down/, 429],
      [[...open, { type: "response.failed", response: { ...created("failed"), error: { code: "server_error", message: "model crashed" } } }], /model crashed/, 502],
      [[...open, { type: "response.failed", response: { ...created("failed"), error: { code: "rate_limit_exceeded", message: "too fast" } } }], /too fast/, 429],
      [open, /ended before the response completed/, 502],
      [[{ type: "error", code: "server_error", message: "down", param: null }], /down/, 502],
    ];
    for (const [events, message, status] of cases) {
      const out = decodeStream(events);
      assertStreamContract(out);
      const last = out.at(-1)!;
      assert.equal(last.type, "error");
      assert.match((last as { message: string }).message, message);
      assert.equal((last as { status: number }).status, status);
      assert.equal(out.filter((e) => e.type === "error").length, 1);
      if (out.length > 1) assert.deepEqual(out.at(-2), { type: "block_stop", index: 0 }, "what was open is closed first");
    }
    const d = responsesStreamDecoder();
    assert.deepEqual(d.decode({ data: "{not json" }).map((e) => e.type), ["error"]);
    assert.deepEqual(d.end(), [], "nothing follows the end");
    assert.deepEqual(responsesStreamDecoder().end().map((e) => e.type), ["error"], "no data at all");
  });

  test("after response.completed nothing more is emitted, and end() adds nothing", () => {
    const d = responsesStreamDecoder();
    for (const [i, e] of fullSequence.entries()) d.decode({ event: e.type, data: JSON.stringify({ ...e, sequence_number: i }) });
    assert.deepEqual(d.decode({ data: JSON.stringify({ type: "response.output_text.delta", output_index: 5, content_index: 0, delta: "late" }) }), []);
    assert.deepEqual(d.end(), []);
  });
});

describe("which outbound adapter and exchange a channel gets", () => {
  const set = (...e: Endpoint[]) => new Set<Endpoint>(e);
  test("a responses-only model on an OpenAI-protocol channel speaks the responses protocol; all else as before", () => {
    assert.equal(outboundAdapterFor("openai", set("responses")), responsesOutbound);
    assert.equal(outboundAdapterFor("openai", set("chat")), chatOutbound);
    assert.equal(outboundAdapterFor("openai", set("chat", "responses")), chatOutbound);
    assert.notEqual(outboundAdapterFor("anthropic", set("responses")), responsesOutbound);
    assert.notEqual(outboundAdapterFor("gemini", set("responses")), responsesOutbound);
    assert.equal(responsesOutbound.path(base, "m"), "/v1/responses");
    assert.equal(responsesOutbound.errorMessage({ error: { message: "bad key", type: "invalid_request_error" } }), "bad key");
  });

  test("chat-completions clients of a responses-only model are converted; /v1/responses of it passes through", () => {
    const chat = routeProtocols["chat-completions"];
    assert.equal(passesThrough("chat-completions", chat, "openai", set("responses")), false);
    assert.equal(passesThrough("chat-completions", chat, "openai", set("chat")), true);
    assert.equal(passesThrough("chat-completions", chat, "openai", set("chat", "responses")), true);
    assert.equal(passesThrough("responses", routeProtocols.responses, "openai", set("responses")), true);
    assert.equal(passesThrough("messages", routeProtocols.messages, "anthropic", set("responses")), true);
  });
});

/** Canonical answer content as the responses API would write it: whole, and as events. */
function asWire(content: readonly Block[], usage: typeof usageWire) {
  const output: Record<string, unknown>[] = [];
  const events: Ev[] = [{ type: "response.created", response: created() }];
  content.forEach((b, at) => {
    if (b.type === "text") {
      const item = { id: `msg_${at}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: b.text, annotations: [] }] };
      output.push(item);
      events.push({ type: "response.output_item.added", output_index: at, item: { ...item, content: [] } });
      for (const d of chunks(b.text)) events.push({ type: "response.output_text.delta", item_id: item.id, output_index: at, content_index: 0, delta: d, logprobs: [] });
      events.push({ type: "response.output_item.done", output_index: at, item });
    } else if (b.type === "tool_use") {
      const args = JSON.stringify(b.input);
      const item = { id: `fc_${at}`, type: "function_call", status: "completed", call_id: b.id, name: b.name, arguments: args };
      output.push(item);
      events.push({ type: "response.output_item.added", output_index: at, item: { ...item, arguments: "" } });
      for (const d of chunks(args)) events.push({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: at, delta: d });
      events.push({ type: "response.output_item.done", output_index: at, item });
    }
  });
  events.push({ type: "response.completed", response: { ...created("completed"), usage } });
  return { whole: response(output, { usage }), events };
}

function chunks(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += 3) out.push(s.slice(i, i + 3));
  return out;
}

/** Joins a decoded stream back into blocks (text and tool calls). */
function joined(events: readonly CanonicalEvent[]): Block[] {
  const blocks: { type: string; text: string; id?: string; name?: string }[] = [];
  for (const e of events) {
    if (e.type === "block_start") blocks[e.index] = { type: e.block.type, text: "", ...(e.block.type === "tool_use" && { id: e.block.id, name: e.block.name }) };
    else if (e.type === "text_delta") blocks[e.index].text += e.text;
    else if (e.type === "tool_input_delta") blocks[e.index].text += e.partialJson;
  }
  return blocks.map((b): Block => (b.type === "tool_use"
    ? { type: "tool_use", id: b.id!, name: b.name!, input: JSON.parse(b.text || "{}") as Record<string, unknown> }
    : { type: "text", text: b.text }));
}

test("property: canonical content written as a responses answer decodes back with its text, tool calls and usage", () => {
  const text = fc.string({ minLength: 1, maxLength: 40 }).map((t): Block => ({ type: "text", text: t }));
  const call = fc.record({
    id: fc.stringMatching(/^call_[a-zA-Z0-9]{1,8}$/), name: fc.stringMatching(/^[a-z_]{1,12}$/),
    input: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean()))
      .map((d) => ({ ...d })), // a plain object, as JSON.parse builds
  }).map((c): Block => ({ type: "tool_use", ...c }));
  const usage = fc.record({ input: fc.nat(1e6), cached: fc.nat(1e6), output: fc.nat(1e6), reasoning: fc.nat(1e6) })
    .map((u) => ({
      input_tokens: u.input + u.cached, input_tokens_details: { cached_tokens: u.cached },
      output_tokens: u.output + u.reasoning, output_tokens_details: { reasoning_tokens: u.reasoning },
      total_tokens: u.input + u.cached + u.output + u.reasoning,
    }));
  fc.assert(fc.property(fc.array(fc.oneof(text, call), { minLength: 1, maxLength: 6 }), usage, (content, u) => {
    const { whole, events } = asWire(content, u);
    const expectedUsage = {
      input: u.input_tokens - u.input_tokens_details.cached_tokens, cacheRead: u.input_tokens_details.cached_tokens,
      cacheWrite: 0, output: u.output_tokens, reasoning: u.output_tokens_details.reasoning_tokens,
    };
    const decoded = decodeResponsesResponse(whole);
    assert.deepEqual(decoded.content, content);
    assert.deepEqual(decoded.usage, expectedUsage);
    assert.equal(decoded.stopReason, content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
    const streamed = decodeStream(events);
    assertStreamContract(streamed);
    assert.deepEqual(joined(streamed), content);
    const stop = streamed.at(-1)!;
    assert.equal(stop.type, "message_stop");
    assert.deepEqual((stop as { usage: unknown }).usage, expectedUsage);
  }), { numRuns: 200 });
});
