// Lenient by default (issue 19): on every converting pair, a field the conversion table does
// not know, at the top level or inside a message or content part, is dropped and named
// (x-gateway-dropped-fields, the usage log) instead of refused; a model set to
// `conversion: strict` still refuses it. And one rule for hosted tools on every pair: web
// search becomes the target's own web search tool (the fakes refuse tool types they do not
// know, as the real APIs do), any other hosted tool is dropped and named when offered, and
// a tool_choice forcing one is a 400 naming it.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeResponses, type FakeResponses } from "../helpers/fake-responses.js";
import { startWorld, type ChannelName, type World } from "../helpers/protocol-world.js";
import { CHANNEL_KEY, channel, rawRequest, TOKEN, type RawResponse } from "./support.js";

type Client = "chat-completions" | "messages" | "generate-content" | "responses";

/** Models open to every client protocol, per channel: lenient, and set to conversion: strict. */
const LENIENT: Record<ChannelName, string> = { openai: "lenient-oa", anthropic: "lenient-an", gemini: "lenient-gm" };
const STRICT: Record<ChannelName, string> = { openai: "strict-oa", anthropic: "strict-an", gemini: "strict-gm" };
/** A model served only by a responses upstream. */
const RESPONSES_MODEL = "lenient-rs";
const PROTOCOL: Record<ChannelName, string> = { openai: "openai", anthropic: "anthropic", gemini: "gemini" };
/** The protocol each channel speaks: requests from that client protocol pass through. */
const NATIVE: Record<ChannelName, Client> = { openai: "chat-completions", anthropic: "messages", gemini: "generate-content" };
const price = { input: 1, output: 2 };

/** The top-level unknown field every client sends, and the nested one's name by protocol. */
const TOP_FIELD = "x_future_knob";
const NESTED: Record<Client, string> = {
  "chat-completions": "messages[].x_hint",
  messages: "messages[].content[].x_hint",
  "generate-content": "contents[].parts[].x_hint",
  responses: "input[].content[].x_hint",
};

/** A plain one-turn request of `client`'s protocol, with an unknown top-level field and an
 * unknown key inside a message (chat) or a content part (the others). */
function withUnknownFields(client: Client, model: string): Record<string, unknown> {
  switch (client) {
    case "chat-completions":
      return { model, [TOP_FIELD]: { level: 2 }, messages: [{ role: "user", content: "hi", x_hint: "a" }] };
    case "messages":
      return { model, max_tokens: 64, [TOP_FIELD]: 1, messages: [{ role: "user", content: [{ type: "text", text: "hi", x_hint: "a" }] }] };
    case "generate-content":
      return { [TOP_FIELD]: true, contents: [{ role: "user", parts: [{ text: "hi", x_hint: "a" }] }] };
    case "responses":
      return { model, [TOP_FIELD]: "on", input: [{ role: "user", content: [{ type: "input_text", text: "hi", x_hint: "a" }] }] };
  }
}

function send(w: World, client: Client, model: string, body: unknown): Promise<RawResponse> {
  const json = { "content-type": "application/json" };
  switch (client) {
    case "chat-completions":
      return rawRequest(`${w.gw.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify(body), headers: { ...json, authorization: `Bearer ${TOKEN}` } });
    case "responses":
      return rawRequest(`${w.gw.url}/v1/responses`, { method: "POST", body: JSON.stringify(body), headers: { ...json, authorization: `Bearer ${TOKEN}` } });
    case "messages":
      return rawRequest(`${w.gw.url}/v1/messages`, {
        method: "POST", body: JSON.stringify(body), headers: { ...json, "x-api-key": TOKEN, "anthropic-version": "2023-06-01" },
      });
    case "generate-content":
      return rawRequest(`${w.gw.url}/v1beta/models/${model}:generateContent`, {
        method: "POST", body: JSON.stringify(body), headers: { ...json, "x-goog-api-key": TOKEN },
      });
  }
}

/** The dropped-fields header as a list ([] when absent). */
function droppedHeader(res: RawResponse): string[] {
  const v = res.headers["x-gateway-dropped-fields"];
  return typeof v === "string" ? v.split(/,\s*/) : [];
}

const requestId = (res: RawResponse): string => String(res.headers["x-gateway-request-id"]);
const CLIENTS: readonly Client[] = ["chat-completions", "messages", "generate-content", "responses"];
const TARGETS: readonly ChannelName[] = ["openai", "anthropic", "gemini"];

/** The function tool a responses client offers beside hosted tools. */
const weatherTool = {
  type: "function", name: "get_weather", description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, strict: false,
};

describe("converted requests: unknown fields dropped and named, hosted tools by one rule", () => {
  let w: World;
  let responses: FakeResponses;

  before(async () => {
    responses = await startFakeResponses({ keys: [CHANNEL_KEY] });
    const models: Record<string, unknown> = { [RESPONSES_MODEL]: { endpoint: "responses", price } };
    for (const t of TARGETS) {
      models[LENIENT[t]] = { endpoint: ["chat", "responses"], price };
      models[STRICT[t]] = { endpoint: ["chat", "responses"], conversion: "strict", price };
    }
    w = await startWorld({
      extraModels: models,
      extraChannels: (u) => [
        ...TARGETS.map((t) => channel(`${t}-lenient`, u[t], { protocol: PROTOCOL[t], models: [LENIENT[t], STRICT[t]] })),
        channel("responses-upstream", `${responses.url}/v1`, { protocol: "openai", models: [RESPONSES_MODEL] }),
      ],
    });
  });
  after(async () => {
    await w?.close();
    await responses?.close();
  });
  beforeEach(() => w.reset());

  for (const client of CLIENTS) {
    for (const target of TARGETS.filter((t) => NATIVE[t] !== client)) {
      test(`${client} → ${target}: an unknown top-level and nested field are dropped and named (header and usage log)`, async () => {
        const res = await send(w, client, LENIENT[target], withUnknownFields(client, LENIENT[target]));
        assert.equal(res.status, 200, res.text);
        const expected = [TOP_FIELD, NESTED[client]].sort();
        assert.deepEqual(droppedHeader(res).sort(), expected);
        assert.deepEqual([...((await w.entry(requestId(res))).droppedFields ?? [])].sort(), expected);
        const sent = JSON.stringify(w.sent(target));
        assert.ok(!sent.includes(TOP_FIELD) && !sent.includes("x_hint"), `nothing unknown reaches the ${target} channel: ${sent}`);
      });

      test(`${client} → ${target} under conversion: strict: a 400 naming the unknown fields, nothing upstream`, async () => {
        const before = w.openai.received.length + w.anthropic.received.length + w.gemini.received.length;
        const res = await send(w, client, STRICT[target], withUnknownFields(client, STRICT[target]));
        assert.equal(res.status, 400, res.text);
        assert.match(res.text, new RegExp(`\`${TOP_FIELD}\``));
        assert.ok(res.text.includes(`\`${NESTED[client]}\``), `${res.text} names ${NESTED[client]}`);
        assert.match(res.text, /conversion: strict/);
        assert.equal(w.openai.received.length + w.anthropic.received.length + w.gemini.received.length, before);
      });
    }
  }

  test("the dropped-fields header stays bounded and header-safe whatever keys a client invents", async () => {
    const body: Record<string, unknown> = { model: LENIENT.anthropic, messages: [{ role: "user", content: "hi" }] };
    for (let i = 0; i < 200; i++) body[`x_knob_${i}`] = i;
    body["weird, key\u00e9\u4e2d\n"] = 1;
    const res = await send(w, "chat-completions", LENIENT.anthropic, body);
    assert.equal(res.status, 200, res.text);
    const names = droppedHeader(res);
    assert.equal(names.length, 32);
    assert.equal(names.at(-1), "(more)");
    const entry = await w.entry(requestId(res));
    assert.deepEqual(entry.droppedFields, names);
  });

  test("a top-level key spelled like one of the table's descriptive rows cannot break the header", async () => {
    const row = "tools[] (other hosted types: file_search, image_generation, code_interpreter, computer_use_preview, mcp, local_shell…)";
    const res = await send(w, "responses", LENIENT.anthropic, { model: LENIENT.anthropic, input: "hi", [row]: 1 });
    assert.equal(res.status, 200, res.text);
    assert.ok(droppedHeader(res).length > 0);
  });

  test("a field the table refuses is still a 400 naming it and why, lenient or not", async () => {
    const res = await send(w, "chat-completions", LENIENT.gemini, { model: LENIENT.gemini, logprobs: true, messages: [{ role: "user", content: "hi" }] });
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.error.message, /^`logprobs` \(true\) cannot be converted .*log probabilities come back only from OpenAI/);
  });

  describe("hosted tools", () => {
    /** What Codex-like clients send: function tools beside hosted tools they never require. */
    const codexTools = [weatherTool, { type: "image_generation", quality: "low" }, { type: "web_search", search_context_size: "low" }];

    test("responses client → messages channel: web search becomes Anthropic's own, image_generation is dropped and named", async () => {
      const res = await send(w, "responses", LENIENT.anthropic, { model: LENIENT.anthropic, input: "weather in Paris?", tools: codexTools });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(droppedHeader(res), ["tools[] (type image_generation)"]);
      assert.deepEqual((await w.entry(requestId(res))).droppedFields, ["tools[] (type image_generation)"]);
      const tools = w.sent("anthropic").tools as { name: string; type?: string }[];
      assert.deepEqual(tools.map((t) => [t.type, t.name]), [[undefined, "get_weather"], ["web_search_20250305", "web_search"]]);
    });

    test("responses client → generate-content channel: web search becomes googleSearch beside the functions", async () => {
      const res = await send(w, "responses", LENIENT.gemini, { model: LENIENT.gemini, input: "weather in Paris?", tools: codexTools });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(droppedHeader(res), ["tools[] (type image_generation)"]);
      const sent = w.sent("gemini");
      assert.deepEqual(sent.tools.map((t: Record<string, unknown>) => Object.keys(t)[0]), ["functionDeclarations", "googleSearch"]);
      assert.equal(sent.toolConfig.includeServerSideToolInvocations, true, "Gemini wants it to combine built-in tools with functions");
    });

    test("responses client → chat-completions channel: web search is dropped and named too (only search models have it there)", async () => {
      const res = await send(w, "responses", LENIENT.openai, { model: LENIENT.openai, input: "weather in Paris?", tools: codexTools });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(droppedHeader(res).sort(), ["tools[] (type image_generation)", "tools[] (type web_search)"]);
      const sent = w.sent("openai");
      assert.deepEqual(sent.tools.map((t: { function: { name: string } }) => t.function.name), ["get_weather"]);
      assert.equal(sent.web_search_options, undefined);
    });

    test("a tool_choice forcing a hosted tool is a 400 naming it; nothing goes upstream", async () => {
      for (const forced of ["image_generation", "web_search"]) {
        const before = w.anthropic.received.length;
        const res = await send(w, "responses", LENIENT.anthropic, {
          model: LENIENT.anthropic, input: "draw a cat", tools: codexTools, tool_choice: { type: forced },
        });
        assert.equal(res.status, 400, res.text);
        assert.match(res.json.error.message, new RegExp(`^\`tool_choice\` .*${forced}`));
        assert.equal(w.anthropic.received.length, before);
      }
    });

    /** Claude Code with the web search server tool and another server tool. */
    const claudeTools = [
      { name: "Bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } } } },
      { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      { type: "web_fetch_20250910", name: "web_fetch", max_uses: 5 },
    ];

    test("messages client's web_search server tool → chat-completions channel: dropped and named; web_fetch dropped", async () => {
      const res = await send(w, "messages", LENIENT.openai, {
        model: LENIENT.openai, max_tokens: 64, messages: [{ role: "user", content: "news?" }], tools: claudeTools,
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(droppedHeader(res).sort(), ["tools[] (type web_fetch_20250910)", "tools[] (type web_search_*)"]);
      assert.deepEqual(w.sent("openai").tools.map((t: { function: { name: string } }) => t.function.name), ["Bash"]);
    });

    test("a Claude history with an earlier search's server-tool blocks → chat-completions channel: the blocks dropped and named, the text kept", async () => {
      const res = await send(w, "messages", LENIENT.openai, {
        model: LENIENT.openai, max_tokens: 64, tools: claudeTools, messages: [
          { role: "user", content: "news?" },
          { role: "assistant", content: [
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "news" } },
            { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.com", title: "Example", encrypted_content: "EqgfCioI" }] },
            { type: "text", text: "Here is the news." },
          ] },
          { role: "user", content: "more" },
        ],
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(droppedHeader(res).sort(), [
        "messages[].content[] (type server_tool_use)", "messages[].content[] (type web_search_tool_result)",
        "tools[] (type web_fetch_20250910)", "tools[] (type web_search_*)",
      ]);
      assert.deepEqual(w.sent("openai").messages[1], { role: "assistant", content: "Here is the news." });
    });

    test("messages client's web_search server tool → responses channel: OpenAI's own web_search", async () => {
      const res = await send(w, "messages", RESPONSES_MODEL, {
        model: RESPONSES_MODEL, max_tokens: 64, messages: [{ role: "user", content: "news?" }], tools: claudeTools,
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(droppedHeader(res), ["tools[] (type web_fetch_20250910)"]);
      const sent = responses.received.at(-1)!.body as { tools: { type: string; name?: string }[] };
      assert.deepEqual(sent.tools.map((t) => t.type), ["function", "web_search"]);
    });

    test("messages client's web_search → generate-content channel: googleSearch; forcing a server tool is a 400", async () => {
      const body = { model: LENIENT.gemini, max_tokens: 64, messages: [{ role: "user", content: "news?" }], tools: claudeTools };
      const res = await send(w, "messages", LENIENT.gemini, body);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(w.sent("gemini").tools.map((t: Record<string, unknown>) => Object.keys(t)[0]), ["functionDeclarations", "googleSearch"]);
      const forced = await send(w, "messages", LENIENT.gemini, { ...body, tool_choice: { type: "tool", name: "web_fetch" } });
      assert.equal(forced.status, 400, forced.text);
      assert.match(forced.json.error.message, /`tool_choice.name`.*web_fetch/);
    });

    test("a Gemini client's googleSearch → messages channel: web search; codeExecution dropped and named", async () => {
      const res = await send(w, "generate-content", LENIENT.anthropic, {
        contents: [{ role: "user", parts: [{ text: "news?" }] }], tools: [{ googleSearch: {} }, { codeExecution: {} }],
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(droppedHeader(res), ["tools[].codeExecution"]);
      assert.deepEqual(w.sent("anthropic").tools, [{ type: "web_search_20250305", name: "web_search" }]);
    });

    test("a chat client's web_search_options → messages channel: Anthropic's web search", async () => {
      const res = await send(w, "chat-completions", LENIENT.anthropic, {
        model: LENIENT.anthropic, web_search_options: {}, messages: [{ role: "user", content: "news?" }],
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(droppedHeader(res), []);
      assert.deepEqual(w.sent("anthropic").tools, [{ type: "web_search_20250305", name: "web_search" }]);
    });

    test("under conversion: strict, a mapped web search passes and a dropped hosted tool is refused", async () => {
      const mapped = await send(w, "responses", STRICT.anthropic, { model: STRICT.anthropic, input: "news?", tools: [weatherTool, { type: "web_search" }] });
      assert.equal(mapped.status, 200, mapped.text);
      const dropped = await send(w, "responses", STRICT.anthropic, { model: STRICT.anthropic, input: "news?", tools: codexTools });
      assert.equal(dropped.status, 400, dropped.text);
      assert.match(dropped.json.error.message, /`tools\[\] \(type image_generation\)`.*conversion: strict/);
    });
  });
});
