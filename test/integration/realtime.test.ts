// Realtime: a WebSocket to /v1/realtime?model=… is authenticated like any request (header,
// or the browser subprotocol), opened upstream with the channel's key, relayed both ways,
// and billed from the usage of each response.done: its own usage-log entry, committed before
// the client is sent that response.done.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import WebSocket from "ws";
import { realtimeFakeUsage, startFakeRealtime, type FakeRealtime } from "../helpers/fake-realtime.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { KeyHealth } from "../../src/routing/key-health.js";
import type { UsageEntry } from "../../src/state/store.js";
import { CHANNEL_KEY, TOKEN, channel, config } from "./support.js";

const MODEL = "gpt-realtime";

describe("realtime", () => {
  let fake: FakeRealtime;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeRealtime({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(config({
      channels: [channel("rt", fake.url, { models: [MODEL], model_map: { [MODEL]: "gpt-realtime-2025" } })],
      models: { [MODEL]: { endpoint: "realtime", price: { input: 4, output: 16, cache_read_ratio: 0.1 } } },
    }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  const wsUrl = () => `${gw.url.replace("http", "ws")}/v1/realtime?model=${MODEL}`;

  /** Opens a session, asks for one response, collects the event types until response.done,
   * and the response's usage-log entries as the client got its response.done. */
  async function session(ws: WebSocket): Promise<{ types: string[]; id: string; atDone: UsageEntry[] }> {
    const types: string[] = [];
    let id = "";
    let atDone: UsageEntry[] = [];
    ws.once("upgrade", (res) => { id = String(res.headers["x-gateway-request-id"]); });
    const done = new Promise<void>((resolve) => ws.on("message", (data) => {
      const type = JSON.parse(data.toString()).type as string;
      types.push(type);
      if (type !== "response.done") return;
      atDone = gw.store.logs({ requestId: `${id}-r1` });
      resolve();
    }));
    await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
    ws.send(JSON.stringify({ type: "response.create", response: { modalities: ["text"] } }));
    await done;
    ws.close();
    await new Promise((resolve) => ws.once("close", resolve));
    return { types, id, atDone };
  }

  test("a session relays events both ways and is billed from response.done usage, committed before it is relayed", async () => {
    const { types, id, atDone } = await session(new WebSocket(wsUrl(), { headers: { authorization: `Bearer ${TOKEN}` } }));
    assert.deepEqual(types, ["session.created", "response.created", "response.output_text.delta", "response.output_text.delta", "response.done"]);
    const upstream = fake.sessions.at(-1)!;
    assert.equal(upstream.model, "gpt-realtime-2025");
    assert.equal(upstream.headers.authorization, `Bearer ${CHANNEL_KEY}`);
    assert.equal(fake.events.at(-1)!.type, "response.create");
    // (30 × 4 + 10 × 4 × 0.1 + 20 × 16) / 1M × 0.7 = 0.000310800 → 310,800 nano
    assert.equal(atDone.length, 1, "the response's entry is in the log when the client gets its response.done");
    const entry = atDone[0];
    assert.equal(entry.costNano, 310_800n);
    assert.equal(entry.estimated, false);
    assert.deepEqual([entry.token, entry.user, entry.model, entry.upstreamModel, entry.channel], ["alice-main", "alice", MODEL, "gpt-realtime-2025", "rt"]);
    assert.deepEqual(entry.usage, { input: 30, cacheRead: realtimeFakeUsage.input_token_details.cached_tokens, cacheWrite: 0, output: 20, reasoning: 0 });
    // The session's own entry (its request id, its duration) charges nothing more.
    await eventually(() => gw.store.logs({ requestId: id }).length === 1);
    const own = gw.store.logs({ requestId: id })[0];
    assert.deepEqual([own.status, own.costNano], [101, 0n]);
    assert.equal(gw.ledger.spentByUser("alice"), 310_800n);
  });

  test("browsers authenticate with the subprotocol, which never goes upstream", async () => {
    const ws = new WebSocket(wsUrl(), ["realtime", `openai-insecure-api-key.${TOKEN}`]);
    await session(ws);
    assert.equal(ws.protocol, "realtime");
    const upstream = fake.sessions.at(-1)!;
    assert.ok(!String(upstream.headers["sec-websocket-protocol"]).includes(TOKEN));
  });

  test("no token: the upgrade is refused with 401 JSON and a request id; no upstream session", async () => {
    const before = fake.sessions.length;
    const ws = new WebSocket(wsUrl());
    const res = await new Promise<import("node:http").IncomingMessage>((resolve, reject) => {
      ws.once("unexpected-response", (_req, r) => resolve(r));
      ws.once("open", () => reject(new Error("should not open")));
    });
    assert.equal(res.statusCode, 401);
    assert.ok(res.headers["x-gateway-request-id"]);
    const body = await new Promise<string>((resolve) => { let t = ""; res.on("data", (c) => { t += c; }); res.on("end", () => resolve(t)); });
    assert.equal(JSON.parse(body).error.code, "missing_token");
    ws.on("error", () => {}); // "closed before the connection was established": expected here
    ws.terminate();
    assert.equal(fake.sessions.length, before);
  });

  test("a plain GET is told to upgrade (426)", async () => {
    const r = await fetch(`${gw.url}/v1/realtime?model=${MODEL}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.status, 426);
  });
});

describe("realtime: keys out of rotation", () => {
  const BAD_KEY = "sk-upstream-REVOKED-abcdef123456";
  let fake: FakeRealtime;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeRealtime({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(config({
      channels: [channel("rt2", fake.url, { keys: [BAD_KEY, CHANNEL_KEY], models: [MODEL] })],
      models: { [MODEL]: { endpoint: "realtime", price: { input: 4, output: 16 } } },
    }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("a session skips a key taken out of rotation (as a refused key is), whatever the rotation's turn", async () => {
    const rt2 = gw.box.current.channels.get("rt2")!;
    await new KeyHealth(gw.state.keyed).markOut(rt2, 0, "auth");
    for (let i = 0; i < 3; i++) {
      const ws = new WebSocket(`${gw.url.replace("http", "ws")}/v1/realtime?model=${MODEL}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
      ws.close();
      await new Promise((resolve) => ws.once("close", resolve));
    }
    assert.deepEqual(fake.sessions.map((s) => s.headers.authorization), Array(3).fill(`Bearer ${CHANNEL_KEY}`));
  });
});

