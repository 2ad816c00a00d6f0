// Hosted tool fees (issue 18, item 10): the web searches a provider runs for an answer are
// billed per call at the price list's `tool_calls`, from what the provider reports: OpenAI
// `web_search_call` output items, Anthropic `usage.server_tool_use`, Gemini grounding
// queries; on pass-through and converted routes, whole answers and streams alike. Each
// upstream below answers in its provider's real wire shape.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type http from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startFakeServer, sendJson, type FakeServer } from "../helpers/fake-server.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, config, rawRequest, token, type Obj } from "../integration/support.js";

const USAGE_IN = 100;
const USAGE_OUT = 50;

/**
 * The price list, per 1M tokens and per 1k tool calls, and the cost each answer below must
 * come to, by hand (group multiplier 0.7):
 * - gpt-search, 2 web searches: (100 × 1 + 50 × 2) / 1e6 + 2 × 10 / 1000 = 0.0002 + 0.02
 *   = 0.0202 × 0.7 = 0.01414.
 * - claude-search, 3 web searches and 1 web fetch (unpriced: recorded, free):
 *   (100 × 3 + 50 × 15) / 1e6 + 3 × 10 / 1000 = 0.00105 + 0.03 = 0.03105 × 0.7 = 0.021735.
 * - gemini-grounded, 2 distinct search queries: (100 × 0.3 + 50 × 2.5) / 1e6 + 2 × 14 / 1000
 *   = 0.000155 + 0.028 = 0.028155 × 0.7 = 0.0197085.
 */
const models: Obj = {
  "gpt-search": { endpoint: "responses", price: { input: 1, output: 2, tool_calls: { web_search: 10 } } },
  "claude-search": { endpoint: ["chat", "responses"], price: { input: 3, output: 15, tool_calls: { web_search: 10 } } },
  "gemini-grounded": { price: { input: 0.3, output: 2.5, tool_calls: { web_search: 14 } } },
  // The same answers on a model whose price names no tools: the calls are recorded, not billed.
  "claude-plain": { price: { input: 3, output: 15 } },
};
const COST = { openai: 14_140_000n, anthropic: 21_735_000n, gemini: 19_708_500n, anthropicTokensOnly: 735_000n };

/** An OpenAI Responses answer that ran two web searches before its message. */
function responseObject(model: string): Obj {
  return {
    id: "resp_1", object: "response", created_at: 1_700_000_000, status: "completed", model,
    output: [
      { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "gateway" } },
      { type: "web_search_call", id: "ws_2", status: "completed", action: { type: "search", query: "billing" } },
      { type: "message", id: "msg_1", status: "completed", role: "assistant",
        content: [{ type: "output_text", text: "Found it.", annotations: [] }] },
    ],
    usage: { input_tokens: USAGE_IN, input_tokens_details: { cached_tokens: 0 }, output_tokens: USAGE_OUT,
      output_tokens_details: { reasoning_tokens: 0 }, total_tokens: USAGE_IN + USAGE_OUT },
  };
}

function sse(res: http.ServerResponse, events: readonly (readonly [string | undefined, Obj])[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(events.map(([name, data]) => `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(data)}\n\n`).join(""));
}

function answerResponses(body: Obj, res: http.ServerResponse): void {
  const whole = responseObject(String(body.model));
  if (body.stream !== true) return sendJson(res, 200, whole);
  const created = { ...whole, status: "in_progress", output: [], usage: null };
  sse(res, [
    ["response.created", { type: "response.created", sequence_number: 0, response: created }],
    ["response.output_text.delta", { type: "response.output_text.delta", sequence_number: 1, item_id: "msg_1", output_index: 2, content_index: 0, delta: "Found it." }],
    ["response.completed", { type: "response.completed", sequence_number: 2, response: whole }],
  ]);
}

/** Anthropic's usage of an answer that ran server tools (web_fetch_requests: priced nowhere here). */
const serverToolUsage = { web_search_requests: 3, web_fetch_requests: 1 };

function answerMessages(body: Obj, res: http.ServerResponse): void {
  const usage = { input_tokens: USAGE_IN, output_tokens: USAGE_OUT, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, server_tool_use: serverToolUsage };
  const message = { id: "msg_1", type: "message", role: "assistant", model: body.model, content: [{ type: "text", text: "Found it." }],
    stop_reason: "end_turn", stop_sequence: null, usage };
  if (body.stream !== true) return sendJson(res, 200, message);
  sse(res, [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1, server_tool_use: undefined } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Found it." } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: USAGE_OUT, server_tool_use: serverToolUsage } }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

const usageMetadata = { promptTokenCount: USAGE_IN, candidatesTokenCount: USAGE_OUT, totalTokenCount: USAGE_IN + USAGE_OUT };
/** Grounding with Google Search: the query "gateway billing" ran twice, "tool fees" once. */
const grounding = {
  webSearchQueries: ["gateway billing", "tool fees", "gateway billing"],
  searchEntryPoint: { renderedContent: "<div></div>" },
  groundingChunks: [{ web: { uri: "https://example.com", title: "example.com" } }],
};

function answerGenerate(path: string, res: http.ServerResponse): void {
  const candidate = (text: string, last: boolean) => ({
    content: { role: "model", parts: [{ text }] }, index: 0,
    ...(last && { finishReason: "STOP", groundingMetadata: grounding }),
  });
  if (!path.includes(":streamGenerateContent")) {
    return sendJson(res, 200, { candidates: [candidate("Found it.", true)], usageMetadata, modelVersion: "gemini-grounded" });
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end([
    { candidates: [candidate("Found", false)], usageMetadata: { promptTokenCount: USAGE_IN, totalTokenCount: USAGE_IN }, modelVersion: "gemini-grounded" },
    { candidates: [candidate(" it.", true)], usageMetadata, modelVersion: "gemini-grounded" },
  ].map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(""));
}

describe("hosted tool fees are billed per call from the provider's report", () => {
  let upstream: FakeServer<{ method: string; path: string; headers: http.IncomingHttpHeaders; body: Obj; raw: Buffer }>;
  let gw: TestGateway;

  before(async () => {
    upstream = await startFakeServer((r, res) => {
      if (r.path.startsWith("/v1/responses")) answerResponses(r.body, res);
      else if (r.path.startsWith("/v1/messages")) answerMessages(r.body, res);
      else if (r.path.startsWith("/v1beta/models/")) answerGenerate(r.path, res);
      else sendJson(res, 404, { error: { message: "not found" } });
    });
    const channel = (name: string, protocol: string, served: string[]) =>
      ({ name, protocol, base_url: upstream.url, keys: ["sk-upstream"], groups: ["default"], models: served });
    gw = await startTestGateway(config({
      tokens: [token("alice-main", TOKEN)],
      channels: [
        channel("openai", "openai", ["gpt-search"]),
        channel("anthropic", "anthropic", ["claude-search", "claude-plain"]),
        channel("gemini", "gemini", ["gemini-grounded"]),
      ],
      models,
    }));
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    destroyAgents();
  });

  const costOf = async (requestId: string | string[] | undefined) => (await entryOf(gw.store, String(requestId))).costNano;

  test("responses pass-through: web_search_call items, whole and streamed (OpenAI SDK)", async () => {
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.responses.create({ model: "gpt-search", input: "search", tools: [{ type: "web_search" }] }).withResponse();
    assert.equal(data.output_text, "Found it.");
    assert.equal(response.headers.get("x-gateway-cost"), "0.01414");
    const entry = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(entry.costNano, COST.openai);
    assert.deepEqual(entry.usage.toolCalls, { web_search: 2 });

    const stream = await client.responses.create({ model: "gpt-search", input: "search", stream: true }).withResponse();
    for await (const _ of stream.data) { /* drain */ }
    assert.equal(await costOf(stream.response.headers.get("x-gateway-request-id")!), COST.openai);
  });

  test("messages pass-through: usage.server_tool_use, whole and streamed (Anthropic SDK)", async () => {
    const client = new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });
    const { data, response } = await client.messages.create({ model: "claude-search", max_tokens: 100, messages: [{ role: "user", content: "search" }] }).withResponse();
    assert.equal(data.usage.server_tool_use?.web_search_requests, 3);
    assert.equal(response.headers.get("x-gateway-cost"), "0.021735");
    const entry = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.deepEqual(entry.usage.toolCalls, { web_search: 3, web_fetch: 1 });

    const stream = await client.messages.create({ model: "claude-search", max_tokens: 100, stream: true, messages: [{ role: "user", content: "search" }] }).withResponse();
    for await (const _ of stream.data) { /* drain */ }
    assert.equal(await costOf(stream.response.headers.get("x-gateway-request-id")!), COST.anthropic);
  });

  test("a model whose price names no tools records the calls and bills the tokens alone", async () => {
    const res = await rawRequest(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-plain", max_tokens: 100, messages: [{ role: "user", content: "search" }] }),
    });
    assert.equal(res.status, 200);
    const entry = await entryOf(gw.store, String(res.headers["x-gateway-request-id"]));
    assert.equal(entry.costNano, COST.anthropicTokensOnly);
    assert.deepEqual(entry.usage.toolCalls, { web_search: 3, web_fetch: 1 });
  });

  test("generate-content pass-through: distinct grounding queries, whole and streamed", async () => {
    const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "search" }] }], tools: [{ googleSearch: {} }] });
    const headers = { "x-goog-api-key": TOKEN, "content-type": "application/json" };
    const whole = await rawRequest(`${gw.url}/v1beta/models/gemini-grounded:generateContent`, { method: "POST", headers, body });
    assert.equal(whole.status, 200);
    assert.equal(whole.headers["x-gateway-cost"], "0.0197085");
    assert.deepEqual((await entryOf(gw.store, String(whole.headers["x-gateway-request-id"]))).usage.toolCalls, { web_search: 2 });
    const streamed = await rawRequest(`${gw.url}/v1beta/models/gemini-grounded:streamGenerateContent?alt=sse`, { method: "POST", headers, body });
    assert.equal(streamed.status, 200);
    assert.match(streamed.text, /groundingMetadata/);
    assert.equal(await costOf(streamed.headers["x-gateway-request-id"]), COST.gemini);
  });

  test("converted routes: chat and responses clients on Anthropic and Gemini channels pay their searches", async () => {
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const chat = await client.chat.completions.create({ model: "claude-search", messages: [{ role: "user", content: "search" }] }).withResponse();
    assert.equal(chat.data.choices[0].message.content, "Found it.");
    assert.equal(await costOf(chat.response.headers.get("x-gateway-request-id")!), COST.anthropic);

    const streamed = await client.chat.completions.create({ model: "claude-search", stream: true, messages: [{ role: "user", content: "search" }] }).withResponse();
    for await (const _ of streamed.data) { /* drain */ }
    assert.equal(await costOf(streamed.response.headers.get("x-gateway-request-id")!), COST.anthropic);

    for (const stream of [false, true]) {
      const gemini = await client.chat.completions.create({ model: "gemini-grounded", stream, messages: [{ role: "user", content: "search" }] }).withResponse();
      if (stream) for await (const _ of gemini.data as AsyncIterable<unknown>) { /* drain */ }
      assert.equal(await costOf(gemini.response.headers.get("x-gateway-request-id")!), COST.gemini, `gemini, stream: ${stream}`);
    }

    const responses = await client.responses.create({ model: "claude-search", input: "search", stream: true }).withResponse();
    for await (const _ of responses.data) { /* drain */ }
    assert.equal(await costOf(responses.response.headers.get("x-gateway-request-id")!), COST.anthropic);
  });

  test("a responses client's offered web_search runs as the Anthropic channel's own, and its searches are billed (issue 19)", async () => {
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.responses.create({
      model: "claude-search", input: "search", tools: [{ type: "web_search" }, { type: "image_generation" }],
    }).withResponse();
    assert.equal(data.output_text, "Found it.");
    const sent = upstream.received.at(-1)!.body as { tools?: Obj[] };
    assert.deepEqual(sent.tools, [{ type: "web_search_20250305", name: "web_search" }]);
    assert.equal(response.headers.get("x-gateway-dropped-fields"), "tools[] (type image_generation)");
    assert.equal(await costOf(response.headers.get("x-gateway-request-id")!), COST.anthropic);
  });
});
