// Prices as providers charge them, end to end through the real gateway and the official
// SDKs: a long-context request with 1-hour cache writes at its tier, a flex answer at its
// service tier, each entry's breakdown reproducing its charge and X-Gateway-Cost, the
// operator's cost beside it, and a group that routes to the cheapest channel first.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type http from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { decodeBreakdown, totalOf } from "../../src/billing/breakdown.js";
import { formatNano } from "../../src/billing/cost.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, channel, completionAnswer, config, startRawUpstream, type Obj, type RawUpstream } from "./support.js";

/** An Anthropic messages answer with `usage`. */
function messageAnswer(res: http.ServerResponse, model: unknown, usage: Obj): void {
  res.writeHead(200, { "content-type": "application/json", "request-id": "req_raw" });
  res.end(JSON.stringify({
    id: "msg_raw", type: "message", role: "assistant", model, content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn", stop_sequence: null, usage,
  }));
}

describe("pricing", () => {
  let claude: RawUpstream;
  let openai: RawUpstream;
  let cheap: RawUpstream;
  let dear: RawUpstream;
  let gw: TestGateway;
  let serviceTier = "flex";
  let stream = false;

  before(async () => {
    claude = await startRawUpstream((body, res) => messageAnswer(res, body.model, {
      // 150,000 + 40,000 read + 20,000 written = 210,000 input tokens: above the 200K tier.
      input_tokens: 150_000, cache_read_input_tokens: 40_000, cache_creation_input_tokens: 20_000,
      cache_creation: { ephemeral_5m_input_tokens: 5_000, ephemeral_1h_input_tokens: 15_000 },
      output_tokens: 2_000, service_tier: "standard",
    }));
    openai = await startRawUpstream((body, res) => {
      const usage = { prompt_tokens: 1_000_000, completion_tokens: 100_000, total_tokens: 1_100_000 };
      if (stream) {
        // service_tier rides on every chunk of a stream.
        res.writeHead(200, { "content-type": "text/event-stream" });
        const base = { id: "chatcmpl-raw", object: "chat.completion.chunk", created: 1, model: body.model, service_tier: serviceTier };
        res.end([
          { ...base, choices: [{ index: 0, delta: { content: "ok" }, finish_reason: null }] },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
          { ...base, choices: [], usage },
        ].map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: "chatcmpl-raw", object: "chat.completion", created: 1, model: body.model, service_tier: serviceTier,
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage,
      }));
    });
    const answer = (name: string) => (body: Obj, res: http.ServerResponse) =>
      completionAnswer(res, body.model, name, { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 });
    cheap = await startRawUpstream(answer("cheap"));
    dear = await startRawUpstream(answer("dear"));
    gw = await startTestGateway(config({
      groups: { default: { multiplier: 0.5 }, thrifty: { multiplier: 1, strategy: "cheapest" } },
      users: { alice: { credit: 1000, groups: ["default", "thrifty"] } },
      tokens: [
        { name: "alice-main", key: TOKEN, user: "alice", group: "default" },
        { name: "alice-thrifty", key: "sk-gw-thrifty-0123456789", user: "alice", group: "thrifty" },
      ],
      channels: [
        channel("claude", claude.url, { protocol: "anthropic", models: ["claude-sonnet-4-5"], cost: { multiplier: 0.9 } }),
        channel("openai", openai.url, { models: ["gpt-5"] }),
        // Listed first and dearer: only the cheapest strategy passes it over.
        channel("dear", dear.url, { groups: ["thrifty"], models: ["m"], cost: { multiplier: 0.9 } }),
        channel("cheap", cheap.url, { groups: ["thrifty"], models: ["m"], cost: { prices: { m: { input: 0.5, output: 1 } } } }),
      ],
      models: {
        "claude-sonnet-4-5": {
          price: {
            input: 3, output: 15, cache_read_ratio: 0.1, cache_write_ratio: 1.25, cache_write_1h_ratio: 2,
            tiers: [{ above_input_tokens: 200_000, input: 6, output: 22.5 }],
          },
        },
        "gpt-5": { price: { input: 1.25, output: 10, service_tiers: { flex: 0.5, priority: 2 } } },
        m: { price: { input: 1, output: 2 } },
      },
    }));
  });

  after(async () => {
    await gw?.close();
    await Promise.all([claude, openai, cheap, dear].map((u) => u?.close()));
    destroyAgents();
  });

  test("a long-context Claude request with 1-hour cache writes is billed wholly at the >200K tier, each write at its lifetime's ratio", async () => {
    const client = new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });
    const { response } = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 2048, messages: [{ role: "user", content: "hi" }] }).withResponse();
    const entry = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    // At the tier: input 6, output 22.5, cache read 0.6, 5-minute write 7.5, 1-hour write 12 (per 1M):
    //   150,000 × 6 = 0.9; 40,000 × 0.6 = 0.024; 5,000 × 7.5 = 0.0375; 15,000 × 12 = 0.18; 2,000 × 22.5 = 0.045
    //   = 1.1865, × 0.5 (group) = 0.59325
    assert.equal(entry.costNano, 593_250_000n);
    assert.equal(response.headers.get("x-gateway-cost"), "0.59325");
    assert.equal(entry.breakdown,
      "input=150000@6/1M cache_read=40000@0.6/1M cache_write=5000@7.5/1M cache_write_1h=15000@12/1M output=2000@22.5/1M multiplier=0.5 tier=200000");
    assert.equal(totalOf(decodeBreakdown(entry.breakdown!)), entry.costNano);
    // The operator pays the list price × 0.9 and no group multiplier: 1.1865 × 0.9.
    assert.equal(entry.channelCostNano, 1_067_850_000n);
  });

  test("an answer served at the flex tier costs the flex multiplier of the price; stream and whole alike", async () => {
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    // 1,000,000 × 1.25 + 100,000 × 10 = 2.25 per the list; × 0.5 (flex) × 0.5 (group) = 0.5625.
    serviceTier = "flex";
    stream = false;
    const whole = await client.chat.completions.create({ model: "gpt-5", messages: [{ role: "user", content: "hi" }] }).withResponse();
    const wholeEntry = await entryOf(gw.store, whole.response.headers.get("x-gateway-request-id")!);
    assert.equal(wholeEntry.costNano, 562_500_000n);
    assert.equal(whole.response.headers.get("x-gateway-cost"), formatNano(wholeEntry.costNano));
    assert.match(wholeEntry.breakdown!, / multiplier=0\.5 service_tier=flex@0\.5$/);
    // The operator's cost is the flex price too (no channel cost: the list price).
    assert.equal(wholeEntry.channelCostNano, 1_125_000_000n);

    stream = true;
    serviceTier = "priority";
    const streamed = await client.chat.completions.create({ model: "gpt-5", stream: true, messages: [{ role: "user", content: "hi" }] }).withResponse();
    for await (const _ of streamed.data) { /* drain */ }
    const streamEntry = await entryOf(gw.store, streamed.response.headers.get("x-gateway-request-id")!);
    assert.equal(streamEntry.costNano, 2_250_000_000n, "2.25 × 2 (priority) × 0.5 (group)");
    assert.equal(totalOf(decodeBreakdown(streamEntry.breakdown!)), streamEntry.costNano);

    // "default" is no tier the list names: the list price.
    stream = false;
    serviceTier = "default";
    const plain = await client.chat.completions.create({ model: "gpt-5", messages: [{ role: "user", content: "hi" }] }).withResponse();
    assert.equal((await entryOf(gw.store, plain.response.headers.get("x-gateway-request-id")!)).costNano, 1_125_000_000n);
  });

  test("strategy: cheapest sends a request to the channel that costs the operator least, and records that cost", async () => {
    const client = new OpenAI({ apiKey: "sk-gw-thrifty-0123456789", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 5; i++) {
      const { data, response } = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }).withResponse();
      assert.equal(data.choices[0].message.content, "cheap");
      const entry = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
      assert.equal(entry.channel, "cheap");
      // Charged at the list: (1000 × 1 + 100 × 2) / 1M = 0.0012; the channel's own price: (1000 × 0.5 + 100 × 1) / 1M = 0.0006.
      assert.equal(entry.costNano, 1_200_000n);
      assert.equal(entry.channelCostNano, 600_000n);
    }
    assert.equal(dear.state.requests, 0);
    // /metrics: what the channel cost the operator, beside gateway_cost_total (the test
    // process's registry is shared by every gateway it starts: "cheap" is this suite's).
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const line = metrics.split("\n").find((l) => l.startsWith('gateway_channel_cost_total{channel="cheap"}'));
    assert.ok(line, metrics);
    assert.ok(Math.abs(Number(line.split(" ")[1]) - 0.003) < 1e-12, line);
  });
});
