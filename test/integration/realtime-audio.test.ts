// A realtime session's audio billed as audio: response.done's usage with audio in and out,
// cached audio and image input (test/helpers/usage-fixtures.ts) priced by gateway.yaml's
// audio_input, audio_cache_read, image_input and audio_output, to the total worked out by hand.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import WebSocket from "ws";
import { decodeBreakdown, totalOf } from "../../src/billing/breakdown.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { keyFingerprint } from "../../src/routing/key-health.js";
import { startFakeRealtime, type FakeRealtime } from "../helpers/fake-realtime.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { realtimeDone } from "../helpers/usage-fixtures.js";
import { CHANNEL_KEY, TOKEN, channel, config } from "./support.js";

const MODEL = "gpt-realtime";

describe("realtime audio priced as audio", () => {
  let fake: FakeRealtime;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeRealtime({ keys: [CHANNEL_KEY], response: { kind: "audio", usage: realtimeDone.response.usage } });
    gw = await startTestGateway(config({
      groups: { default: { multiplier: 1 }, video: { multiplier: 1 } },
      channels: [channel("rt", fake.url, { models: [MODEL] })],
      models: {
        [MODEL]: {
          endpoint: "realtime",
          price: { input: 4, output: 16, cache_read_ratio: 0.1, audio_input: 32, audio_cache_read: 0.4, image_input: 5, audio_output: 64 },
        },
      },
    }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("response.done's audio, cached audio and image input reach the entry's cost", async () => {
    const ws = new WebSocket(`${gw.url.replace("http", "ws")}/v1/realtime?model=${MODEL}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    let id = "";
    ws.once("upgrade", (res) => { id = String(res.headers["x-gateway-request-id"]); });
    const done = new Promise<void>((resolve) => ws.on("message", (data) => {
      if ((JSON.parse(data.toString()) as { type?: string }).type === "response.done") resolve();
    }));
    await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
    ws.send(JSON.stringify({ type: "response.create" }));
    await done;
    ws.close();
    await new Promise((resolve) => ws.once("close", resolve));
    await eventually(() => gw.store.logs({ requestId: `${id}-r1` }).length === 1);
    const entry = gw.store.logs({ requestId: `${id}-r1` })[0];
    // text in 350 × 4 + audio in 600 × 32 + image in 50 × 5 + cached text and image 400 × 0.4
    // + cached audio 600 × 0.4 + text out 100 × 16 + audio out 400 × 64 = 48,450 per 1M → 48,450,000 nano
    assert.equal(entry.costNano, 48_450_000n);
    assert.equal(entry.estimated, false);
    assert.equal(totalOf(decodeBreakdown(entry.breakdown!)), entry.costNano);
    assert.match(entry.breakdown!, /audio_cache_read=600@/);
    // The key that served the session, by its fingerprint (never the key).
    assert.equal(entry.key, keyFingerprint(CHANNEL_KEY));
  });

  test("a response is reserved at its audio worst case: a balance that covers its output as text but not as audio refuses it", async () => {
    // 4096 output tokens (the default max_output_tokens) as text: 4096 × 16 / 1M = 0.065536;
    // as audio: 4096 × 64 / 1M = 0.262144. A credit of 0.1 covers the first only.
    const poor = await startTestGateway(config({
      groups: { default: { multiplier: 1 }, video: { multiplier: 1 } },
      users: { alice: { credit: 0.1, groups: ["default"] } },
      channels: [channel("rt", fake.url, { models: [MODEL] })],
      models: { [MODEL]: { endpoint: "realtime", price: { input: 4, output: 16, audio_input: 32, audio_output: 64 } } },
    }));
    try {
      const ws = new WebSocket(`${poor.url.replace("http", "ws")}/v1/realtime?model=${MODEL}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const events: { type?: string; error?: { code?: string } }[] = [];
      ws.on("message", (data) => events.push(JSON.parse(data.toString()) as (typeof events)[number]));
      const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
      await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
      ws.send(JSON.stringify({ type: "response.create" }));
      assert.equal(await closed, 1008, "the session ends as a policy refusal");
      const error = events.find((e) => e.type === "error")?.error;
      assert.equal(error?.code, "pre_deduction_failed", JSON.stringify(events));
      assert.equal(events.some((e) => e.type === "response.done"), false, "no response ran");
    } finally {
      await poor.close();
    }
  });
});
