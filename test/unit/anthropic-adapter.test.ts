// The messages-protocol adapters against golden wire samples written from the official API
// docs and SDK types, and the SDK's own stream parser run offline over our encoded SSE.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { messagesInbound, messagesOutbound } from "../../src/protocols/anthropic/index.js";
import type { SseEvent } from "../../src/protocols/adapter.js";
import type { CanonicalEvent, CanonicalRequest, CanonicalResponse } from "../../src/protocols/canonical.js";
import { eventData, SseSplitter } from "../../src/protocols/sse.js";
import { assertStreamContract } from "../helpers/stream-contract.js";

type Json = Record<string, unknown>;
const golden = (name: string): any => JSON.parse(readFileSync(new URL(`../golden/anthropic/${name}`, import.meta.url), "utf8"));
const wireStream = (): { event: string; data: Json }[] => golden("stream.json");
const toSse = (events: { event: string; data: Json }[]): SseEvent[] => events.map((e) => ({ event: e.event, data: JSON.stringify(e.data) }));

function decodeStream(events: SseEvent[]): CanonicalEvent[] {
  const d = messagesOutbound.streamDecoder();
  return [...events.flatMap((e) => d.decode(e)), ...d.end()];
}

/** Re-parses SSE text with the SSE rules: each event's name and JSON data. */
function parseSse(text: string): { event: string; data: Json }[] {
  const s = new SseSplitter();
  const raw = [...s.push(Buffer.from(text)), s.flush()].filter((r) => r.trim() !== "");
  return raw.map((r) => ({ event: /^event: (.*)$/m.exec(r)![1], data: JSON.parse(eventData(r)!) }));
}

function encodeStream(events: CanonicalEvent[], req: CanonicalRequest): string {
  const enc = messagesInbound.streamEncoder(req);
  return events.map((e) => enc.encode(e)).join("") + messagesInbound.streamTrailer;
}

/** The official SDK's stream accumulation over SSE text, with no network. */
function sdkStream(sse: string): ReturnType<Anthropic["messages"]["stream"]> {
  const client = new Anthropic({
    apiKey: "test", baseURL: "http://sdk.test", maxRetries: 0,
    fetch: async () => new Response(sse, { headers: { "content-type": "text/event-stream" } }),
  });
  return client.messages.stream({ model: "claude-opus-4-6", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
}

function rejects400(fn: () => unknown, field: string, code = "invalid_parameter"): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GatewayError, String(e));
    assert.equal(e.status, 400);
    assert.equal(e.code, code);
    assert.match(e.message, new RegExp(`^\`?${field.replace(/[[\].]/g, "\\$&")}`));
    return true;
  });
}

const base = { model: "claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };
const decode = (json: Json): CanonicalRequest => messagesInbound.decodeRequest(json, {});

test("anthropic request: golden wire decodes to the expected canonical request", () => {
  assert.deepEqual(decode(golden("request.json")), golden("request.canonical.json"));
});

test("anthropic request: canonical encodes back to the golden wire request", () => {
  const canonical = golden("request.canonical.json") as CanonicalRequest;
  assert.deepEqual(messagesOutbound.encodeRequest(canonical, "claude-sonnet-4-5"), golden("request.json"));
  assert.equal(messagesOutbound.path(canonical, "claude-sonnet-4-5"), "/v1/messages");
});

test("anthropic request: string shorthands, system messages, top-level cache_control, effort", () => {
  const r = decode({
    ...base, system: "Be brief.", cache_control: { type: "ephemeral" }, temperature: 0.2, top_p: 0.9, top_k: 40,
    service_tier: "auto", speed: "fast", thinking: { type: "adaptive" }, output_config: { effort: "max" },
    messages: [{ role: "system", content: "Answer in French." }, { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "ok", is_error: true }] }],
  });
  assert.deepEqual(r.system, [{ type: "text", text: "Be brief." }, { type: "text", text: "Answer in French." }]);
  assert.deepEqual(r.messages, [{ role: "user", content: [{ type: "tool_result", toolUseId: "x", isError: true, content: [{ type: "text", text: "ok" }], cache: { type: "ephemeral" } }] }]);
  assert.deepEqual(r.reasoning, { effort: "high" });
  assert.equal(r.topK, 40);
  assert.equal(r.stream, false);
  assert.deepEqual(decode({ ...base, thinking: { type: "disabled" } }).reasoning, undefined);
  assert.deepEqual(decode({ ...base, output_config: { format: { type: "json_schema", schema: { type: "object" } } } }).responseFormat, { schema: { type: "object" } });
});

test("anthropic request: what the hub cannot carry is a 400 naming the field", () => {
  rejects400(() => decode({ model: "m", messages: [] }), "max_tokens", "missing_required_parameter");
  rejects400(() => decode({ max_tokens: 1, messages: [] }), "model", "missing_required_parameter");
  // Issue 19: typed tools are no longer refused when offered (web search is mapped, the others
  // dropped and named: see below); forcing one is.
  rejects400(() => decode({ ...base, tools: [{ type: "bash_20250124", name: "bash" }], tool_choice: { type: "tool", name: "bash" } }), "tool_choice.name");
  rejects400(() => decode({ ...base, messages: [{ role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "x" } }] }] }), "messages[0].content[0].type");
  rejects400(() => decode({ ...base, messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f" } }] }] }), "messages[0].content[0].source.type");
  rejects400(() => decode({ ...base, container: "cntr_1" }), "container");
  rejects400(() => decode({ ...base, mcp_servers: [{ type: "url", url: "https://x", name: "x" }] }), "mcp_servers");
  // Issue 19: a field the table does not know (frequency_penalty is not a messages field) is
  // dropped and named now, not refused.
  assert.deepEqual(decode({ ...base, frequency_penalty: 1 }).dropped, ["frequency_penalty"]);
  rejects400(() => decode({ ...base, thinking: { type: "enabled" } }), "thinking.budget_tokens", "missing_required_parameter");
});

test("anthropic request: web search is a hosted tool; other server tools and Anthropic-defined tools are dropped and named", () => {
  const r = decode({ ...base, tools: [{ type: "web_search_20250305", name: "web_search" }, { type: "bash_20250124", name: "bash" }] });
  assert.deepEqual(r.hostedTools, [{ kind: "web_search" }]);
  assert.deepEqual(r.dropped, ["tools[] (type bash_20250124)"]);
  assert.equal(r.tools, undefined);
});

test("anthropic request: a system message after the first turn stays in place; the encoder makes it a user-turn note", () => {
  const r = decode({ ...base, messages: [{ role: "system", content: "lead" }, { role: "user", content: "a" }, { role: "system", content: "b" }, { role: "user", content: "c" }] });
  assert.deepEqual(r.system, [{ type: "text", text: "lead" }]);
  assert.deepEqual(r.messages.map((m) => m.role), ["user", "system", "user"]);
  const wire = messagesOutbound.encodeRequest(r, "m").messages;
  assert.deepEqual(wire, [{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "<system>\nb\n</system>" }, { type: "text", text: "c" }] }]);
});

test("anthropic request: provider-side hints are dropped and named", () => {
  const r = decode({ ...base, context_management: { edits: [] }, service_tier: "auto", thinking: { type: "enabled", budget_tokens: 2000, display: "omitted" },
    tools: [{ name: "t", input_schema: { type: "object" }, defer_loading: true, input_examples: [{}] }] });
  assert.deepEqual(r.dropped, ["context_management", "service_tier", "tools[].defer_loading", "tools[].input_examples", "thinking.display"]);
  assert.deepEqual(r.reasoning, { budgetTokens: 2000 });
  assert.equal(decode(base).dropped, undefined);
});

test("anthropic outbound: what the messages protocol drops is not written (the field policy settles drops and refusals)", () => {
  const r = decode(base);
  const body = messagesOutbound.encodeRequest({ ...r, seed: 1, frequencyPenalty: 0.5, presencePenalty: 0.1 }, "m");
  for (const key of ["seed", "frequency_penalty", "presence_penalty"]) assert.equal(body[key], undefined);
});

test("anthropic outbound: thinking budget, max_tokens above it, unsigned thinking, defaults", () => {
  const r = decode(base);
  const low = messagesOutbound.encodeRequest({ ...r, maxTokens: 1000, reasoning: { effort: "low" } }, "m");
  assert.deepEqual([low.thinking, low.max_tokens], [{ type: "enabled", budget_tokens: 2048 }, 3048]);
  const big = messagesOutbound.encodeRequest({ ...r, maxTokens: 30000, reasoning: { budgetTokens: 500 } }, "m");
  assert.deepEqual([big.thinking, big.max_tokens], [{ type: "enabled", budget_tokens: 1024 }, 30000]);
  const bare = messagesOutbound.encodeRequest({ model: "x", system: [], stream: false, parallelToolCalls: false,
    tools: [{ name: "t", parameters: {} }],
    messages: [{ role: "assistant", content: [{ type: "thinking", text: "from another model" }, { type: "text", text: "hi" }] }] }, "m");
  assert.deepEqual(bare, { model: "m", max_tokens: 4096, messages: [{ role: "assistant", content: [{ type: "text", text: "hi" }] }],
    tools: [{ name: "t", input_schema: { type: "object", properties: {} } }], tool_choice: { type: "auto", disable_parallel_tool_use: true } });
});

test("anthropic response: golden decodes to canonical and encodes back unchanged", () => {
  const canonical = messagesOutbound.decodeResponse(golden("response.json"));
  assert.deepEqual(canonical, golden("response.canonical.json"));
  assert.deepEqual(messagesInbound.encodeResponse(canonical, decode(base)), golden("response.json"));
  const out = messagesInbound.encodeResponse({ ...canonical, stopReason: "content_filter", usage: { ...canonical.usage, reasoning: 40 } }, decode(base)) as Json;
  assert.equal(out.stop_reason, "refusal");
  assert.deepEqual((out.usage as Json).output_tokens_details, { thinking_tokens: 40 });
  assert.equal(messagesOutbound.decodeResponse({ ...golden("response.json"), stop_reason: "model_context_window_exceeded" }).stopReason, "max_tokens");
  assert.equal(messagesOutbound.errorMessage({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }), "Overloaded");
});

test("anthropic round trip: wire → canonical → wire keeps text, tool calls and usage", () => {
  const wire = golden("response.json");
  const back = messagesInbound.encodeResponse(messagesOutbound.decodeResponse(wire), decode(base)) as Json;
  assert.deepEqual(back.content, wire.content);
  assert.deepEqual(back.usage, wire.usage);
  const req = golden("request.json");
  assert.deepEqual(messagesOutbound.encodeRequest(decode(req), req.model), req);
});

test("anthropic stream: golden stream decodes to a contract-valid canonical stream", () => {
  const events = decodeStream(toSse(wireStream()));
  assertStreamContract(events);
  assert.deepEqual(events[0], { type: "message_start", id: "msg_01Aq9w938a90dw8q", model: "claude-sonnet-4-5",
    usage: { input: 472, cacheRead: 2048, cacheWrite: 1290, output: 1, reasoning: 0 } });
  assert.deepEqual(events.at(-1), { type: "message_stop", stopReason: "tool_use",
    usage: { input: 472, cacheRead: 2048, cacheWrite: 1290, output: 156, reasoning: 0 } });
  const json = events.filter((e) => e.type === "tool_input_delta").map((e) => (e as { partialJson: string }).partialJson).join("");
  assert.deepEqual(JSON.parse(json), { location: "Lyon, France", unit: "celsius" });
  assert.equal(events.filter((e) => e.type === "signature_delta").length, 1);
});

test("anthropic stream: encoding the decoded golden stream gives the golden stream back", () => {
  const text = encodeStream(decodeStream(toSse(wireStream())), decode(base));
  // Less what carries nothing: pings and the empty input_json_delta that opens tool input.
  const expected = wireStream().filter((e) => e.event !== "ping" && (e.data.delta as Json | undefined)?.partial_json !== "");
  assert.deepEqual(parseSse(text), expected);
});

test("anthropic stream: the official SDK accumulates our encoded stream", async () => {
  const events = decodeStream(toSse(wireStream()));
  const message = await sdkStream(encodeStream(events, decode(base))).finalMessage();
  const wire = golden("response.json");
  assert.equal(message.id, wire.id);
  assert.equal(message.stop_reason, "tool_use");
  assert.deepEqual(message.content, wire.content);
  assert.equal(message.usage.output_tokens, 156);
  assert.equal(message.usage.cache_read_input_tokens, 2048);
  assert.equal(message.usage.cache_creation_input_tokens, 1290);
});

test("anthropic stream: an error event reaches the SDK as an APIError of its type", async () => {
  const enc = messagesInbound.streamEncoder(decode(base));
  const text = [enc.encode({ type: "message_start", id: "msg_1", model: "m" }), enc.encode({ type: "error", status: 503, message: "Overloaded" })].join("");
  await assert.rejects(sdkStream(text).finalMessage(), (e: unknown) => {
    assert.ok(e instanceof Anthropic.APIError);
    assert.match(String(e.message), /Overloaded/);
    assert.equal((e.error as { error: { type: string } }).error.type, "overloaded_error");
    return true;
  });
});

test("anthropic stream decoder: errors, cut-off streams, citations and late usage", () => {
  const start = wireStream()[0];
  const overloaded = decodeStream(toSse([start, { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }]));
  assertStreamContract(overloaded);
  assert.deepEqual(overloaded.at(-1), { type: "error", status: 503, message: "Overloaded" });
  const cut = decodeStream(toSse(wireStream().slice(0, 14)));
  assertStreamContract(cut);
  assert.equal(cut.at(-1)!.type, "error");
  // Without message_stop the answer is not whole (hardening issue: a stream ends with its
  // protocol's terminal event, or with an error).
  const noStop = decodeStream(toSse(wireStream().slice(0, -1)));
  assertStreamContract(noStop);
  assert.equal(noStop.at(-1)!.type, "error");
  const garbled = decodeStream([...toSse([start]), { event: "content_block_delta", data: "{not json" }]);
  assertStreamContract(garbled);
  assert.equal(garbled.at(-1)!.type, "error");
  const cited = decodeStream(toSse([start, wireStream()[7],
    { event: "content_block_delta", data: { type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation: { type: "char_location" } } } },
    wireStream()[10],
    { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9, input_tokens: 500, output_tokens_details: { thinking_tokens: 4 } } } },
    { event: "message_stop", data: { type: "message_stop" } }]));
  assertStreamContract(cited);
  assert.deepEqual(cited.map((e) => e.type), ["message_start", "block_start", "block_stop", "message_stop"]);
  assert.deepEqual((cited.at(-1) as { usage: unknown }).usage, { input: 500, cacheRead: 2048, cacheWrite: 1290, output: 9, reasoning: 4 });
  assert.deepEqual(decodeStream([]), [{ type: "error", status: 502, message: "The upstream stream ended before it started." }]);
});

test("anthropic stream encoder: stop reasons and usage map to message_delta", () => {
  const response: CanonicalResponse = messagesOutbound.decodeResponse(golden("response.json"));
  const text = encodeStream([{ type: "message_start", id: "", model: "m" },
    { type: "message_stop", stopReason: "error", usage: response.usage }], decode(base));
  const events = parseSse(text);
  assert.match(String((events[0].data.message as Json).id), /^msg_/);
  assert.deepEqual(events[1].data, { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { input_tokens: 472, cache_creation_input_tokens: 1290, cache_read_input_tokens: 2048, output_tokens: 156 } });
  assert.deepEqual(events.map((e) => e.event), ["message_start", "message_delta", "message_stop"]);
});

const usageArb = fc.record({ input: fc.nat(), cacheRead: fc.nat(), cacheWrite: fc.nat(), output: fc.nat(1e6) })
  .chain((u) => fc.nat(u.output).map((reasoning) => ({ ...u, reasoning })));
const blockArb = fc.oneof(
  fc.record({ type: fc.constant("text" as const), text: fc.string() }),
  fc.record({ type: fc.constant("tool_use" as const), id: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }),
    input: fc.dictionary(fc.string(), fc.jsonValue()) }),
);

test("anthropic property: response and stream conversion keep text, tool calls and usage", () => {
  fc.assert(fc.property(fc.array(blockArb, { maxLength: 5 }), usageArb, fc.constantFrom("end_turn", "max_tokens", "tool_use" as const),
    (content, usage, stopReason) => {
      const response = { id: "msg_1", model: "m", content, stopReason, usage } as CanonicalResponse;
      const wire = JSON.parse(JSON.stringify(messagesInbound.encodeResponse(response, decode(base))));
      assert.deepEqual(messagesOutbound.decodeResponse(wire), JSON.parse(JSON.stringify(response)));
      const events: CanonicalEvent[] = [{ type: "message_start", id: "msg_1", model: "m", usage }];
      content.forEach((b, index) => {
        events.push({ type: "block_start", index, block: b.type === "text" ? { type: "text" } : { type: "tool_use", id: b.id, name: b.name } });
        const text = b.type === "text" ? b.text : JSON.stringify(b.input);
        const half = Math.floor(text.length / 2);
        for (const part of [text.slice(0, half), text.slice(half)].filter(Boolean)) {
          events.push(b.type === "text" ? { type: "text_delta", index, text: part } : { type: "tool_input_delta", index, partialJson: part });
        }
        events.push({ type: "block_stop", index });
      });
      events.push({ type: "message_stop", stopReason, usage });
      const again = decodeStream(parseSse(encodeStream(events, decode(base))).map((e) => ({ event: e.event, data: JSON.stringify(e.data) })));
      assertStreamContract(again);
      assert.deepEqual(again, JSON.parse(JSON.stringify(events)));
    }), { numRuns: 200 });
});
