// Legacy chat-completions function calling mapped one to one onto the canonical tools, and
// the answers written back in the legacy shape (chat-legacy-functions.ts and its callers).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { CanonicalEvent, CanonicalRequest, CanonicalResponse } from "../../src/protocols/canonical.js";
import { chatInbound } from "../../src/protocols/openai/index.js";
import { emptyUsage } from "../../src/protocols/usage.js";

const schema = { type: "object", properties: { city: { type: "string" } } };
const decode = (body: Record<string, unknown>): CanonicalRequest =>
  chatInbound.decodeRequest({ model: "claude", messages: [{ role: "user", content: "hi" }], ...body }, {});

describe("legacy functions → canonical tools", () => {
  test("functions are function tools; function_call is tool choice; the request is marked legacy", () => {
    const r = decode({ functions: [{ name: "w", description: "Weather", parameters: schema }, { name: "t" }], function_call: { name: "w" } });
    assert.deepEqual(r.tools, [
      { name: "w", description: "Weather", parameters: schema },
      { name: "t", parameters: { type: "object", properties: {} } },
    ]);
    assert.deepEqual(r.toolChoice, { type: "tool", name: "w" });
    assert.equal(r.legacyFunctions, true);
    assert.equal(r.dropped, undefined);
    assert.deepEqual(decode({ functions: [{ name: "w" }], function_call: "none" }).toolChoice, { type: "none" });
    assert.deepEqual(decode({ functions: [{ name: "w" }], function_call: "auto" }).toolChoice, { type: "auto" });
  });

  test("tools alone leave the request unmarked", () => {
    assert.equal(decode({ tools: [{ type: "function", function: { name: "w" } }] }).legacyFunctions, undefined);
  });

  test("an assistant function_call is a tool call, a function message its result, paired by a position-made id", () => {
    const r = decode({
      functions: [{ name: "w" }],
      messages: [
        { role: "user", content: "weather in Bern and Genf?" },
        { role: "assistant", content: "Let me look.", function_call: { name: "w", arguments: '{"city":"Bern"}' } },
        { role: "function", name: "w", content: "12 °C" },
        { role: "assistant", content: null, function_call: { name: "w", arguments: "" } },
        { role: "function", name: "w", content: "14 °C" },
      ],
    });
    assert.deepEqual(r.messages, [
      { role: "user", content: [{ type: "text", text: "weather in Bern and Genf?" }] },
      { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "call_fn1", name: "w", input: { city: "Bern" } }] },
      { role: "user", content: [{ type: "tool_result", toolUseId: "call_fn1", name: "w", content: [{ type: "text", text: "12 °C" }] }] },
      { role: "assistant", content: [{ type: "tool_use", id: "call_fn3", name: "w", input: {} }] },
      { role: "user", content: [{ type: "tool_result", toolUseId: "call_fn3", name: "w", content: [{ type: "text", text: "14 °C" }] }] },
    ]);
    assert.equal(r.dropped, undefined, "a function message's name is its function, not a dropped label");
  });

  test("a result answers the latest open call of its name; each call is answered once", () => {
    const r = decode({
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, function_call: { name: "a", arguments: "{}" } },
        { role: "assistant", content: null, function_call: { name: "a", arguments: "{}" } },
        { role: "function", name: "a", content: "2" },
        { role: "function", name: "a", content: "1" },
      ],
    });
    const results = r.messages[2].content.map((b) => (b.type === "tool_result" ? b.toolUseId : ""));
    assert.deepEqual(results, ["call_fn2", "call_fn1"]);
    assert.throws(() => decode({
      messages: [{ role: "assistant", content: null, function_call: { name: "a", arguments: "{}" } },
        { role: "function", name: "a", content: "1" }, { role: "function", name: "a", content: "again" }],
    }), (e: unknown) => e instanceof GatewayError && e.status === 400 && /messages\[2\]/.test(e.message));
  });

  test("malformed legacy fields are 400s naming them", () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ functions: { name: "w" } }, /functions must be an array/],
      [{ functions: [{ name: "w", parameters: "x" }] }, /functions\[0\]\.parameters/],
      [{ function_call: "auto", tool_choice: "auto" }, /function_call and tool_choice/],
      [{ messages: [{ role: "function", content: "x" }] }, /messages\[0\]\.name/],
      [{ messages: [{ role: "assistant", function_call: { arguments: "{}" } }] }, /messages\[0\]\.function_call\.name/],
    ];
    for (const [body, message] of cases) {
      assert.throws(() => decode(body), (e: unknown) => e instanceof GatewayError && e.status === 400 && message.test(e.message), String(message));
    }
    // A key the table does not know is dropped and named, as everywhere on a converting route.
    assert.deepEqual(decode({ functions: [{ name: "w", strict: true }] }).dropped, ["functions[].strict"]);
    assert.deepEqual(decode({ functions: [{ name: "w" }], function_call: { name: "w", extra: 1 } }).dropped, ["function_call.extra"]);
  });
});

describe("answers in the legacy shape", () => {
  const usage = { ...emptyUsage(), input: 3, output: 4 };
  const answer: CanonicalResponse = {
    id: "msg_1", model: "claude", stopReason: "tool_use", usage,
    content: [
      { type: "text", text: "Looking." },
      { type: "tool_use", id: "toolu_1", name: "w", input: { city: "Bern" } },
      { type: "tool_use", id: "toolu_2", name: "t", input: {} },
    ],
  };

  test("non-stream: the first call as message.function_call, finish_reason function_call", () => {
    const body = chatInbound.encodeResponse(answer, decode({ functions: [{ name: "w" }] })) as any;
    assert.deepEqual(body.choices[0].message, {
      role: "assistant", content: "Looking.", refusal: null, function_call: { name: "w", arguments: '{"city":"Bern"}' },
    });
    assert.equal(body.choices[0].finish_reason, "function_call");
  });

  test("non-stream without functions: tool_calls as before", () => {
    const body = chatInbound.encodeResponse(answer, decode({})) as any;
    assert.equal(body.choices[0].message.tool_calls.length, 2);
    assert.equal(body.choices[0].message.function_call, undefined);
    assert.equal(body.choices[0].finish_reason, "tool_calls");
  });

  test("non-stream text answer to a legacy client: finish_reason stop, no call", () => {
    const body = chatInbound.encodeResponse({ ...answer, stopReason: "end_turn", content: [{ type: "text", text: "hi" }] },
      decode({ functions: [{ name: "w" }] })) as any;
    assert.equal(body.choices[0].finish_reason, "stop");
    assert.equal(body.choices[0].message.function_call, undefined);
  });

  test("stream: delta.function_call with the name, then the arguments; the second call is left out", () => {
    const enc = chatInbound.streamEncoder(decode({ functions: [{ name: "w" }], stream: true }));
    const events: CanonicalEvent[] = [
      { type: "message_start", id: "msg_1", model: "claude" },
      { type: "block_start", index: 0, block: { type: "tool_use", id: "toolu_1", name: "w" } },
      { type: "tool_input_delta", index: 0, partialJson: '{"city":' },
      { type: "tool_input_delta", index: 0, partialJson: '"Bern"}' },
      { type: "block_stop", index: 0 },
      { type: "block_start", index: 1, block: { type: "tool_use", id: "toolu_2", name: "t" } },
      { type: "tool_input_delta", index: 1, partialJson: "{}" },
      { type: "block_stop", index: 1 },
      { type: "message_stop", stopReason: "tool_use", usage },
    ];
    const chunks = events.map((e) => enc.encode(e)).join("").split("\n\n").filter((s) => s.startsWith("data: "))
      .map((s) => JSON.parse(s.slice(6)) as any);
    const deltas = chunks.map((c) => c.choices[0].delta);
    assert.deepEqual(deltas.slice(1), [
      { function_call: { name: "w", arguments: "" } },
      { function_call: { arguments: '{"city":' } },
      { function_call: { arguments: '"Bern"}' } },
      {},
    ]);
    assert.equal(chunks.at(-1).choices[0].finish_reason, "function_call");
  });
});
