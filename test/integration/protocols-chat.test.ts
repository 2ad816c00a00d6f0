// Chat-completions in (the openai SDK), every channel protocol out: an `openai` channel
// (pass-through), an `anthropic` and a `gemini` channel (converted through the hub), each a
// fake speaking its real wire format. Text, tool calls and tool results, request fields,
// reasoning effort, usage and finish reasons, non-stream and stream; errors in the chat
// shape; failover across protocols; a property test of chat → anthropic → chat.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import OpenAI from "openai";
import { fakeUsage } from "../helpers/fake-openai.js";
import {
  ANTHROPIC_UPSTREAM_MODEL, CANONICAL, M, TEXT, last, splitCost, openaiClient, startWorld, weatherArgs, weatherSchema, type ChannelName, type World,
} from "../helpers/protocol-world.js";
import { TOKEN } from "./support.js";

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: { name: "get_weather", description: "Weather for a city", parameters: { ...weatherSchema } },
};

/** The chat-completions usage a client sees for a fake's standard usage. */
const noCacheUsage = {
  prompt_tokens: 12, completion_tokens: 5, total_tokens: 17,
  prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 },
};

interface Target {
  readonly name: ChannelName;
  readonly model: string;
  readonly canonical: object;
  readonly clientUsage: object;
}

const targets: readonly Target[] = [
  { name: "openai", model: M.openai, canonical: CANONICAL.openai, clientUsage: fakeUsage },
  { name: "anthropic", model: M.anthropic, canonical: CANONICAL.anthropic, clientUsage: noCacheUsage },
  { name: "gemini", model: M.gemini, canonical: CANONICAL.gemini, clientUsage: noCacheUsage },
];

describe("chat-completions in, every channel protocol", () => {
  let w: World;
  let client: OpenAI;

  before(async () => {
    w = await startWorld();
    client = openaiClient(w);
  });
  after(async () => { await w?.close(); });
  beforeEach(() => w.reset());

  /** Streams a request, returning all chunks. */
  async function stream(params: Params): Promise<Chunk[]> {
    const s = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
    const all: Chunk[] = [];
    for await (const c of s) all.push(c);
    return all;
  }

  /** Asserts the received body of the follow-up carries the tool result in the upstream's native shape. */
  function assertToolResultUpstream(t: ChannelName, callId: string, result: string): void {
    const body = w.sent(t);
    if (t === "openai") {
      const msgs = body.messages as Record<string, unknown>[];
      const assistant = msgs.find((m) => m.role === "assistant") as { tool_calls: { id: string; function: { name: string; arguments: string } }[] };
      assert.equal(assistant.tool_calls[0].id, callId);
      assert.deepEqual(JSON.parse(assistant.tool_calls[0].function.arguments), weatherArgs);
      assert.deepEqual(msgs.at(-1), { role: "tool", tool_call_id: callId, content: result });
    } else if (t === "anthropic") {
      const msgs = body.messages as { role: string; content: Record<string, unknown>[] }[];
      assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "user"]);
      assert.deepEqual(msgs[1].content, [{ type: "tool_use", id: callId, name: "get_weather", input: weatherArgs }]);
      assert.deepEqual(msgs[2].content, [{ type: "tool_result", tool_use_id: callId, content: [{ type: "text", text: result }] }]);
    } else {
      const contents = body.contents as { role: string; parts: Record<string, any>[] }[];
      assert.deepEqual(contents.map((c) => c.role), ["user", "model", "user"]);
      assert.equal(contents[1].parts[0].functionCall.name, "get_weather");
      assert.deepEqual(contents[1].parts[0].functionCall.args, weatherArgs);
      const fr = contents[2].parts[0].functionResponse;
      assert.equal(fr.name, "get_weather");
      assert.deepEqual(fr.response, { output: result });
    }
  }

  for (const t of targets) {
    describe(`→ ${t.name} channel`, () => {
      test("non-stream: text intact, usage normalised and in chat fields, finish_reason stop", async () => {
        w.scriptText(t.name, TEXT);
        const mark = w.mark();
        const out = await client.chat.completions.create({ model: t.model, messages: [{ role: "user", content: "hi" }] });
        assert.equal(out.object, "chat.completion");
        assert.equal(out.model, t.name === "openai" ? t.model : t.model, "the client sees its own model name");
        assert.equal(out.choices.length, 1);
        assert.equal(out.choices[0].message.content, TEXT);
        assert.equal(out.choices[0].finish_reason, "stop");
        assert.deepEqual(out.usage, t.clientUsage);
        const rec = await w.record(mark);
        assert.equal(rec.status, 200);
        assert.deepEqual(rec.usage, t.canonical);
        if (t.name === "anthropic") assert.equal(w.sent("anthropic").model, ANTHROPIC_UPSTREAM_MODEL, "model_map applied");
      });

      test("stream: deltas concatenate to the text; include_usage gives one usage chunk; usage normalised", async () => {
        w.scriptText(t.name, TEXT);
        const mark = w.mark();
        const chunks = await stream({ model: t.model, messages: [{ role: "user", content: "hi" }] });
        const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
        assert.equal(text, TEXT);
        assert.ok(chunks.filter((c) => (c.choices[0]?.delta?.content ?? "") !== "").length >= 2, "text arrives in several chunks");
        assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason).at(-1)?.choices[0].finish_reason, "stop");
        const usageChunks = chunks.filter((c) => c.usage);
        assert.equal(usageChunks.length, 1, "exactly one usage chunk");
        assert.deepEqual(usageChunks[0].choices, []);
        const final = splitCost(usageChunks[0].usage);
        assert.deepEqual(final.usage, t.clientUsage);
        assert.equal(chunks.at(-1), usageChunks[0], "usage chunk is last");
        const rec = await w.record(mark);
        assert.deepEqual(rec.usage, t.canonical);
        assert.equal(final.cost, await w.shownCost(rec.id), "the charged cost beside the usage");
      });

      test("stream without include_usage: no usage reaches the client, the gateway still learns it", async () => {
        w.scriptText(t.name, TEXT);
        const mark = w.mark();
        const s = await client.chat.completions.create({ model: t.model, messages: [{ role: "user", content: "hi" }], stream: true });
        const chunks: Chunk[] = [];
        for await (const c of s) chunks.push(c);
        assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), TEXT);
        for (const c of chunks) {
          assert.ok(c.choices.length > 0, `a chunk without choices: ${JSON.stringify(c)}`);
          assert.ok(!c.usage, `usage reached the client: ${JSON.stringify(c)}`);
        }
        assert.deepEqual((await w.record(mark)).usage, t.canonical);
      });

      test("non-stream: tool call round trip; follow-up with the tool result reaches the upstream natively", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const ask: Msg[] = [{ role: "user", content: "Weather in Zürich?" }];
        const out = await client.chat.completions.create({ model: t.model, messages: ask, tools: [weatherTool] });
        const choice = out.choices[0];
        assert.equal(choice.finish_reason, "tool_calls");
        const calls = choice.message.tool_calls ?? [];
        assert.equal(calls.length, 1);
        const call = calls[0];
        assert.equal(call.type, "function");
        assert.ok(call.type === "function");
        assert.equal(call.function.name, "get_weather");
        assert.deepEqual(JSON.parse(call.function.arguments), weatherArgs);
        assert.ok(call.id, "the call has an id");
        // the tool the client declared reached the upstream in its own shape
        const decl = w.sent(t.name);
        if (t.name === "anthropic") {
          assert.deepEqual(decl.tools, [{ name: "get_weather", description: "Weather for a city", input_schema: weatherSchema }]);
        } else if (t.name === "gemini") {
          assert.deepEqual(decl.tools, [{ functionDeclarations: [{ name: "get_weather", description: "Weather for a city", parametersJsonSchema: weatherSchema }] }]);
        }

        w.scripts = {}; // the follow-up gets a plain answer
        w.scriptText(t.name, "It is 18 °C.");
        const follow = await client.chat.completions.create({
          model: t.model, tools: [weatherTool],
          messages: [...ask, choice.message as Msg, { role: "tool", tool_call_id: call.id, content: "18 °C, rain ☔" }],
        });
        assert.equal(follow.choices[0].message.content, "It is 18 °C.");
        assertToolResultUpstream(t.name, call.id, "18 °C, rain ☔");
      });

      test("stream: tool-call argument deltas concatenate to the same JSON; finish_reason tool_calls", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const mark = w.mark();
        const chunks = await stream({ model: t.model, messages: [{ role: "user", content: "Weather?" }], tools: [weatherTool] });
        const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
        assert.ok(deltas.length >= 1);
        assert.ok(deltas.every((d) => d.index === 0), "one tool call, index 0");
        assert.equal(deltas.find((d) => d.function?.name)?.function?.name, "get_weather");
        const id = deltas.find((d) => d.id)?.id;
        assert.ok(id, "the call has an id");
        assert.equal(deltas.filter((d) => d.id).length, 1, "the id comes once");
        const args = deltas.map((d) => d.function?.arguments ?? "").join("");
        assert.deepEqual(JSON.parse(args), weatherArgs);
        assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason).at(-1)?.choices[0].finish_reason, "tool_calls");
        assert.deepEqual(splitCost(chunks.at(-1)?.usage).usage, t.clientUsage);
        assert.deepEqual((await w.record(mark)).usage, t.canonical);
      });

      test("system prompt, max tokens, temperature and stop reach the upstream in their native places", async () => {
        w.scriptText(t.name, "ok");
        await client.chat.completions.create({
          model: t.model, max_tokens: 77, temperature: 0.25, stop: ["END", "STOP"],
          messages: [{ role: "system", content: "Be terse. 简洁。" }, { role: "user", content: "hello" }],
        });
        const body = w.sent(t.name) as Record<string, any>;
        if (t.name === "openai") {
          assert.deepEqual(body.messages[0], { role: "system", content: "Be terse. 简洁。" });
          assert.equal(body.max_tokens, 77);
          assert.equal(body.temperature, 0.25);
          assert.deepEqual(body.stop, ["END", "STOP"]);
        } else if (t.name === "anthropic") {
          assert.deepEqual(body.system, [{ type: "text", text: "Be terse. 简洁。" }]);
          assert.deepEqual(body.messages, [{ role: "user", content: [{ type: "text", text: "hello" }] }]);
          assert.equal(body.max_tokens, 77);
          assert.equal(body.temperature, 0.25);
          assert.deepEqual(body.stop_sequences, ["END", "STOP"]);
          assert.equal(last(w.anthropic.received).headers["anthropic-version"], "2023-06-01");
        } else {
          assert.deepEqual(body.systemInstruction, { parts: [{ text: "Be terse. 简洁。" }] });
          assert.deepEqual(body.contents, [{ role: "user", parts: [{ text: "hello" }] }]);
          assert.equal(body.generationConfig.maxOutputTokens, 77);
          assert.equal(body.generationConfig.temperature, 0.25);
          assert.deepEqual(body.generationConfig.stopSequences, ["END", "STOP"]);
        }
      });

      test("reasoning_effort high ↔ the target's thinking budget", async () => {
        w.scriptText(t.name, "thought about it");
        await client.chat.completions.create({
          model: t.model, max_tokens: 1000, reasoning_effort: "high", messages: [{ role: "user", content: "think" }],
        });
        const body = w.sent(t.name) as Record<string, any>;
        if (t.name === "openai") assert.equal(body.reasoning_effort, "high");
        else if (t.name === "anthropic") {
          assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 24576 });
          assert.ok(body.max_tokens > 24576, `max_tokens ${body.max_tokens} must exceed the budget`);
        } else {
          assert.equal(body.generationConfig.thinkingConfig.thinkingBudget, 24576);
        }
      });
    });
  }

  describe("finish reasons", () => {
    test("anthropic max_tokens → length (non-stream and stream)", async () => {
      w.scripts.anthropic = () => ({ kind: "ok", text: "cut off", stopReason: "max_tokens" });
      const out = await client.chat.completions.create({ model: M.anthropic, messages: [{ role: "user", content: "x" }] });
      assert.equal(out.choices[0].finish_reason, "length");
      const chunks = await stream({ model: M.anthropic, messages: [{ role: "user", content: "x" }] });
      assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason).at(-1)?.choices[0].finish_reason, "length");
    });

    test("gemini SAFETY → content_filter (non-stream and stream)", async () => {
      w.scripts.gemini = () => ({ kind: "safety" });
      const out = await client.chat.completions.create({ model: M.gemini, messages: [{ role: "user", content: "x" }] });
      assert.equal(out.choices[0].finish_reason, "content_filter");
      const chunks = await stream({ model: M.gemini, messages: [{ role: "user", content: "x" }] });
      assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason).at(-1)?.choices[0].finish_reason, "content_filter");
    });
  });

  describe("thinking and cache usage", () => {
    test("anthropic thinking → reasoning_content (non-stream and stream)", async () => {
      w.scripts.anthropic = () => ({ kind: "thinking", thinking: "Let me think 🤔", text: "42" });
      const out = await client.chat.completions.create({ model: M.anthropic, reasoning_effort: "low", messages: [{ role: "user", content: "x" }] });
      assert.equal(out.choices[0].message.content, "42");
      assert.equal((out.choices[0].message as unknown as { reasoning_content?: string }).reasoning_content, "Let me think 🤔");
      const chunks = await stream({ model: M.anthropic, reasoning_effort: "low", messages: [{ role: "user", content: "x" }] });
      const deltas = chunks.map((c) => c.choices[0]?.delta as { reasoning_content?: string; content?: string } | undefined);
      assert.equal(deltas.map((d) => d?.reasoning_content ?? "").join(""), "Let me think 🤔");
      assert.equal(deltas.map((d) => d?.content ?? "").join(""), "42");
    });

    test("gemini thoughts and cached tokens → reasoning_tokens and cached_tokens, billed as normalised", async () => {
      w.scripts.gemini = () => ({ kind: "thinking", thought: "hmm", text: "done" });
      let mark = w.mark();
      const out = await client.chat.completions.create({ model: M.gemini, messages: [{ role: "user", content: "x" }] });
      assert.equal(out.choices[0].message.content, "done");
      assert.deepEqual(out.usage?.completion_tokens_details, { reasoning_tokens: 3 });
      assert.equal(out.usage?.completion_tokens, 8);
      assert.deepEqual((await w.record(mark)).usage, { input: 12, cacheRead: 0, cacheWrite: 0, output: 8, reasoning: 3 });
      w.scripts.gemini = () => ({ kind: "cache", text: "cached" });
      mark = w.mark();
      const chunks = await stream({ model: M.gemini, messages: [{ role: "user", content: "x" }] });
      assert.equal(chunks.at(-1)?.usage?.prompt_tokens, 12);
      assert.equal(chunks.at(-1)?.usage?.prompt_tokens_details?.cached_tokens, 8);
      assert.deepEqual((await w.record(mark)).usage, { input: 4, cacheRead: 8, cacheWrite: 0, output: 5, reasoning: 0 });
    });

    test("anthropic cache creation and reads → prompt_tokens and cached_tokens, billed as normalised", async () => {
      w.scripts.anthropic = () => ({ kind: "cache", text: "cached" });
      const mark = w.mark();
      const out = await client.chat.completions.create({ model: M.anthropic, messages: [{ role: "user", content: "x" }] });
      assert.equal(out.usage?.prompt_tokens, 12 + 30 + 7);
      assert.equal(out.usage?.prompt_tokens_details?.cached_tokens, 30);
      assert.deepEqual((await w.record(mark)).usage, CANONICAL.anthropicCache);
    });
  });

  describe("errors in the chat shape", () => {
    const expectBadRequest = async (params: Record<string, unknown>, pattern: RegExp) => {
      const mark = w.mark();
      const before = w.anthropic.received.length;
      await assert.rejects(
        client.chat.completions.create(params as unknown as Params),
        (e: unknown) => {
          assert.ok(e instanceof OpenAI.BadRequestError, `expected a 400, got ${String(e)}`);
          assert.equal(e.status, 400);
          assert.match(e.message, pattern);
          assert.equal((e.error as { type?: string }).type, "invalid_request_error");
          return true;
        });
      return { mark, before };
    };

    test("upstream 400 on a converted path: the chat error shape with the upstream's message", async () => {
      w.scripts.anthropic = () => ({ kind: "error", status: 400, message: "messages.0.content: text blocks must be non-empty" });
      const mark = w.mark();
      await assert.rejects(
        client.chat.completions.create({ model: M.anthropic, messages: [{ role: "user", content: "x" }] }),
        (e: unknown) => {
          assert.ok(e instanceof OpenAI.BadRequestError, String(e));
          assert.equal(e.status, 400);
          assert.match(e.message, /messages\.0\.content: text blocks must be non-empty/);
          const body = e.error as { message: string; type: string; code: string };
          assert.equal(body.type, "invalid_request_error");
          assert.equal(body.code, "upstream_rejected");
          return true;
        });
      const rec = await w.record(mark);
      assert.equal(rec.status, 400);
      assert.equal(rec.usage, undefined, "a refused request bills nothing");
    });

    test("upstream 400 on a converted stream: the chat error shape before any chunk", async () => {
      w.scripts.gemini = () => ({ kind: "error", status: 400, message: "Invalid JSON payload received. Unknown name \"foo\"" });
      await assert.rejects(
        stream({ model: M.gemini, messages: [{ role: "user", content: "x" }] }),
        (e: unknown) => e instanceof OpenAI.BadRequestError && /Unknown name \\?"foo\\?"/.test(e.message));
    });

    test("n: 2 to an anthropic-served model → 400 naming n; nothing sent upstream", async () => {
      const { before } = await expectBadRequest({ model: M.anthropic, n: 2, messages: [{ role: "user", content: "x" }] }, /\bn\b/);
      assert.equal(w.anthropic.received.length, before);
    });

    test("frequency_penalty: 0.5 to anthropic is dropped (the messages API has none) and named in x-gateway-dropped-fields", async () => {
      const { data, response } = await client.chat.completions
        .create({ model: M.anthropic, frequency_penalty: 0.5, messages: [{ role: "user", content: "x" }] }).withResponse();
      assert.equal(data.object, "chat.completion");
      assert.equal(response.headers.get("x-gateway-dropped-fields"), "frequency_penalty");
      assert.equal(last(w.anthropic.received).body.frequency_penalty, undefined);
    });

    test("anthropic-beta from a chat client reaches an anthropic channel; anthropic-version is the gateway's", async () => {
      const beta = new OpenAI({ apiKey: TOKEN, baseURL: `${w.gw.url}/v1`, maxRetries: 0,
        defaultHeaders: { "anthropic-beta": "context-1m-2025-08-07" } });
      await beta.chat.completions.create({ model: M.anthropic, messages: [{ role: "user", content: "x" }] });
      const seen = last(w.anthropic.received);
      assert.equal(seen.headers["anthropic-beta"], "context-1m-2025-08-07");
      assert.equal(seen.headers["anthropic-version"], "2023-06-01");
    });

    // Issue 19 changed this deliberately: an unknown field was a 400; it is dropped and named
    // now (conversion-lenient.test.ts). A field whose loss would change the answer still is.
    test("a field whose loss would change the answer → 400 naming it", async () => {
      await expectBadRequest({ model: M.anthropic, n: 2, messages: [{ role: "user", content: "x" }] }, /`n`/);
      await expectBadRequest({ model: M.gemini, logprobs: true, messages: [{ role: "user", content: "x" }] }, /`logprobs`/);
    });
  });

  describe("failover across protocols", () => {
    test("openai channel 500, then anthropic channel ok: one answer, billed once at the anthropic usage", async () => {
      w.scripts.openai = () => ({ kind: "error", status: 500 });
      w.scripts.anthropic = () => ({ kind: "ok", text: "from claude" });
      const oBefore = w.openai.received.length;
      const aBefore = w.anthropic.received.length;
      const mark = w.mark();
      const { data, response } = await client.chat.completions
        .create({ model: M.mixed, messages: [{ role: "user", content: "x" }] }).withResponse();
      assert.equal(data.choices[0].message.content, "from claude");
      assert.equal(data.model, M.mixed);
      assert.equal(w.openai.received.length, oBefore + 1);
      assert.equal(w.anthropic.received.length, aBefore + 1);
      const rec = await w.record(mark);
      assert.equal(rec.attempts, 2);
      assert.equal(rec.channel, "an");
      assert.deepEqual(rec.usage, CANONICAL.anthropic);
      const entry = await w.entry(response.headers.get("x-gateway-request-id")!);
      // 12 × 1 + 5 × 2 = 22 per 1M × 0.7 = 15.4 µ → 15400 nano
      assert.equal(entry.costNano, 15400n);
      assert.equal(entry.upstreamProtocol, "anthropic");
      assert.equal(w.gw.store.logs({ requestId: entry.requestId }).length, 1, "billed once");
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(w.sink.records.length, mark + 1, "one usage record");
    });

    test("stream: openai 500 then anthropic: one stream, billed once", async () => {
      w.scripts.openai = () => ({ kind: "error", status: 503 });
      w.scripts.anthropic = () => ({ kind: "ok", text: "streamed from claude", chunks: 3 });
      const mark = w.mark();
      const chunks = await stream({ model: M.mixed, messages: [{ role: "user", content: "x" }] });
      assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), "streamed from claude");
      const rec = await w.record(mark);
      assert.equal(rec.attempts, 2);
      assert.deepEqual(rec.usage, CANONICAL.anthropic);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(w.sink.records.length, mark + 1);
    });
  });

  describe("property: chat → anthropic → chat keeps text and tool arguments", () => {
    const jsonValue = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 12 }),
      fc.integer({ min: -1e6, max: 1e6 }),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ unit: "grapheme-composite", maxLength: 6 }), { maxLength: 3 }),
    );
    const text = fc.oneof(
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
      fc.constantFrom("👩‍👩‍👧‍👦 family", "中文，日本語、한국어", "\"q\" 'q' `q`", "a\nb\r\nc\u2028d", "\\u0000 not an escape", "🇯🇵🇨🇭"),
      fc.string({ minLength: 1, maxLength: 30 }),
    );
    const args = fc.dictionary(fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }), jsonValue, { maxKeys: 4 });

    test("user text echoed back survives, non-stream and stream", async () => {
      // The fake echoes the last user text after its name prefix.
      await fc.assert(fc.asyncProperty(text, fc.boolean(), async (s, streamed) => {
        w.scripts.anthropic = () => ({ kind: "ok", chunks: 4 });
        if (!streamed) {
          const out = await client.chat.completions.create({ model: M.anthropic, messages: [{ role: "user", content: s }] });
          assert.equal(out.choices[0].message.content, `an says: ${s}`);
        } else {
          const chunks = await stream({ model: M.anthropic, messages: [{ role: "user", content: s }] });
          assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), `an says: ${s}`);
        }
        const received = last(w.anthropic.received).body as { messages: { content: { text: string }[] }[] };
        assert.equal(received.messages[0].content[0].text, s);
      }), { numRuns: 25 });
    });

    test("tool arguments survive, non-stream and stream", async () => {
      await fc.assert(fc.asyncProperty(args, fc.boolean(), async (a, streamed) => {
        w.scripts.anthropic = () => ({ kind: "tool_use", name: "get_weather", input: a });
        let got: string;
        if (!streamed) {
          const out = await client.chat.completions.create({ model: M.anthropic, messages: [{ role: "user", content: "go" }], tools: [weatherTool] });
          const call = out.choices[0].message.tool_calls![0];
          assert.ok(call.type === "function");
          got = call.function.arguments;
        } else {
          const chunks = await stream({ model: M.anthropic, messages: [{ role: "user", content: "go" }], tools: [weatherTool] });
          got = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []).map((d) => d.function?.arguments ?? "").join("");
        }
        // fast-check dictionaries have a null prototype (and may use the key "__proto__"): compare as JSON.
        assert.deepEqual(JSON.parse(got), JSON.parse(JSON.stringify(a)));
      }), { numRuns: 25 });
    });
  });
});
