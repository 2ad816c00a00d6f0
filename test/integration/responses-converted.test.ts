// The responses protocol in (the openai SDK's responses.create / responses.stream), every
// channel protocol out, for models priced `endpoint: [chat, responses]`: an OpenAI
// chat-completions channel, an Anthropic and a Gemini channel, each a fake speaking its real
// wire format. Plain text and instructions, a multi-turn tool loop, structured output,
// reasoning, streamed and not; what the upstream received, what the client got, and the
// usage-log entry (usage with cached and reasoning tokens, cost to the nano, the same as a
// chat-completions client of the same answer). Refusals: a chat-only model, a
// previous_response_id, a built-in tool.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { ResponseInputItem, ResponseStreamEvent, Response as OResponse } from "openai/resources/responses/responses";
import { formatNano } from "../../src/billing/cost.js";
import { M, TEXT, splitCost, openaiClient, startWorld, weatherArgs, weatherSchema, type ChannelName, type World } from "../helpers/protocol-world.js";
import { fakePngBase64 } from "../helpers/fake-gemini.js";
import { channel } from "./support.js";

/** One model per channel protocol, priced for chat and responses. */
const RC: Record<ChannelName, string> = { openai: "rc-gpt-4.1", anthropic: "rc-claude-sonnet", gemini: "rc-gemini-flash" };
const price = { input: 2, output: 8, cache_read_ratio: 0.5, cache_write_ratio: 1.25 };

interface Expect {
  /** The usage-log entry's canonical usage of the fake's standard answer. */
  readonly usage: object;
  /** What the responses client sees for it. */
  readonly clientUsage: object;
  /** Its cost: price × 0.7 (group multiplier), in nano-units. */
  readonly costNano: bigint;
}

const wire = (input: number, cached: number, output: number, reasoning: number, written = 0) => ({
  input_tokens: input, input_tokens_details: written > 0 ? { cached_tokens: cached, cache_write_tokens: written } : { cached_tokens: cached },
  output_tokens: output, output_tokens_details: { reasoning_tokens: reasoning }, total_tokens: input + output,
});

const standard: Record<ChannelName, Expect> = {
  // prompt 12 incl. 2 cached, completion 5 incl. 1 reasoning: 10×2 + 2×1 + 5×8 = 62 per 1M, × 0.7.
  openai: { usage: { input: 10, cacheRead: 2, cacheWrite: 0, output: 5, reasoning: 1 }, clientUsage: wire(12, 2, 5, 1), costNano: 43_400n },
  // 12×2 + 5×8 = 64 per 1M, × 0.7.
  anthropic: { usage: { input: 12, cacheRead: 0, cacheWrite: 0, output: 5, reasoning: 0 }, clientUsage: wire(12, 0, 5, 0), costNano: 44_800n },
  gemini: { usage: { input: 12, cacheRead: 0, cacheWrite: 0, output: 5, reasoning: 0 }, clientUsage: wire(12, 0, 5, 0), costNano: 44_800n },
};

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: "function", name: "get_weather", description: "Weather for a city", parameters: { ...weatherSchema }, strict: false,
};

const targets: readonly ChannelName[] = ["openai", "anthropic", "gemini"];

describe("responses in, converted to every channel protocol", () => {
  let w: World;
  let client: OpenAI;

  before(async () => {
    w = await startWorld({
      extraModels: Object.fromEntries(targets.map((t) => [RC[t], { endpoint: ["chat", "responses"], price }])),
      extraChannels: (u) => [
        channel("oa-rc", u.openai, { protocol: "openai", models: [RC.openai] }),
        channel("an-rc", u.anthropic, { protocol: "anthropic", models: [RC.anthropic] }),
        channel("gm-rc", u.gemini, { protocol: "gemini", models: [RC.gemini] }),
      ],
    });
    client = openaiClient(w);
  });
  after(async () => { await w?.close(); });
  beforeEach(() => w.reset());

  /** Everything the three fakes received so far. */
  const upstreamCount = () => w.openai.received.length + w.anthropic.received.length + w.gemini.received.length;

  /** Streams with the SDK's helper: every event, and the final Response it accumulated. */
  async function stream(params: Parameters<OpenAI["responses"]["stream"]>[0]): Promise<{ events: ResponseStreamEvent[]; final: OResponse; requestId: string }> {
    const mark = w.mark();
    const s = client.responses.stream(params);
    const events: ResponseStreamEvent[] = [];
    for await (const e of s) events.push(e);
    const final = await s.finalResponse();
    return { events, final, requestId: (await w.record(mark)).id };
  }

  /** The responses stream's rules, as the SDK and Codex read them. */
  function assertEventOrder(events: readonly ResponseStreamEvent[], terminal = "response.completed"): void {
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i), "sequence_number counts 0, 1, 2 …");
    assert.equal(events[0].type, "response.created");
    assert.equal(events[1].type, "response.in_progress");
    assert.equal(events.at(-1)!.type, terminal);
    const open = new Set<number>();
    for (const e of events) {
      if (e.type === "response.output_item.added") open.add(e.output_index);
      else if (e.type === "response.output_item.done") assert.ok(open.delete(e.output_index), `${e.type} for an item not open`);
      else if ("output_index" in e) assert.ok(open.has(e.output_index), `${e.type} outside an open item`);
    }
    assert.equal(open.size, 0, "every item is done");
  }

  /** The usage-log entry of a request, checked against `expect`, and against a chat-completions
   * client of the same upstream answer (same usage, same cost to the nano). */
  async function assertBilled(requestId: string, expect: Expect, sameAnswerForChat: () => void, model: string): Promise<void> {
    const entry = await w.entry(requestId);
    assert.equal(entry.status, 200);
    assert.equal(entry.inboundProtocol, "responses");
    assert.deepEqual(entry.usage, expect.usage);
    assert.equal(entry.costNano, expect.costNano);
    sameAnswerForChat();
    const { response } = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }).withResponse();
    const chat = await w.entry(response.headers.get("x-gateway-request-id")!);
    assert.deepEqual(chat.usage, entry.usage, "a chat-completions client of the same answer: the same usage");
    assert.equal(chat.costNano, entry.costNano, "… and the same cost");
  }

  for (const t of targets) {
    const model = RC[t];
    describe(`→ ${t} channel`, () => {
      test("non-stream: instructions and text reach the upstream natively; output_text, usage and cost", async () => {
        w.scriptText(t, TEXT);
        const { data, response } = await client.responses.create({ model, instructions: "Be brief. 简洁。", input: "Say hi", max_output_tokens: 333 }).withResponse();
        assert.equal(data.object, "response");
        assert.match(data.id, /^resp_/);
        assert.equal(data.status, "completed");
        assert.equal(data.model, model, "the client sees its own model name");
        assert.equal(data.output_text, TEXT);
        assert.equal(data.output.length, 1);
        const msg = data.output[0];
        assert.ok(msg.type === "message");
        assert.match(msg.id, /^msg_/);
        assert.deepEqual(msg.content, [{ type: "output_text", text: TEXT, annotations: [], logprobs: [] }]);
        assert.deepEqual(data.usage, standard[t].clientUsage);
        assert.equal(data.instructions, "Be brief. 简洁。");
        assert.equal(data.max_output_tokens, 333);
        const sent = w.sent(t);
        if (t === "openai") {
          assert.equal(w.openai.received.at(-1)!.path, "/v1/chat/completions", "a chat model is spoken to in chat-completions");
          assert.deepEqual(sent.messages, [{ role: "system", content: "Be brief. 简洁。" }, { role: "user", content: "Say hi" }]);
          assert.equal(sent.max_completion_tokens ?? sent.max_tokens, 333);
        } else if (t === "anthropic") {
          assert.match(JSON.stringify(sent.system), /Be brief\. 简洁。/);
          assert.deepEqual(sent.messages, [{ role: "user", content: [{ type: "text", text: "Say hi" }] }]);
          assert.equal(sent.max_tokens, 333);
        } else {
          assert.deepEqual(sent.systemInstruction.parts, [{ text: "Be brief. 简洁。" }]);
          assert.deepEqual(sent.contents, [{ role: "user", parts: [{ text: "Say hi" }] }]);
          assert.equal(sent.generationConfig.maxOutputTokens, 333);
        }
        await assertBilled(response.headers.get("x-gateway-request-id")!, standard[t], () => w.scriptText(t, TEXT), model);
      });

      test("stream: the SDK's stream helper reads the exact event sequence; deltas join to the text; usage billed", async () => {
        w.scriptText(t, TEXT);
        const { events, final, requestId } = await stream({ model, input: "Say hi" });
        assertEventOrder(events);
        assert.deepEqual(events.map((e) => e.type).filter((x, i, a) => a[i - 1] !== x), [
          "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
          "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
          "response.completed",
        ]);
        const deltas = events.filter((e) => e.type === "response.output_text.delta");
        assert.ok(deltas.length >= 2, "the text arrives in several deltas");
        assert.equal(deltas.map((e) => e.delta).join(""), TEXT);
        assert.equal(final.output_text, TEXT);
        assert.equal(final.status, "completed");
        assert.equal(final.model, model);
        assert.deepEqual(splitCost(final.usage).usage, standard[t].clientUsage);
        assert.equal(splitCost(final.usage).cost, formatNano(standard[t].costNano), "the charged cost beside the usage");
        assert.equal(w.sent(t).stream ?? (t === "gemini" ? true : undefined), true, "the upstream was asked to stream");
        await assertBilled(requestId, standard[t], () => w.scriptText(t, TEXT), model);
      });

      for (const streamed of [false, true]) {
        test(`${streamed ? "stream" : "non-stream"}: a tool loop: function_call → function_call_output → final answer`, async () => {
          w.scriptTool(t, "get_weather", weatherArgs);
          const ask: ResponseInputItem[] = [{ role: "user", content: "Weather in Zürich?" }];
          const first = streamed
            ? (await stream({ model, input: ask, tools: [weatherTool] })).final
            : await client.responses.create({ model, input: ask, tools: [weatherTool] });
          const calls = first.output.filter((o) => o.type === "function_call");
          assert.equal(calls.length, 1);
          const call = calls[0];
          assert.ok(call.type === "function_call");
          assert.equal(call.name, "get_weather");
          assert.deepEqual(JSON.parse(call.arguments), weatherArgs);
          assert.ok(call.call_id, "the call has a call_id");
          assert.match(call.id ?? "", /^fc_/);
          assert.equal(call.status, "completed");
          const decl = w.sent(t);
          if (t === "openai") {
            assert.deepEqual(decl.tools, [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: weatherSchema } }]);
          } else if (t === "anthropic") {
            assert.deepEqual(decl.tools, [{ name: "get_weather", description: "Weather for a city", input_schema: weatherSchema }]);
          } else {
            assert.deepEqual(decl.tools, [{ functionDeclarations: [{ name: "get_weather", description: "Weather for a city", parametersJsonSchema: weatherSchema }] }]);
          }

          w.scripts = {};
          w.scriptText(t, "It is 18 °C.");
          // store: false, as Codex sends it: the whole conversation travels in input.
          const input: ResponseInputItem[] = [...ask, ...(first.output as ResponseInputItem[]), { type: "function_call_output", call_id: call.call_id, output: "18 °C, rain ☔" }];
          const follow = streamed
            ? (await stream({ model, input, tools: [weatherTool], store: false })).final
            : await client.responses.create({ model, input, tools: [weatherTool], store: false });
          assert.equal(follow.output_text, "It is 18 °C.");
          const body = w.sent(t);
          if (t === "openai") {
            const msgs = body.messages as Record<string, any>[];
            assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "tool"]);
            assert.equal(msgs[1].tool_calls[0].id, call.call_id);
            assert.deepEqual(JSON.parse(msgs[1].tool_calls[0].function.arguments), weatherArgs);
            assert.deepEqual(msgs[2], { role: "tool", tool_call_id: call.call_id, content: "18 °C, rain ☔" });
          } else if (t === "anthropic") {
            const msgs = body.messages as { role: string; content: Record<string, unknown>[] }[];
            assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "user"]);
            assert.deepEqual(msgs[1].content, [{ type: "tool_use", id: call.call_id, name: "get_weather", input: weatherArgs }]);
            assert.deepEqual(msgs[2].content, [{ type: "tool_result", tool_use_id: call.call_id, content: [{ type: "text", text: "18 °C, rain ☔" }] }]);
          } else {
            const contents = body.contents as { role: string; parts: Record<string, any>[] }[];
            assert.deepEqual(contents.map((c) => c.role), ["user", "model", "user"]);
            assert.equal(contents[1].parts[0].functionCall.name, "get_weather");
            assert.deepEqual(contents[1].parts[0].functionCall.args, weatherArgs);
            assert.equal(contents[2].parts[0].functionResponse.name, "get_weather");
            assert.deepEqual(contents[2].parts[0].functionResponse.response, { output: "18 °C, rain ☔" });
          }
        });
      }

      test("structured output: text.format json_schema reaches the upstream as its schema field", async () => {
        w.scriptText(t, '{"city":"Zürich"}');
        const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
        const out = await client.responses.create({
          model, input: "Where?", text: { format: { type: "json_schema", name: "place", schema, strict: true } },
        });
        assert.deepEqual(JSON.parse(out.output_text), { city: "Zürich" });
        assert.deepEqual(out.text?.format, { type: "json_schema", name: "place", schema, strict: null, description: null });
        const sent = w.sent(t);
        if (t === "openai") assert.deepEqual(sent.response_format, { type: "json_schema", json_schema: { name: "place", schema } });
        else if (t === "anthropic") assert.deepEqual(sent.output_config, { format: { type: "json_schema", schema } });
        else {
          assert.equal(sent.generationConfig.responseMimeType, "application/json");
          assert.deepEqual(sent.generationConfig.responseJsonSchema, schema);
        }
      });

      test("reasoning effort reaches the upstream; thinking comes back as a reasoning item, reasoning tokens billed", async () => {
        if (t === "openai") w.scripts.openai = () => ({ kind: "reasoning", reasoning: "Deep thought.", text: "42" });
        else if (t === "anthropic") w.scripts.anthropic = () => ({ kind: "thinking", thinking: "Deep thought.", text: "42", signature: "U2lnbmF0dXJl" });
        else w.scripts.gemini = () => ({ kind: "thinking", thought: "Deep thought.", text: "42" });
        for (const streamed of [false, true]) {
          const params = { model, input: "The answer?", reasoning: { effort: "high" as const, summary: "auto" as const } };
          const out = streamed ? (await stream(params)).final : await client.responses.create(params);
          assert.equal(out.output_text, "42");
          assert.deepEqual(out.output.map((o) => o.type), ["reasoning", "message"]);
          const rs = out.output[0];
          assert.ok(rs.type === "reasoning");
          assert.match(rs.id, /^rs_/);
          assert.deepEqual(rs.summary, [{ type: "summary_text", text: "Deep thought." }]);
          // Sealed with its issuer (src/protocols/reasoning.ts), so it goes back only to it.
          if (t === "anthropic") assert.equal(rs.encrypted_content, "gw:anthropic:U2lnbmF0dXJl", "the signature travels in encrypted_content");
          assert.deepEqual(out.reasoning, { effort: "high", summary: null });
          const sent = w.sent(t);
          if (t === "openai") assert.equal(sent.reasoning_effort, "high");
          else if (t === "anthropic") assert.deepEqual(sent.thinking, { type: "enabled", budget_tokens: 24576 });
          else assert.deepEqual(sent.generationConfig.thinkingConfig, { thinkingBudget: 24576, includeThoughts: true });
          if (t === "gemini") assert.deepEqual(splitCost(out.usage).usage, wire(12, 0, 8, 3), "thoughts are output and reasoning tokens");
        }
      });

      test("a reasoning item sent back reaches the upstream as its thinking, signature intact (unsealed)", async () => {
        w.scriptText(t, "ok");
        await client.responses.create({
          model, input: [
            { role: "user", content: "q1" },
            { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "I thought." }], encrypted_content: `gw:${t}:U2lnbmF0dXJl` },
            { role: "assistant", content: "a1" },
            { role: "user", content: "q2" },
          ],
        });
        const sent = w.sent(t);
        if (t === "anthropic") {
          assert.deepEqual(sent.messages[1].content[0], { type: "thinking", thinking: "I thought.", signature: "U2lnbmF0dXJl" });
        } else if (t === "gemini") {
          assert.deepEqual(sent.contents[1].parts[0], { text: "I thought.", thought: true, thoughtSignature: "U2lnbmF0dXJl" });
        } else {
          assert.equal(sent.messages[1].role, "assistant");
          assert.equal(sent.messages[1].content, "a1");
        }
      });
    });
  }

  describe("cached tokens reach the client and the bill exactly", () => {
    test("anthropic cache read and write: input_tokens counts both, cached_tokens the reads, cache_write_tokens the writes; cost to the nano", async () => {
      w.scripts.anthropic = () => ({ kind: "cache", text: "cached" });
      // 12×2 + 30×2×0.5 + 7×2×1.25 + 5×8 = 111.5 per 1M, × 0.7.
      const expect: Expect = { usage: { input: 12, cacheRead: 30, cacheWrite: 7, output: 5, reasoning: 0 }, clientUsage: wire(49, 30, 5, 0, 7), costNano: 78_050n };
      const { data, response } = await client.responses.create({ model: RC.anthropic, input: "again" }).withResponse();
      assert.deepEqual(data.usage, expect.clientUsage);
      await assertBilled(response.headers.get("x-gateway-request-id")!, expect, () => { w.scripts.anthropic = () => ({ kind: "cache", text: "cached" }); }, RC.anthropic);
      const streamed = await stream({ model: RC.anthropic, input: "again" });
      assert.deepEqual(splitCost(streamed.final.usage).usage, expect.clientUsage);
      assert.equal(splitCost(streamed.final.usage).cost, "0.00007805");
      assert.equal((await w.entry(streamed.requestId)).costNano, expect.costNano);
    });

    test("gemini cached content: cached_tokens, cost to the nano", async () => {
      w.scripts.gemini = () => ({ kind: "cache", text: "cached" });
      // 4×2 + 8×2×0.5 + 5×8 = 56 per 1M, × 0.7.
      const expect: Expect = { usage: { input: 4, cacheRead: 8, cacheWrite: 0, output: 5, reasoning: 0 }, clientUsage: wire(12, 8, 5, 0), costNano: 39_200n };
      const { data, response } = await client.responses.create({ model: RC.gemini, input: "again" }).withResponse();
      assert.deepEqual(data.usage, expect.clientUsage);
      await assertBilled(response.headers.get("x-gateway-request-id")!, expect, () => { w.scripts.gemini = () => ({ kind: "cache", text: "cached" }); }, RC.gemini);
    });
  });

  describe("images a model returns", () => {
    test("a Gemini image reaches the responses client as an image_generation_call with the base64 result, streamed and not", async () => {
      w.scripts.gemini = () => ({ kind: "image", text: "Here it is.", data: fakePngBase64 });
      for (const streamed of [false, true]) {
        const out = streamed ? (await stream({ model: RC.gemini, input: "Draw a dot" })).final : await client.responses.create({ model: RC.gemini, input: "Draw a dot" });
        const image = out.output.find((o) => o.type === "image_generation_call");
        assert.ok(image && image.type === "image_generation_call", `${streamed}: ${JSON.stringify(out.output)}`);
        assert.equal(image.result, fakePngBase64);
        assert.equal(image.status, "completed");
        assert.equal(out.output_text, "Here it is.");
      }
    });
  });

  describe("a stream that fails partway", () => {
    test("an upstream error event mid-stream ends the responses stream with error then response.failed; not billed as complete", async () => {
      w.scripts.anthropic = () => ({ kind: "error", status: 529, message: "Overloaded", inStream: true });
      const mark = w.mark();
      const s = await client.responses.create({ model: RC.anthropic, input: "x", stream: true });
      const events: ResponseStreamEvent[] = [];
      for await (const e of s) events.push(e);
      assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
      assert.equal(events[0].type, "response.created");
      const [err, failed] = events.slice(-2);
      assert.equal(err.type, "error");
      assert.ok(err.type === "error");
      assert.match(err.message, /Overloaded/);
      assert.equal(failed.type, "response.failed");
      assert.ok(failed.type === "response.failed");
      assert.equal(failed.response.status, "failed");
      assert.equal(failed.response.error?.code, "server_error");
      assert.equal(events.filter((e) => e.type === "response.completed").length, 0);
      const entry = await w.entry((await w.record(mark)).id);
      assert.equal(entry.estimated, true, "a broken stream is charged an estimate, like every protocol's");
    });
  });

  describe("refusals", () => {
    test("a chat-only model on /v1/responses → 400 wrong_endpoint pointing to chat-completions", async () => {
      const before = upstreamCount();
      await assert.rejects(client.responses.create({ model: M.anthropic, input: "x" }), (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError, String(e));
        assert.equal((e.error as { code?: string }).code, "wrong_endpoint");
        assert.match(e.message, /'claude-sonnet-4-6' is a chat model; call \/v1\/chat\/completions/);
        return true;
      });
      assert.equal(upstreamCount(), before, "nothing reached an upstream");
    });

    test("previous_response_id on a converted route → 400 naming it: the gateway keeps no conversations", async () => {
      for (const t of targets) {
        const before = upstreamCount();
        await assert.rejects(client.responses.create({ model: RC[t], input: "x", previous_response_id: "resp_abc" }), (e: unknown) => {
          assert.ok(e instanceof OpenAI.BadRequestError, String(e));
          assert.match(e.message, /previous_response_id .*keeps no conversations/);
          return true;
        });
        assert.equal(upstreamCount(), before, "nothing reached an upstream");
      }
    });

    // Issue 19 changed this deliberately (it was a 400): an offered built-in tool is dropped and
    // named; only forcing one is refused (conversion-lenient.test.ts).
    test("an offered built-in tool is dropped and named; forcing one → 400 naming it", async () => {
      w.scriptText("anthropic", "ok");
      const { response } = await client.responses.create({
        model: RC.anthropic, input: "x", tools: [weatherTool, { type: "file_search", vector_store_ids: ["vs_1"] }],
      }).withResponse();
      assert.equal(response.headers.get("x-gateway-dropped-fields"), "tools[] (type file_search)");
      const before = upstreamCount();
      await assert.rejects(client.responses.create({
        model: RC.gemini, input: "x", tools: [{ type: "code_interpreter", container: { type: "auto" } }], tool_choice: { type: "code_interpreter" },
      }), (e: unknown) => e instanceof OpenAI.BadRequestError && /`tool_choice`.*code_interpreter/.test(e.message));
      assert.equal(upstreamCount(), before, "nothing reached an upstream");
    });

    test("a provider-side hint is dropped and named in x-gateway-dropped-fields; store: false is no drop", async () => {
      w.scriptText("anthropic", "ok");
      const { response } = await client.responses.create({ model: RC.anthropic, input: "x", store: false, metadata: { k: "v" } }).withResponse();
      assert.match(response.headers.get("x-gateway-dropped-fields") ?? "", /metadata/);
      assert.doesNotMatch(response.headers.get("x-gateway-dropped-fields") ?? "", /store/);
      assert.equal(w.sent("anthropic").metadata, undefined);
    });

    // Issue 19 changed this deliberately (web search was dropped): it is Gemini's googleSearch now.
    test("the hosted web_search tool Codex always offers becomes googleSearch; the function tools reach the channel", async () => {
      w.scriptText("gemini", "ok");
      const { response } = await client.responses.create({
        model: RC.gemini, input: "x", tools: [weatherTool, { type: "web_search" }],
      }).withResponse();
      assert.equal(response.headers.get("x-gateway-dropped-fields"), null);
      assert.deepEqual(w.sent("gemini").tools[0].functionDeclarations.map((d: { name: string }) => d.name), ["get_weather"]);
      assert.deepEqual(w.sent("gemini").tools[1], { googleSearch: {} });
    });
  });
});
