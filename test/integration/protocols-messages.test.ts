// Messages in (the @anthropic-ai/sdk client, which sends `Authorization: Bearer` and
// `anthropic-version: 2026-10-21`), every channel protocol out: `anthropic` as a pure
// pass-through (body, cache_control, thinking, anthropic-version/-beta, event-by-event SSE,
// cache usage), `openai` and `gemini` converted through the hub. Errors in the messages shape;
// a property test of messages → openai → messages.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import { LONG_CONTEXT_BETA, LONG_CONTEXT_REFUSAL } from "../helpers/fake-anthropic.js";
import {
  ANTHROPIC_UPSTREAM_MODEL, CANONICAL, M, TEXT, last, startWorld, weatherArgs, weatherSchema, type ChannelName, type World,
} from "../helpers/protocol-world.js";
import { CHANNEL_KEY, TOKEN, rawRequest } from "./support.js";

type Params = Anthropic.MessageCreateParamsNonStreaming;
type Event = Anthropic.RawMessageStreamEvent;

const SDK_VERSION = "2026-10-21";

const weatherTool: Anthropic.Tool = { name: "get_weather", description: "Weather for a city", input_schema: { ...weatherSchema } };

interface Target {
  readonly name: ChannelName;
  readonly model: string;
  readonly canonical: object;
  /** The usage fields the client sees (a subset check). */
  readonly clientUsage: Record<string, unknown>;
}

const targets: readonly Target[] = [
  {
    name: "openai", model: M.openai, canonical: CANONICAL.openai,
    clientUsage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 2, output_tokens: 5 },
  },
  {
    name: "anthropic", model: M.anthropic, canonical: CANONICAL.anthropic,
    clientUsage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 },
  },
  {
    name: "gemini", model: M.gemini, canonical: CANONICAL.gemini,
    clientUsage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 },
  },
];

function pick(o: object, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, (o as Record<string, unknown>)[k]]));
}

describe("messages in, every channel protocol", () => {
  let w: World;
  let client: Anthropic;
  /** When set, the anthropic fake refuses the 1M beta with this status. */
  let refuse1M: 400 | 503 | undefined;

  before(async () => {
    w = await startWorld();
    client = new Anthropic({ apiKey: TOKEN, baseURL: w.gw.url, maxRetries: 0 });
  });
  after(async () => { await w?.close(); });
  beforeEach(() => { w.reset(); refuse1M = undefined; });

  /** `w.scriptText`, except that the anthropic fake refuses the 1M beta while `refuse1M` is set. */
  function scriptText(t: ChannelName, text: string): void {
    if (t !== "anthropic") return w.scriptText(t, text);
    w.scripts.anthropic = (r) => refuse1M && r.betas.includes(LONG_CONTEXT_BETA)
      ? { kind: "error", status: refuse1M, message: LONG_CONTEXT_REFUSAL }
      : { kind: "ok", text, chunks: 5 };
  }

  async function events(params: Params, headers?: Record<string, string>): Promise<Event[]> {
    const s = await client.messages.create({ ...params, stream: true }, { headers });
    const all: Event[] = [];
    for await (const e of s) all.push(e);
    return all;
  }

  const textOf = (evs: Event[]) => evs.map((e) => e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : "").join("");

  for (const t of targets) {
    describe(`→ ${t.name} channel${t.name === "anthropic" ? " (pass-through)" : ""}`, () => {
      test("non-stream: text intact, usage normalised and in messages fields, stop_reason end_turn", async () => {
        scriptText(t.name, TEXT);
        const mark = w.mark();
        const out = await client.messages.create({ model: t.model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
        assert.equal(out.type, "message");
        assert.equal(out.role, "assistant");
        assert.deepEqual(out.content.map((b) => b.type), ["text"]);
        assert.equal((out.content[0] as Anthropic.TextBlock).text, TEXT);
        assert.equal(out.stop_reason, "end_turn");
        assert.deepEqual(pick(out.usage, Object.keys(t.clientUsage)), t.clientUsage);
        if (t.name === "openai") assert.deepEqual((out.usage as unknown as Record<string, unknown>).output_tokens_details, { thinking_tokens: 1 });
        assert.equal(out.model, t.name === "anthropic" ? ANTHROPIC_UPSTREAM_MODEL : t.model,
          "converted answers carry the client's model name; a pass-through carries the upstream's");
        const rec = await w.record(mark);
        assert.equal(rec.status, 200);
        assert.deepEqual(rec.usage, t.canonical);
      });

      test("stream: text deltas concatenate; final usage and stop reason; usage normalised", async () => {
        scriptText(t.name, TEXT);
        const mark = w.mark();
        const s = client.messages.stream({ model: t.model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
        const deltas: string[] = [];
        s.on("text", (d) => deltas.push(d));
        const final = await s.finalMessage();
        assert.ok(deltas.length >= 2, `several text deltas (got ${deltas.length})`);
        assert.equal(deltas.join(""), TEXT);
        assert.equal((final.content[0] as Anthropic.TextBlock).text, TEXT);
        assert.equal(final.stop_reason, "end_turn");
        assert.deepEqual(pick(final.usage, Object.keys(t.clientUsage)), t.clientUsage);
        const rec = await w.record(mark);
        assert.deepEqual(rec.usage, t.canonical);
      });

      test("non-stream: tool_use round trip; the tool_result follow-up reaches the upstream natively", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const ask: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Zürich?" }];
        const out = await client.messages.create({ model: t.model, max_tokens: 200, messages: ask, tools: [weatherTool] });
        assert.equal(out.stop_reason, "tool_use");
        const use = out.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
        assert.ok(use, JSON.stringify(out.content));
        assert.equal(use.name, "get_weather");
        assert.deepEqual(use.input, weatherArgs);
        assert.ok(use.id);
        const decl = w.sent(t.name);
        if (t.name === "openai") {
          assert.deepEqual(decl.tools, [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: weatherSchema } }]);
        } else if (t.name === "gemini") {
          assert.deepEqual(decl.tools, [{ functionDeclarations: [{ name: "get_weather", description: "Weather for a city", parametersJsonSchema: weatherSchema }] }]);
        }

        w.reset();
        scriptText(t.name, "It is 18 °C.");
        const follow = await client.messages.create({
          model: t.model, max_tokens: 200, tools: [weatherTool],
          messages: [...ask, { role: "assistant", content: out.content },
            { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "18 °C, rain ☔" }] }],
        });
        assert.equal((follow.content[0] as Anthropic.TextBlock).text, "It is 18 °C.");
        const body = w.sent(t.name);
        if (t.name === "openai") {
          const msgs = body.messages as Record<string, any>[];
          assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "tool"]);
          assert.equal(msgs[1].tool_calls[0].id, use.id);
          assert.equal(msgs[1].tool_calls[0].function.name, "get_weather");
          assert.deepEqual(JSON.parse(msgs[1].tool_calls[0].function.arguments), weatherArgs);
          assert.deepEqual(msgs[2], { role: "tool", tool_call_id: use.id, content: "18 °C, rain ☔" });
        } else if (t.name === "anthropic") {
          assert.deepEqual(body.messages[2].content, [{ type: "tool_result", tool_use_id: use.id, content: "18 °C, rain ☔" }]);
        } else {
          const contents = body.contents as { role: string; parts: Record<string, any>[] }[];
          assert.deepEqual(contents.map((c) => c.role), ["user", "model", "user"]);
          assert.equal(contents[1].parts[0].functionCall.name, "get_weather");
          assert.deepEqual(contents[1].parts[0].functionCall.args, weatherArgs);
          assert.equal(contents[2].parts[0].functionResponse.name, "get_weather");
          assert.deepEqual(contents[2].parts[0].functionResponse.response, { output: "18 °C, rain ☔" });
        }
      });

      test("stream: input_json_delta fragments concatenate to the same JSON; stop_reason tool_use", async () => {
        w.scriptTool(t.name, "get_weather", weatherArgs);
        const mark = w.mark();
        const evs = await events({ model: t.model, max_tokens: 200, messages: [{ role: "user", content: "Weather?" }], tools: [weatherTool] });
        const start = evs.find((e): e is Anthropic.RawContentBlockStartEvent => e.type === "content_block_start" && e.content_block.type === "tool_use");
        assert.ok(start);
        assert.equal((start.content_block as Anthropic.ToolUseBlock).name, "get_weather");
        const json = evs.map((e) => e.type === "content_block_delta" && e.delta.type === "input_json_delta" && e.index === start.index
          ? e.delta.partial_json : "").join("");
        assert.deepEqual(JSON.parse(json), weatherArgs);
        const delta = evs.find((e): e is Anthropic.RawMessageDeltaEvent => e.type === "message_delta");
        assert.equal(delta?.delta.stop_reason, "tool_use");
        assert.equal(evs.at(-1)?.type, "message_stop");
        assert.deepEqual((await w.record(mark)).usage, t.canonical);
      });

      if (t.name !== "anthropic") {
        test("system, max_tokens, temperature, stop_sequences and thinking reach the upstream in their native places", async () => {
          scriptText(t.name, "ok");
          await client.messages.create({
            model: t.model, max_tokens: 3000, temperature: 0.25, stop_sequences: ["END"],
            system: [{ type: "text", text: "Be terse. 简洁。" }],
            thinking: { type: "enabled", budget_tokens: 2048 },
            messages: [{ role: "user", content: "hello" }],
          } as Params); // SDK 1.12 types drop temperature (API 2026-10-21); older clients still send it
          const body = w.sent(t.name);
          if (t.name === "openai") {
            assert.deepEqual(body.messages[0], { role: "system", content: "Be terse. 简洁。" });
            assert.deepEqual(body.messages[1], { role: "user", content: "hello" });
            assert.equal(body.max_completion_tokens, 3000);
            assert.equal(body.temperature, 0.25);
            assert.deepEqual(body.stop, ["END"]);
            assert.equal(body.reasoning_effort, "low");
          } else {
            assert.deepEqual(body.systemInstruction, { parts: [{ text: "Be terse. 简洁。" }] });
            assert.equal(body.generationConfig.maxOutputTokens, 3000);
            assert.equal(body.generationConfig.temperature, 0.25);
            assert.deepEqual(body.generationConfig.stopSequences, ["END"]);
            assert.equal(body.generationConfig.thinkingConfig.thinkingBudget, 2048);
          }
        });
      }
    });
  }

  describe("finish reasons", () => {
    test("gemini SAFETY → refusal (non-stream and stream)", async () => {
      w.scripts.gemini = () => ({ kind: "safety" });
      const out = await client.messages.create({ model: M.gemini, max_tokens: 50, messages: [{ role: "user", content: "x" }] });
      assert.equal(out.stop_reason, "refusal");
      const evs = await events({ model: M.gemini, max_tokens: 50, messages: [{ role: "user", content: "x" }] });
      assert.equal(evs.find((e): e is Anthropic.RawMessageDeltaEvent => e.type === "message_delta")?.delta.stop_reason, "refusal");
    });
  });

  describe("pass-through to the anthropic channel", () => {
    /** A request using what only the messages protocol has: cache_control, thinking with a
     * signed earlier thinking block, tool use, top-level metadata and an unknown future field. */
    const rich = {
      model: M.anthropic,
      max_tokens: 4000,
      system: [{ type: "text", text: "You are a weather bot. ".repeat(20), cache_control: { type: "ephemeral", ttl: "1h" } }],
      thinking: { type: "enabled", budget_tokens: 2048 },
      tools: [{ ...weatherTool, cache_control: { type: "ephemeral" } }],
      metadata: { user_id: "user-42" },
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather in Zürich?", cache_control: { type: "ephemeral" } }] },
        { role: "assistant", content: [
          { type: "thinking", thinking: "I should call the tool.", signature: "EqQBCkYIBRgCKkDsig==" },
          { type: "tool_use", id: "toolu_01A", name: "get_weather", input: { city: "Zürich" } },
        ] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: "18 °C" }] },
      ],
      context_management: { edits: [{ type: "clear_thinking_20251015" }] },
    };

    test("the body reaches the fake unchanged but for model_map (cache_control, thinking, unknown fields)", async () => {
      w.scripts.anthropic = () => ({ kind: "thinking", text: "18 degrees" });
      const out = await client.messages.create(rich as unknown as Params);
      assert.deepEqual(last(w.anthropic.received).body, { ...rich, model: ANTHROPIC_UPSTREAM_MODEL });
      assert.deepEqual(out.content.map((b) => b.type), ["thinking", "text"]);
      assert.equal((out.content[0] as Anthropic.ThinkingBlock).signature, "EqQBCkYIBRgCKkDfakeSignature==");
    });

    test("anthropic-version is forwarded as sent, anthropic-beta passes through, the channel key replaces the token", async () => {
      scriptText("anthropic", "hi");
      await client.messages.create({ model: M.anthropic, max_tokens: 10, messages: [{ role: "user", content: "x" }] },
        { headers: { "anthropic-beta": `${LONG_CONTEXT_BETA},interleaved-thinking-2025-05-14` } });
      let r = last(w.anthropic.received);
      assert.equal(r.headers["anthropic-version"], SDK_VERSION);
      assert.deepEqual(r.betas, [LONG_CONTEXT_BETA, "interleaved-thinking-2025-05-14"]);
      assert.equal(r.headers["x-api-key"], CHANNEL_KEY);
      assert.equal(r.headers.authorization, undefined, "the client's Bearer token is not forwarded");
      const res = await rawRequest(`${w.gw.url}/v1/messages`, {
        method: "POST", body: JSON.stringify({ model: M.anthropic, max_tokens: 10, messages: [{ role: "user", content: "x" }] }),
        headers: { "content-type": "application/json", "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "anthropic-beta": LONG_CONTEXT_BETA },
      });
      assert.equal(res.status, 200, res.text);
      r = last(w.anthropic.received);
      assert.equal(r.headers["anthropic-version"], "2023-06-01");
      assert.deepEqual(r.betas, [LONG_CONTEXT_BETA]);
      assert.equal(r.headers["x-api-key"], CHANNEL_KEY);
    });

    test("an upstream refusing the 1M beta (400) reaches the client as that 400 with the upstream's message", async () => {
      refuse1M = 400;
      scriptText("anthropic", "never");
      const mark = w.mark();
      await assert.rejects(
        client.messages.create({ model: M.anthropic, max_tokens: 10, messages: [{ role: "user", content: "x" }] },
          { headers: { "anthropic-beta": LONG_CONTEXT_BETA } }),
        (e: unknown) => {
          assert.ok(e instanceof Anthropic.BadRequestError, String(e));
          assert.equal(e.status, 400);
          assert.equal(e.type, "invalid_request_error");
          const body = e.error as { type: string; error: { type: string; message: string } };
          assert.equal(body.type, "error");
          assert.equal(body.error.message, LONG_CONTEXT_REFUSAL);
          return true;
        });
      const rec = await w.record(mark);
      assert.equal(rec.status, 400);
      assert.equal(rec.attempts, 1, "a 400 is the answer: no failover");
    });

    test("an upstream refusing the 1M beta with 503 reaches the client as 503 in the messages shape", async () => {
      refuse1M = 503;
      scriptText("anthropic", "never");
      await assert.rejects(
        client.messages.create({ model: M.anthropic, max_tokens: 10, messages: [{ role: "user", content: "x" }] },
          { headers: { "anthropic-beta": LONG_CONTEXT_BETA } }),
        (e: unknown) => {
          assert.ok(e instanceof Anthropic.APIError, String(e));
          assert.equal(e.status, 503);
          const body = e.error as { type: string; error: { type: string; message: string } };
          assert.equal(body.type, "error");
          assert.equal(body.error.type, "overloaded_error");
          assert.ok(body.error.message.length > 0);
          return true;
        });
    });

    test("a missing anthropic-version header → 400 in the messages error shape (missing_version_header)", async () => {
      const before = w.anthropic.received.length;
      const res = await rawRequest(`${w.gw.url}/v1/messages`, {
        method: "POST", body: JSON.stringify({ model: M.anthropic, max_tokens: 10, messages: [{ role: "user", content: "x" }] }),
        headers: { "content-type": "application/json", "x-api-key": TOKEN },
      });
      assert.equal(res.status, 400);
      assert.equal(res.json?.type, "error");
      assert.equal(res.json?.error?.type, "invalid_request_error");
      assert.equal(res.json?.error?.code, "missing_version_header");
      assert.match(res.json?.error?.message, /anthropic-version/);
      assert.ok(res.headers["x-gateway-request-id"]);
      assert.equal(w.anthropic.received.length, before);
    });

    test("cache usage (creation and read) is tapped and billed, non-stream and stream", async () => {
      w.scripts.anthropic = () => ({ kind: "cache", text: "cached" });
      for (const streamed of [false, true]) {
        const mark = w.mark();
        let requestId: string | null;
        let usage: Anthropic.Usage;
        if (!streamed) {
          const { data, response } = await client.messages.create({ model: M.anthropic, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).withResponse();
          requestId = response.headers.get("x-gateway-request-id");
          usage = data.usage;
        } else {
          const s = client.messages.stream({ model: M.anthropic, max_tokens: 10, messages: [{ role: "user", content: "x" }] });
          const final = await s.finalMessage();
          requestId = (await s.withResponse()).response.headers.get("x-gateway-request-id");
          usage = final.usage;
        }
        assert.equal(usage.cache_creation_input_tokens, 7);
        assert.equal(usage.cache_read_input_tokens, 30);
        const rec = await w.record(mark);
        assert.deepEqual(rec.usage, CANONICAL.anthropicCache, streamed ? "stream" : "non-stream");
        const entry = await w.entry(requestId!);
        // 12×3 + 30×3×0.1 + 7×3×1.25 + 5×15 = 146.25 per 1M, × 0.7 = 102.375 µ
        assert.equal(entry.costNano, 102375n);
      }
    });

    test("the stream passes event by event: every upstream event (ping included), in order, as it arrives", async () => {
      w.scripts.anthropic = () => ({ kind: "ok", text: "one two three four", chunks: 4, chunkDelayMs: 40 });
      const started = Date.now();
      const res = await fetch(`${w.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": TOKEN, "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: M.anthropic, max_tokens: 10, stream: true, messages: [{ role: "user", content: "x" }] }),
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
      const arrivals: number[] = [];
      let text = "";
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) {
        arrivals.push(Date.now() - started);
        text += decoder.decode(chunk as Uint8Array, { stream: true });
      }
      const names = text.split("\n\n").filter((b) => b.trim()).map((b) => /^event: (.*)$/m.exec(b)?.[1]);
      assert.deepEqual(names, [
        "message_start", "ping", "content_block_start",
        "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta",
        "content_block_stop", "message_delta", "message_stop",
      ]);
      // 10 events 40 ms apart: the client sees them spread out, not in one piece at the end.
      assert.ok(arrivals.length >= 5, `arrived in ${arrivals.length} reads`);
      assert.ok(arrivals.at(-1)! - arrivals[0] >= 200, `spread ${arrivals.at(-1)! - arrivals[0]} ms`);
    });
  });

  describe("errors in the messages shape (converted paths)", () => {
    test("upstream 400 from the openai channel → the messages error shape with the upstream's message", async () => {
      w.scripts.openai = () => ({ kind: "error", status: 400, message: "Invalid 'messages[0].content': string too long." });
      await assert.rejects(
        client.messages.create({ model: M.openai, max_tokens: 10, messages: [{ role: "user", content: "x" }] }),
        (e: unknown) => {
          assert.ok(e instanceof Anthropic.BadRequestError, String(e));
          const body = e.error as { type: string; error: { type: string; message: string } };
          assert.equal(body.type, "error");
          assert.equal(body.error.type, "invalid_request_error");
          assert.match(body.error.message, /Invalid 'messages\[0\]\.content': string too long\./);
          return true;
        });
    });

    // Issue 19 changed this deliberately: an unknown field was a 400; it is dropped and named
    // now (conversion-lenient.test.ts). A field whose loss would change the answer still is.
    test("a field whose loss would change the answer → 400 naming it", async () => {
      for (const [model, extra, name] of [
        [M.openai, { container: "cntr_1" }, /\bcontainer\b/],
        [M.gemini, { mcp_servers: [{ type: "url", url: "https://x", name: "x" }] }, /\bmcp_servers\b/],
      ] as const) {
        await assert.rejects(
          client.messages.create({ model, max_tokens: 10, messages: [{ role: "user", content: "x" }], ...extra } as Params),
          (e: unknown) => {
            assert.ok(e instanceof Anthropic.BadRequestError, `${model} ${JSON.stringify(extra)}: ${String(e)}`);
            assert.match((e.error as { error: { message: string } }).error.message, name);
            return true;
          });
      }
    });
  });

  describe("property: messages → openai → messages keeps text and tool arguments", () => {
    const jsonValue = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null),
      fc.array(fc.string({ unit: "grapheme-composite", maxLength: 6 }), { maxLength: 3 }),
    );
    const text = fc.oneof(
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
      fc.constantFrom("👩‍👩‍👧‍👦 family", "中文，日本語、한국어", "\"q\" 'q' `q`", "a\nb\r\nc\u2028d", "🇯🇵🇨🇭"),
      fc.string({ minLength: 1, maxLength: 30 }),
    );
    const args = fc.dictionary(fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }), jsonValue, { maxKeys: 4 });

    test("user text echoed back survives, non-stream and stream", async () => {
      await fc.assert(fc.asyncProperty(text, fc.boolean(), async (s, streamed) => {
        w.scripts.openai = () => ({ kind: "ok", chunks: 4 });
        const params = { model: M.openai, max_tokens: 50, messages: [{ role: "user" as const, content: s }] };
        const got = streamed ? textOf(await events(params))
          : ((await client.messages.create(params)).content[0] as Anthropic.TextBlock).text;
        assert.equal(got, `oa says: ${s}`);
        assert.equal(last(w.openai.received).body.messages && (last(w.openai.received).body.messages as { content: string }[])[0].content, s);
      }), { numRuns: 25 });
    });

    test("tool arguments survive, non-stream and stream", async () => {
      await fc.assert(fc.asyncProperty(args, fc.boolean(), async (a, streamed) => {
        w.scripts.openai = () => ({ kind: "tool_call", name: "get_weather", args: JSON.stringify(a) });
        const params = { model: M.openai, max_tokens: 50, messages: [{ role: "user" as const, content: "go" }], tools: [weatherTool] };
        let got: unknown;
        if (!streamed) {
          const out = await client.messages.create(params);
          got = out.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")?.input;
        } else {
          const evs = await events(params);
          got = JSON.parse(evs.map((e) => e.type === "content_block_delta" && e.delta.type === "input_json_delta" ? e.delta.partial_json : "").join(""));
        }
        assert.deepEqual(JSON.parse(JSON.stringify(got)), JSON.parse(JSON.stringify(a)));
      }), { numRuns: 25 });
    });
  });
});
