// The field policy end to end: real clients' requests carry fields only their own provider
// understands. Converted, those are dropped and named (x-gateway-dropped-fields, the usage
// log), what has a meaning in the target is mapped (a mid-conversation system message, top-k),
// what would change the answer is refused, and a model set to `conversion: strict` refuses
// the drops too. Pass-through drops nothing.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { M, startWorld, type World } from "../helpers/protocol-world.js";
import { channel, rawRequest, TOKEN, type RawResponse } from "./support.js";

const STRICT = { openai: "gpt-4o-mini-strict", gemini: "gemini-2.5-flash-strict" } as const;
const REMINDER = "<system-reminder>Todo list is empty.</system-reminder>";

/** What Claude Code sends (for a model name it does not take for Claude): cached system and
 * tools, deferred tools, thinking shown as omitted, context editing, a user id, and a system
 * message partway through the conversation. */
function claudeCode(model: string, stream = false): Record<string, unknown> {
  return {
    model, max_tokens: 32000, stream,
    system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
    messages: [
      { role: "user", content: [{ type: "text", text: "list the files" }] },
      { role: "assistant", content: [{ type: "text", text: "Which directory?" }] },
      { role: "system", content: REMINDER },
      { role: "user", content: [{ type: "text", text: "this one", cache_control: { type: "ephemeral" } }] },
    ],
    tools: [
      { name: "Bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } } } },
      { name: "WebFetch", description: "Fetch", input_schema: { type: "object" }, defer_loading: true, cache_control: { type: "ephemeral" } },
    ],
    thinking: { type: "enabled", budget_tokens: 4096, display: "omitted" },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    metadata: { user_id: "user_abc_account_1_session_2" },
  };
}

/** Fields the messages decoder drops from claudeCode(), whatever the target. */
const DECODER_DROPS = ["context_management", "tools[].defer_loading", "thinking.display"];

const messages = (w: World, body: unknown): Promise<RawResponse> => rawRequest(`${w.gw.url}/v1/messages`, {
  method: "POST", body: JSON.stringify(body),
  headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
});

const generate = (w: World, model: string, body: unknown): Promise<RawResponse> =>
  rawRequest(`${w.gw.url}/v1beta/models/${model}:generateContent`, {
    method: "POST", body: JSON.stringify(body), headers: { "x-goog-api-key": TOKEN, "content-type": "application/json" },
  });

const chat = (w: World, body: unknown): Promise<RawResponse> => rawRequest(`${w.gw.url}/v1/chat/completions`, {
  method: "POST", body: JSON.stringify(body), headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
});

/** The dropped-fields header as a sorted list ([] when absent). */
function droppedHeader(res: RawResponse): string[] {
  const v = res.headers["x-gateway-dropped-fields"];
  return typeof v === "string" ? v.split(/,\s*/).sort() : [];
}

const sorted = (names: readonly string[]): string[] => [...names].sort();
const requestId = (res: RawResponse): string => String(res.headers["x-gateway-request-id"]);

describe("converted requests: map, drop, refuse", () => {
  let w: World;

  before(async () => {
    w = await startWorld({
      extraChannels: (urls) => [
        channel("oa-strict", urls.openai, { protocol: "openai", models: [STRICT.openai] }),
        channel("gm-strict", urls.gemini, { protocol: "gemini", models: [STRICT.gemini] }),
      ],
      extraModels: {
        [STRICT.openai]: { endpoint: "chat", conversion: "strict", price: { input: 0.15, output: 0.6 } },
        [STRICT.gemini]: { conversion: "strict", price: { input: 0.3, output: 2.5 } },
      },
    });
  });
  after(async () => { await w?.close(); });
  beforeEach(() => w.reset());

  test("Claude Code → openai channel: 200, drops named in the header and the log, the system reminder in place", async () => {
    const res = await messages(w, claudeCode(M.openai));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.type, "message");
    const expected = sorted([...DECODER_DROPS, "cache_control"]);
    assert.deepEqual(droppedHeader(res), expected);
    const sent = w.sent("openai");
    assert.deepEqual(sent.messages.map((m: { role: string }) => m.role), ["system", "user", "assistant", "system", "user"]);
    assert.equal(sent.messages[3].content, REMINDER);
    assert.equal(sent.user, "user_abc_account_1_session_2", "metadata.user_id is mapped to user");
    assert.ok(!JSON.stringify(sent).includes("cache_control") && !JSON.stringify(sent).includes("defer_loading"));
    const entry = await w.entry(requestId(res));
    assert.deepEqual(sorted(entry.droppedFields ?? []), expected);
  });

  test("Claude Code → gemini channel, streamed: 200, drops named in the stream's head and the log, the reminder as a user-turn note", async () => {
    const res = await messages(w, claudeCode(M.gemini, true));
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers["content-type"]), /text\/event-stream/);
    assert.match(res.text, /event: message_stop/);
    const expected = sorted([...DECODER_DROPS, "cache_control", "metadata.user_id"]);
    assert.deepEqual(droppedHeader(res), expected);
    const sent = w.sent("gemini");
    assert.deepEqual(sent.systemInstruction, { parts: [{ text: "You are Claude Code." }] });
    assert.deepEqual(sent.contents.map((c: { role: string }) => c.role), ["user", "model", "user"]);
    assert.deepEqual(sent.contents[2].parts, [{ text: `<system>\n${REMINDER}\n</system>` }, { text: "this one" }]);
    const entry = await w.entry(requestId(res));
    assert.deepEqual(sorted(entry.droppedFields ?? []), expected);
  });

  test("the same request to a model set to conversion: strict is a 400 naming the fields, and nothing goes upstream", async () => {
    for (const [model, fields] of [[STRICT.openai, DECODER_DROPS], [STRICT.gemini, DECODER_DROPS]] as const) {
      const before = w.openai.received.length + w.gemini.received.length;
      const res = await messages(w, claudeCode(model));
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.type, "error");
      for (const f of fields) assert.ok(res.json.error.message.includes(`\`${f}\``), `${res.json.error.message} names ${f}`);
      assert.match(res.json.error.message, /conversion: strict/);
      assert.equal(w.openai.received.length + w.gemini.received.length, before);
    }
  });

  test("strict refuses what only the target drops, too (cache_control toward gemini)", async () => {
    const body = { model: STRICT.gemini, max_tokens: 100, messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }] };
    const res = await messages(w, body);
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.error.message, /`cache_control`/);
    const plain = await messages(w, { ...body, messages: [{ role: "user", content: "hi" }] });
    assert.equal(plain.status, 200, "strict serves a request that loses nothing");
    assert.deepEqual(droppedHeader(plain), []);
  });

  test("Gemini CLI's topK: dropped toward an openai channel; toward an anthropic channel mapped to top_k, but dropped (with a temperature other than 1) beside thinking", async () => {
    const body = {
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
      systemInstruction: { parts: [{ text: "You are Gemini CLI." }] },
      generationConfig: { temperature: 0, topP: 1, topK: 64, thinkingConfig: { includeThoughts: true } },
    };
    const toOpenAI = await generate(w, M.openai, body);
    assert.equal(toOpenAI.status, 200, toOpenAI.text);
    assert.deepEqual(droppedHeader(toOpenAI), ["generationConfig.topK"]);
    assert.equal(w.sent("openai").top_k, undefined);
    assert.deepEqual((await w.entry(requestId(toOpenAI))).droppedFields, ["generationConfig.topK"]);

    // The messages API refuses top_k, and a temperature other than 1, beside thinking.
    const thinking = await generate(w, M.anthropic, body);
    assert.equal(thinking.status, 200, thinking.text);
    assert.deepEqual(droppedHeader(thinking), ["generationConfig.temperature", "generationConfig.topK"]);
    const sent = w.sent("anthropic");
    assert.deepEqual([sent.top_k, sent.temperature, sent.top_p, (sent.thinking as { type?: string } | undefined)?.type], [undefined, undefined, 1, "enabled"]);

    const { thinkingConfig: _, ...noThinking } = body.generationConfig;
    const toAnthropic = await generate(w, M.anthropic, { ...body, generationConfig: noThinking });
    assert.equal(toAnthropic.status, 200, toAnthropic.text);
    assert.deepEqual(droppedHeader(toAnthropic), []);
    assert.equal(w.sent("anthropic").top_k, 64);
    assert.equal((await w.entry(requestId(toAnthropic))).droppedFields, undefined);
  });

  test("n: 2 toward an anthropic channel is a 400 naming n, even when lenient", async () => {
    const before = w.anthropic.received.length;
    const res = await chat(w, { model: M.anthropic, n: 2, messages: [{ role: "user", content: "hi" }] });
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.error.message, /^`n` \(above 1\)/);
    assert.equal(w.anthropic.received.length, before);
  });

  test("a chat client's developer message partway through reaches an anthropic channel as a note in place", async () => {
    const res = await chat(w, { model: M.anthropic, messages: [
      { role: "system", content: "Be brief." }, { role: "user", content: "hi" }, { role: "assistant", content: "hello" },
      { role: "developer", content: "Now answer in French." }, { role: "user", content: "how are you?" },
    ] });
    assert.equal(res.status, 200, res.text);
    const sent = w.sent("anthropic");
    assert.deepEqual(sent.system, [{ type: "text", text: "Be brief." }]);
    assert.deepEqual(sent.messages.at(-1), { role: "user", content: [
      { type: "text", text: "<system>\nNow answer in French.\n</system>" }, { type: "text", text: "how are you?" }] });
    assert.deepEqual(droppedHeader(res), []);
  });

  test("pass-through drops nothing and reports nothing", async () => {
    const res = await messages(w, claudeCode(M.anthropic));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers["x-gateway-dropped-fields"], undefined);
    assert.ok(w.sent("anthropic").context_management, "the anthropic channel gets the field as sent");
    assert.equal((await w.entry(requestId(res))).droppedFields, undefined);
  });
});
