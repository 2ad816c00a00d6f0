// Chat-completions' legacy function calling (`functions`, `function_call`, `role: "function"`)
// through the official openai SDK, which still types it, toward converted channels (the fake
// Anthropic, which refuses a tool_result without its tool_use, and the fake Gemini): mapped to
// tools and tool choice, answered in the legacy shape (message.function_call, finish_reason
// "function_call", delta.function_call), with a full two-turn round trip non-stream and
// stream. Toward an OpenAI-protocol channel the request passes through untouched.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { CANONICAL, M, openaiClient, startWorld, weatherArgs, weatherSchema, type ChannelName, type World } from "../helpers/protocol-world.js";

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const weatherFunction: OpenAI.Chat.Completions.ChatCompletionCreateParams.Function = {
  name: "get_weather", description: "Weather for a city", parameters: { ...weatherSchema },
};
const ask: Msg[] = [{ role: "user", content: "Weather in Zürich?" }];
const RESULT = "18 °C, rain ☔";

const targets: readonly { name: Exclude<ChannelName, "openai">; model: string }[] = [
  { name: "anthropic", model: M.anthropic },
  { name: "gemini", model: M.gemini },
];

describe("legacy functions / function_call on chat-completions, converted", () => {
  let w: World;
  let client: OpenAI;

  before(async () => {
    w = await startWorld();
    client = openaiClient(w);
  });
  after(async () => { await w?.close(); });
  beforeEach(() => w.reset());

  async function stream(params: OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming): Promise<Chunk[]> {
    const chunks: Chunk[] = [];
    for await (const c of await client.chat.completions.create(params)) chunks.push(c);
    return chunks;
  }

  /** The upstream got the function as a tool, and the call and its result paired by one id. */
  function assertUpstreamTurns(t: ChannelName): void {
    const body = w.sent(t);
    if (t === "anthropic") {
      assert.deepEqual(body.tools, [{ name: "get_weather", description: "Weather for a city", input_schema: weatherSchema }]);
      const msgs = body.messages as { role: string; content: Record<string, any>[] }[];
      assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "user"]);
      const use = msgs[1].content.find((b) => b.type === "tool_use")!;
      assert.equal(use.name, "get_weather");
      assert.deepEqual(use.input, weatherArgs);
      assert.match(use.id, /^[a-zA-Z0-9_-]+$/, "an id Anthropic accepts");
      assert.deepEqual(msgs[2].content, [{ type: "tool_result", tool_use_id: use.id, content: [{ type: "text", text: RESULT }] }]);
    } else {
      assert.deepEqual(body.tools, [{ functionDeclarations: [{ name: "get_weather", description: "Weather for a city", parametersJsonSchema: weatherSchema }] }]);
      const contents = body.contents as { role: string; parts: Record<string, any>[] }[];
      assert.deepEqual(contents.map((c) => c.role), ["user", "model", "user"]);
      assert.equal(contents[1].parts[0].functionCall.name, "get_weather");
      assert.deepEqual(contents[1].parts[0].functionCall.args, weatherArgs);
      assert.equal(contents[2].parts[0].functionResponse.name, "get_weather");
      const id = contents[1].parts[0].functionCall.id;
      if (id !== undefined) assert.equal(contents[2].parts[0].functionResponse.id, id, "the result names the call's id");
    }
  }

  for (const t of targets) {
    describe(`→ ${t.name} channel`, () => {
      test("non-stream: function_call answer in the legacy shape, then the function result turn", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const mark = w.mark();
        const { data: out, response } = await client.chat.completions.create({
          model: t.model, messages: ask, functions: [weatherFunction], function_call: "auto",
        }).withResponse();
        const choice = out.choices[0];
        assert.equal(choice.finish_reason, "function_call");
        assert.equal(choice.message.tool_calls, undefined, "no tool_calls for a legacy client");
        assert.equal(choice.message.function_call?.name, "get_weather");
        assert.deepEqual(JSON.parse(choice.message.function_call!.arguments), weatherArgs);
        assert.equal(response.headers.get("x-gateway-dropped-fields"), null, "nothing dropped");
        assert.deepEqual((await w.record(mark)).usage, CANONICAL[t.name]);

        w.reset();
        w.scriptText(t.name, "It is 18 °C.");
        const follow = await client.chat.completions.create({
          model: t.model, functions: [weatherFunction],
          messages: [...ask, choice.message as Msg, { role: "function", name: "get_weather", content: RESULT }],
        });
        assert.equal(follow.choices[0].message.content, "It is 18 °C.");
        assert.equal(follow.choices[0].finish_reason, "stop");
        assertUpstreamTurns(t.name);
      });

      test("stream: delta.function_call chunks carry the name and the arguments; finish_reason function_call; then the result turn streamed", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const mark = w.mark();
        const chunks = await stream({ model: t.model, messages: ask, functions: [weatherFunction], stream: true });
        const deltas = chunks.map((c) => c.choices[0]?.delta).filter((d) => d !== undefined);
        assert.ok(deltas.every((d) => d.tool_calls === undefined), "no tool_calls deltas for a legacy client");
        const calls = deltas.flatMap((d) => (d.function_call ? [d.function_call] : []));
        assert.ok(calls.length >= 1, "function_call deltas");
        assert.equal(calls.filter((c) => c.name).length, 1, "the name comes once");
        assert.equal(calls[0].name, "get_weather");
        const args = calls.map((c) => c.arguments ?? "").join("");
        assert.deepEqual(JSON.parse(args), weatherArgs);
        assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason).at(-1)?.choices[0].finish_reason, "function_call");
        assert.deepEqual((await w.record(mark)).usage, CANONICAL[t.name]);

        w.reset();
        w.scriptText(t.name, "It is 18 °C.");
        const follow = await stream({
          model: t.model, functions: [weatherFunction], stream: true,
          messages: [...ask, { role: "assistant", content: null, function_call: { name: "get_weather", arguments: args } },
            { role: "function", name: "get_weather", content: RESULT }],
        });
        assert.equal(follow.map((c) => c.choices[0]?.delta?.content ?? "").join(""), "It is 18 °C.");
        assertUpstreamTurns(t.name);
      });

      test("the SDK's stream helper accumulates the legacy call", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const s = client.chat.completions.stream({ model: t.model, messages: ask, functions: [weatherFunction] });
        const final = await s.finalChatCompletion();
        assert.equal(final.choices[0].finish_reason, "function_call");
        assert.equal(final.choices[0].message.function_call?.name, "get_weather");
        assert.deepEqual(JSON.parse(final.choices[0].message.function_call!.arguments), weatherArgs);
      });

      test('function_call {name} forces that function; "none" forbids calls', async () => {
        w.scriptText(t.name, "ok");
        await client.chat.completions.create({ model: t.model, messages: ask, functions: [weatherFunction], function_call: { name: "get_weather" } });
        let body = w.sent(t.name);
        if (t.name === "anthropic") assert.deepEqual(body.tool_choice, { type: "tool", name: "get_weather" });
        else assert.deepEqual(body.toolConfig, { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } });
        await client.chat.completions.create({ model: t.model, messages: ask, functions: [weatherFunction], function_call: "none" });
        body = w.sent(t.name);
        if (t.name === "anthropic") assert.deepEqual(body.tool_choice, { type: "none" });
        else assert.deepEqual(body.toolConfig, { functionCallingConfig: { mode: "NONE" } });
      });

      test("two calls of one function: each result answers the latest open call, with ids stable across turns", async () => {
        w.scriptText(t.name, "done");
        const history: Msg[] = [
          ...ask,
          { role: "assistant", content: null, function_call: { name: "get_weather", arguments: '{"city":"Bern"}' } },
          { role: "function", name: "get_weather", content: "12 °C" },
          { role: "assistant", content: null, function_call: { name: "get_weather", arguments: '{"city":"Genf"}' } },
          { role: "function", name: "get_weather", content: "14 °C" },
        ];
        await client.chat.completions.create({ model: t.model, messages: history, functions: [weatherFunction] });
        const first = w.sent(t.name);
        await client.chat.completions.create({ model: t.model, messages: history, functions: [weatherFunction] });
        assert.deepEqual(w.sent(t.name), first, "the same history gives the same upstream body");
        if (t.name === "anthropic") {
          const msgs = first.messages as { content: Record<string, any>[] }[];
          assert.equal(msgs.length, 5);
          assert.notEqual(msgs[1].content[0].id, msgs[3].content[0].id);
          assert.equal(msgs[2].content[0].tool_use_id, msgs[1].content[0].id);
          assert.equal(msgs[4].content[0].tool_use_id, msgs[3].content[0].id);
        } else {
          const contents = first.contents as { parts: Record<string, any>[] }[];
          assert.deepEqual(contents[1].parts[0].functionCall.args, { city: "Bern" });
          assert.deepEqual(contents[2].parts[0].functionResponse.response, { output: "12 °C" });
          assert.deepEqual(contents[4].parts[0].functionResponse.response, { output: "14 °C" });
        }
      });
    });
  }

  /** The 400 the SDK throws for `params`. */
  async function refusal(params: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming): Promise<InstanceType<typeof OpenAI.APIError>> {
    const err = await client.chat.completions.create(params).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, `an API error, got ${String(err)}`);
    assert.equal(err.status, 400);
    assert.equal(err.type, "invalid_request_error");
    return err;
  }

  test("a function result with no call of that name before it is a 400 naming the message", async () => {
    const before = w.anthropic.received.length;
    const err = await refusal({
      model: M.anthropic, functions: [weatherFunction],
      messages: [...ask, { role: "function", name: "get_time", content: "noon" }],
    });
    assert.match(err.message, /messages\[1\].*get_time/);
    assert.equal(w.anthropic.received.length, before, "nothing reached the upstream");
  });

  test("functions beside tools is a 400 naming both", async () => {
    const err = await refusal({ model: M.gemini, messages: ask, functions: [weatherFunction], tools: [{ type: "function", function: weatherFunction }] });
    assert.match(err.message, /functions and tools/);
  });

  test("toward an OpenAI-protocol channel the legacy request passes through untouched", async () => {
    w.scriptText("openai", "ok");
    const messages: Msg[] = [...ask, { role: "assistant", content: null, function_call: { name: "get_weather", arguments: "{}" } },
      { role: "function", name: "get_weather", content: RESULT }];
    await client.chat.completions.create({ model: M.openai, messages, functions: [weatherFunction], function_call: "auto" });
    const body = w.sent("openai");
    assert.deepEqual(body.functions, [weatherFunction]);
    assert.equal(body.function_call, "auto");
    assert.deepEqual(body.messages, messages);
    assert.equal(body.tools, undefined);
  });
});
