// The responses protocol (/v1/responses) with the openai SDK: only models whose price-list
// endpoint is `responses`, passed through to an `openai` channel (a fake Responses API
// upstream), non-stream and stream, usage billed; any other model gets a 400 pointing to
// chat-completions.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startFakeResponses, responsesFakeUsage, type FakeResponses, type Script } from "../helpers/fake-responses.js";
import { M, last, splitCost, openaiClient, startWorld, type World } from "../helpers/protocol-world.js";
import { CHANNEL_KEY, channel } from "./support.js";

/** responsesFakeUsage normalised: input 20 incl. 4 cached, output 8 incl. 3 reasoning. */
const canonical = { input: 16, cacheRead: 4, cacheWrite: 0, output: 8, reasoning: 3 };
/** (16 + 4) × 15 + 8 × 120 = 1260 per 1M, × 0.7 = 882 µ. */
const COST = 882_000n;

describe("responses protocol", () => {
  let w: World;
  let fake: FakeResponses;
  let script: Script = { kind: "ok" };
  let client: OpenAI;

  before(async () => {
    fake = await startFakeResponses({ keys: [CHANNEL_KEY], script: () => script });
    w = await startWorld({
      extraChannels: () => [channel("resp", fake.url, { protocol: "openai", models: [M.responses] })],
    });
    client = openaiClient(w);
  });
  after(async () => {
    await w?.close();
    await fake?.close();
  });
  beforeEach(() => { script = { kind: "ok" }; w.reset(); });

  test("non-stream: output_text, body passed through untouched, usage billed", async () => {
    script = { kind: "ok", text: "Bonjour 👋 — 你好 \"q\"" };
    const mark = w.mark();
    const params = { model: M.responses, input: "Say hi", reasoning: { effort: "high" as const }, instructions: "Be brief.", max_output_tokens: 300 };
    const { data, response } = await client.responses.create(params).withResponse();
    assert.equal(data.object, "response");
    assert.equal(data.status, "completed");
    assert.equal(data.output_text, "Bonjour 👋 — 你好 \"q\"");
    assert.deepEqual(data.usage, responsesFakeUsage);
    const r = last(fake.received);
    assert.equal(r.path, "/v1/responses");
    // As sent, but for store: false (the model does not allow storing at the provider).
    assert.deepEqual(r.body, { ...params, store: false });
    assert.equal(r.headers.authorization, `Bearer ${CHANNEL_KEY}`);
    assert.equal(response.headers.get("openai-organization"), null, "upstream account headers are not relayed");
    const rec = await w.record(mark);
    assert.equal(rec.status, 200);
    assert.equal(rec.channel, "resp");
    assert.deepEqual(rec.usage, canonical);
    assert.equal((await w.entry(response.headers.get("x-gateway-request-id")!)).costNano, COST);
  });

  test("stream: typed events, text deltas, response.completed with usage; usage billed", async () => {
    script = { kind: "ok", text: "streaming responses work ✓", chunks: 5 };
    const mark = w.mark();
    const s = await client.responses.create({ model: M.responses, input: "go", stream: true });
    const types: string[] = [];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const e of s) {
      types.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
      if (e.type === "response.completed") completed = e.response;
    }
    assert.equal(types[0], "response.created");
    assert.equal(types.at(-1), "response.completed");
    assert.ok(types.filter((t) => t === "response.output_text.delta").length >= 2);
    assert.equal(text, "streaming responses work ✓");
    const final = splitCost(completed?.usage);
    assert.deepEqual(final.usage, responsesFakeUsage);
    assert.equal(last(fake.received).body.stream, true);
    const rec = await w.record(mark);
    assert.deepEqual(rec.usage, canonical);
    assert.equal(final.cost, await w.shownCost(rec.id), "the charged cost beside the usage");
  });

  test("stream helper: finalResponse().output_text", async () => {
    script = { kind: "ok", text: "final answer", chunks: 3 };
    const s = client.responses.stream({ model: M.responses, input: "go" });
    const deltas: string[] = [];
    s.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await s.finalResponse();
    assert.equal(final.output_text, "final answer");
    assert.equal(deltas.join(""), "final answer");
  });

  test("an upstream 400 reaches the client as that 400 (pass-through)", async () => {
    script = { kind: "error", status: 400, message: "Unsupported parameter: 'temperature' is not supported with this model." };
    await assert.rejects(client.responses.create({ model: M.responses, input: "x" }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.match(e.message, /Unsupported parameter: 'temperature'/);
      return true;
    });
  });

  test("a chat-endpoint model on /v1/responses → 400 saying to use chat-completions", async () => {
    for (const model of [M.openai, M.anthropic, M.gemini]) {
      const before = fake.received.length + w.openai.received.length + w.anthropic.received.length + w.gemini.received.length;
      await assert.rejects(client.responses.create({ model, input: "x" }), (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError, `${model}: ${String(e)}`);
        assert.equal(e.status, 400);
        assert.match(e.message, /\/v1\/chat\/completions/);
        assert.equal((e.error as { code?: string }).code, "wrong_endpoint");
        return true;
      });
      assert.equal(fake.received.length + w.openai.received.length + w.anthropic.received.length + w.gemini.received.length, before,
        "nothing reached an upstream");
    }
  });
});
