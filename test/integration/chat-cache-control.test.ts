// Anthropic-style `cache_control` on chat-completions messages and content parts (the
// convention OpenRouter accepts, sent by OpenAI-compatible clients for Claude models): toward
// a messages channel each becomes a cache breakpoint on the block the client marked (a
// message's own on its last block), ttl kept, at most the last four; toward channels that
// cache by prefix it is dropped and named (OpenAI's responses API, Gemini; an OpenAI chat
// channel is a pass-through, which relays the body as sent). The fake Anthropic refuses more than four and
// reports cache writes and reads for a request with breakpoints; the client sees them in its
// usage and pays them at the model's cache ratios.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { anthropicFakeCacheUsage } from "../helpers/fake-anthropic.js";
import { startFakeResponses, type FakeResponses } from "../helpers/fake-responses.js";
import { CANONICAL, M, openaiClient, startWorld, type World } from "../helpers/protocol-world.js";
import { CHANNEL_KEY, channel, rawRequest, TOKEN } from "./support.js";

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
const EPHEMERAL = { type: "ephemeral" } as const;

/** A conversation marked the ways clients mark it: a cached system part, a whole user message
 * cached for an hour, a tool call turn cached as a message, and the last user part cached. */
const marked = (model: string): Params => ({
  model,
  messages: [
    { role: "system", content: [{ type: "text", text: "You are terse.", cache_control: EPHEMERAL }] },
    { role: "user", content: "Summarise the repository.", cache_control: { type: "ephemeral", ttl: "1h" } },
    {
      role: "assistant", content: "Reading it.", cache_control: EPHEMERAL,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: "{\"path\":\"README.md\"}" } }],
    },
    { role: "tool", tool_call_id: "call_1", content: "# The gateway" },
    { role: "user", content: [{ type: "text", text: "And the tests?" }, { type: "text", text: "Briefly.", cache_control: EPHEMERAL }] },
  ],
  tools: [{ type: "function", function: { name: "read", parameters: { type: "object", properties: { path: { type: "string" } } } } }],
} as unknown as Params);

/** Every cache_control in a messages body, in prompt order, with where it sits. */
function breakpoints(body: Record<string, any>): string[] {
  const out: string[] = [];
  (body.system ?? []).forEach((b: any, i: number) => b.cache_control && out.push(`system[${i}]:${JSON.stringify(b.cache_control)}`));
  body.messages.forEach((m: any, i: number) => m.content.forEach((b: any, j: number) => {
    if (b.cache_control) out.push(`messages[${i}].content[${j}](${b.type}):${JSON.stringify(b.cache_control)}`);
  }));
  return out;
}

// 12×3 + 30×3×0.1 + 7×3×1.25 + 5×15 = 146.25 per 1M tokens, × the group's 0.7 = 102.375 µ.
const CACHED_COST_NANO = 102375n;

describe("chat-completions cache_control", () => {
  let w: World;
  let client: OpenAI;
  let responses: FakeResponses;

  before(async () => {
    responses = await startFakeResponses({ keys: [CHANNEL_KEY] });
    w = await startWorld({ extraChannels: () => [channel("resp", responses.url, { protocol: "openai", models: [M.responses] })] });
    client = openaiClient(w);
  });
  after(async () => { await w?.close(); await responses?.close(); });
  beforeEach(() => w.reset());

  test("→ anthropic: breakpoints where the client put them, ttl kept; cache usage shown and billed at the cache ratios", async () => {
    const mark = w.mark();
    const { data, response } = await client.chat.completions.create(marked(M.anthropic)).withResponse();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-gateway-dropped-fields"), null, "nothing dropped");
    const sent = w.sent("anthropic");
    assert.deepEqual(breakpoints(sent), [
      `system[0]:${JSON.stringify(EPHEMERAL)}`,
      `messages[0].content[0](text):${JSON.stringify({ type: "ephemeral", ttl: "1h" })}`,
      `messages[1].content[1](tool_use):${JSON.stringify(EPHEMERAL)}`,
      `messages[2].content[2](text):${JSON.stringify(EPHEMERAL)}`,
    ]);
    assert.equal(sent.messages[2].content[0].type, "tool_result");
    assert.equal(sent.messages[2].content[1].cache_control, undefined, "an unmarked part stays unmarked");
    const u = anthropicFakeCacheUsage;
    assert.equal(data.usage?.prompt_tokens, u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens);
    assert.equal(data.usage?.prompt_tokens_details?.cached_tokens, u.cache_read_input_tokens);
    assert.equal((data.usage?.prompt_tokens_details as Record<string, unknown>).cache_write_tokens, u.cache_creation_input_tokens);
    assert.equal(data.usage?.completion_tokens, u.output_tokens);
    const rec = await w.record(mark);
    assert.deepEqual(rec.usage, CANONICAL.anthropicCache);
    assert.equal((await w.entry(rec.id)).costNano, CACHED_COST_NANO);
    assert.equal(response.headers.get("x-gateway-cost"), "0.000102375");
  });

  test("→ anthropic, streamed: the usage chunk carries cache reads and writes, and the cost", async () => {
    const mark = w.mark();
    const stream = await client.chat.completions.create({ ...marked(M.anthropic), stream: true, stream_options: { include_usage: true } });
    let usage: Record<string, any> | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage as Record<string, any>;
    assert.equal(usage?.prompt_tokens_details.cached_tokens, 30);
    assert.equal(usage?.prompt_tokens_details.cache_write_tokens, 7);
    assert.equal(breakpoints(w.sent("anthropic")).length, 4);
    const rec = await w.record(mark);
    assert.equal((await w.entry(rec.id)).costNano, CACHED_COST_NANO);
    assert.equal(usage?.gateway_cost, "0.000102375");
  });

  test("→ anthropic, more than four: the fake refuses five, the gateway sends the last four and names the drop", async () => {
    const five = { model: M.anthropic, max_tokens: 10, messages: ["a", "b", "c", "d", "e"].map((text, i) => ({
      role: i % 2 === 0 ? "user" : "assistant", content: [{ type: "text", text, cache_control: EPHEMERAL }],
    })) };
    const refused = await rawRequest(`${w.gw.url}/v1/messages`, {
      method: "POST", body: JSON.stringify(five),
      headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    });
    assert.equal(refused.status, 400, "passed through as sent, the fake holds Anthropic's limit");
    assert.match(JSON.stringify(refused.json), /A maximum of 4 blocks with cache_control may be provided. Found 5/);

    const body = {
      model: M.anthropic,
      messages: [
        { role: "system", content: "Rules.", cache_control: EPHEMERAL },
        ...["a", "b", "c", "d", "e"].map((text, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: [{ type: "text", text, cache_control: EPHEMERAL }] })),
      ],
    };
    const { data, response } = await client.chat.completions.create(body as unknown as Params).withResponse();
    assert.equal(response.status, 200);
    assert.deepEqual(response.headers.get("x-gateway-dropped-fields")?.split(/,\s*/).sort(),
      ["messages[].cache_control", "messages[].content[].cache_control"]);
    const sent = w.sent("anthropic");
    assert.equal(sent.system[0].cache_control, undefined, "the earliest is left out");
    assert.equal(sent.messages[0].content[0].cache_control, undefined);
    assert.deepEqual(breakpoints(sent).map((b) => b.split(":")[0]),
      ["messages[1].content[0](text)", "messages[2].content[0](text)", "messages[3].content[0](text)", "messages[4].content[0](text)"]);
    assert.equal(data.usage?.prompt_tokens_details?.cached_tokens, 30);
  });

  for (const target of ["responses", "gemini"] as const) {
    test(`→ ${target}: cache hints are dropped and named; the answer is served`, async () => {
      const model = target === "responses" ? M.responses : M.gemini;
      const { response } = await client.chat.completions.create(marked(model)).withResponse();
      assert.equal(response.status, 200);
      const sent = JSON.stringify(target === "responses" ? responses.received.at(-1)?.body : w.sent(target));
      assert.ok(!/cache/i.test(sent), `no cache hint reaches ${target}: ${sent}`);
      assert.deepEqual(response.headers.get("x-gateway-dropped-fields")?.split(/,\s*/).sort(),
        ["messages[].cache_control", "messages[].content[].cache_control"]);
    });
  }

  test("an invalid cache_control is a 400 naming it, in the chat shape", async () => {
    const body = { model: M.anthropic, messages: [{ role: "user", content: "hi", cache_control: { type: "ephemeral", ttl: "2h" } }] };
    const res = await rawRequest(`${w.gw.url}/v1/chat/completions`, {
      method: "POST", body: JSON.stringify(body), headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    });
    assert.equal(res.status, 400);
    assert.match(res.json.error.message, /messages\[0\]\.cache_control\.ttl/);
  });
});
