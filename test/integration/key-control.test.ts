// Channel keys in an operator's hands, and the periodic probe, end to end on real gateways
// and fake upstreams: a key taken out (with a reason, by someone) is not used until put
// back, and /metrics says who and why; a channel whose keys are all taken out is passed
// over like one without keys, and with none left the client gets channel_not_found; the
// CLI on a store whose key states live in the gateway's process says it cannot reach them.
// channels[].probe sends keys out by their cooldown a small request each period: one whose
// upstream answers again is back, one that still fails stays out, one taken out by hand is
// never probed; on a shared Redis one gateway probes a channel per period.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { KeyHealth, keyFingerprint } from "../../src/routing/key-health.js";
import { createMemoryStore } from "../../src/state/memory.js";
import { openRedisSharedState } from "../../src/state/redis.js";
import { StoreUsageLog } from "../../src/state/store-usage-log.js";
import type { State } from "../../src/state/interfaces.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeOpenAI } from "../helpers/fake-openai.js";
import { bearerKey, type BaseReceived, type FakeServer, type KeyFaultScript } from "../helpers/fake-server.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { deleteKeys, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { TOKEN, config, rawRequest, type Obj, type RawResponse } from "./support.js";

const run = randomBytes(3).toString("hex");
const newKey = (label: string) => `sk-${label}-${run}-SECRET-${randomBytes(6).toString("hex")}`;

/** A request the gateway's probe sent (upstream/channel-probe-request.ts: "Hi", 8 tokens). */
const isProbe = (r: BaseReceived) => r.body.max_completion_tokens === 8 && (r.body.messages as Obj[] | undefined)?.[0]?.content === "Hi";

function chat(gw: TestGateway): Promise<RawResponse> {
  return rawRequest(`${gw.url}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 4, messages: [{ role: "user", content: "hi" }] }),
  });
}

describe("channel keys taken out and put back by an operator", () => {
  const faults = new Map<string, KeyFaultScript>();
  let fake: FakeServer<BaseReceived>;
  let gw: TestGateway;
  let dir: string;
  const keys = { a: newKey("a"), b: newKey("b"), spare: newKey("spare") };
  const fp = (key: string) => keyFingerprint(key);
  const channels = () => [
    { name: "main", protocol: "openai", base_url: fake.url, keys: [keys.a, keys.b], groups: ["default"], models: ["gpt-4o-mini"], priority: 1 },
    { name: "spare", protocol: "openai", base_url: fake.url, keys: [keys.spare], groups: ["default"], models: ["gpt-4o-mini"] },
  ];

  before(async () => {
    fake = await startFakeOpenAI({ keyFaults: faults });
    gw = await startTestGateway(config({ channels: channels() }));
    dir = await mkdtemp(join(tmpdir(), "gw-keyctl-"));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    await rm(dir, { recursive: true, force: true });
    destroyAgents();
  });

  /** The keys the upstream was asked with by `n` chats, each answered 200. */
  async function keysOf(n: number): Promise<string[]> {
    const from = fake.received.length;
    for (let i = 0; i < n; i++) {
      const r = await chat(gw);
      assert.equal(r.status, 200, r.text);
    }
    return fake.received.slice(from).map((r) => bearerKey(r.headers));
  }

  test("a key taken out is not used; /metrics says who and why; put back, it is used again", async () => {
    const out = await gw.keyControl.takeOut("main", fp(keys.a), "leaked  in a\nticket", "ops");
    assert.equal(out.reason, "leaked in a ticket", "one line");
    assert.deepEqual(await keysOf(4), [keys.b, keys.b, keys.b, keys.b]);
    const metrics = (await rawRequest(`${gw.url}/metrics`)).text;
    assert.match(metrics, new RegExp(`gateway_channel_key_up\\{channel="main",key="${fp(keys.a)}",reason="manual"\\} 0`));
    assert.match(metrics, new RegExp(`gateway_channel_key_taken_out_timestamp_seconds\\{channel="main",key="${fp(keys.a)}",actor="ops",reason="leaked in a ticket"\\} \\d+`));
    assert.ok(!metrics.includes(`-${run}-SECRET-`), "/metrics never holds a key");
    assert.deepEqual((await gw.keyControl.list()).map((e) => [e.channel, e.fingerprint, e.out.actor, e.configured]), [["main", fp(keys.a), "ops", true]]);
    // `gateway channels` on an embedded store reads it from the running gateway's /metrics.
    const file = join(dir, "listed.yaml");
    await writeFile(file, config({ channels: channels() }));
    let listed = "";
    const code = await main(["channels", "--config", file, "--url", `${gw.url}/metrics`], { out: (t) => void (listed += t), err: () => undefined });
    assert.equal(code, 0, listed);
    assert.match(listed, new RegExp(`main\\s+openai\\s+enabled\\s+${fp(keys.a)}\\s+taken out\\s+operator\\s+when put back`));
    assert.match(listed, new RegExp(`main\\s+${fp(keys.a)}\\s+\\d{4}-\\S+\\s+ops\\s+leaked in a ticket`));
    assert.match(listed, new RegExp(`main\\s+openai\\s+enabled\\s+${fp(keys.b)}\\s+up`));

    const was = await gw.keyControl.putBack("main", fp(keys.a), "ops");
    assert.equal(was?.reason, "leaked in a ticket");
    assert.deepEqual(new Set(await keysOf(4)), new Set([keys.a, keys.b]));
    assert.equal(await gw.keyControl.putBack("main", fp(keys.a), "ops"), undefined, "putting back a key in rotation changes nothing");
  });

  test("unknown channels and keys, and empty reasons, are refused naming what exists", async () => {
    await assert.rejects(gw.keyControl.takeOut("nope", fp(keys.a), "x", "ops"), { code: "unknown_channel", message: /no channel named 'nope' \(there are: main, spare\)/ });
    await assert.rejects(gw.keyControl.takeOut("main", "00000000", "x", "ops"), { code: "unknown_key", message: new RegExp(`its keys: ${fp(keys.a)}, ${fp(keys.b)}`) });
    await assert.rejects(gw.keyControl.takeOut("main", fp(keys.a), "  ", "ops"), { code: "invalid_reason" });
  });

  test("a channel whose keys are all taken out is passed over; with none left, channel_not_found", async () => {
    await gw.keyControl.takeOut("main", fp(keys.a), "rotating", "ops");
    await gw.keyControl.takeOut("main", fp(keys.b), "rotating", "ops");
    assert.deepEqual(await keysOf(2), [keys.spare, keys.spare], "the next channel serves");
    await gw.keyControl.takeOut("spare", fp(keys.spare), "rotating", "ops");
    const from = fake.received.length;
    const r = await chat(gw);
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json?.error?.code, "channel_not_found");
    assert.match(r.json?.error?.message, /an operator took every key of its channels out of rotation/);
    assert.equal(fake.received.length, from, "no upstream was asked");
    for (const [channel, key] of [["main", keys.a], ["main", keys.b], ["spare", keys.spare]] as const) await gw.keyControl.putBack(channel, fp(key), "ops");
    assert.equal((await chat(gw)).status, 200);
  });

  test("the CLI on an embedded (SQLite) store says the key states live in the gateway's process", async () => {
    const file = join(dir, "gateway.yaml");
    await writeFile(file, config({ channels: channels() }));
    let out = "";
    let err = "";
    const code = await main(["channels", "key", "out", "main", fp(keys.a), "--reason", "x", "--config", file], { out: (t) => void (out += t), err: (t) => void (err += t) });
    assert.equal(code, 1, out + err);
    assert.match(err, /keeps key states in the running gateway's own process \(store sqlite:[^)]*\), which this command cannot reach/);
    assert.match(err, /admin API/);
    err = "";
    assert.equal(await main(["channels", "key", "out", "main", fp(keys.a), "--config", file], { out: () => undefined, err: (t) => void (err += t) }), 2);
    assert.match(err, /--reason TEXT/);
  });
});

describe("the periodic probe of keys out by their cooldown", () => {
  const faults = new Map<string, KeyFaultScript>();
  let fake: FakeServer<BaseReceived>;
  let gw: TestGateway;
  const keys = { recovers: newKey("recovers"), fails: newKey("fails"), good: newKey("good"), byHand: newKey("byhand") };

  before(async () => {
    fake = await startFakeOpenAI({ keyFaults: faults });
    gw = await startTestGateway(config({ channels: [{
      name: "probed", protocol: "openai", base_url: fake.url, keys: [keys.recovers, keys.fails, keys.good, keys.byHand],
      groups: ["default"], models: ["gpt-4o-mini"], probe: { every: "200ms" },
    }] }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("a key whose upstream answers again is back; one still failing stays out; one taken out by hand is never probed", async () => {
    const channel = gw.box.current.channels.get("probed")!;
    const health = new KeyHealth(gw.state.keyed);
    const outs = async () => new Map((await health.states(channel)).map((s) => [s.fingerprint, s]));
    // Out by hand first, then by a cooldown too: the probe must leave it alone.
    await gw.keyControl.takeOut("probed", keyFingerprint(keys.byHand), "under review", "ops");
    await health.markOut(channel, 3, "auth");
    faults.set(keys.recovers, "invalid_key");
    faults.set(keys.fails, "invalid_key");
    const from = fake.received.length;
    const r = await chat(gw);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(fake.received.slice(from).filter((q) => !isProbe(q)).map((q) => bearerKey(q.headers)), [keys.recovers, keys.fails, keys.good]);
    assert.equal((await outs()).get(keyFingerprint(keys.recovers))?.out?.reason, "auth");

    faults.delete(keys.recovers); // its account is fixed: it answers 200 from now on
    await eventually(async () => (await outs()).get(keyFingerprint(keys.recovers))?.out === undefined, 5000, "the probe to bring the key back");
    await eventually(() => fake.received.filter((q) => isProbe(q) && bearerKey(q.headers) === keys.fails).length >= 2, 5000, "two probes of the failing key");
    const states = await outs();
    assert.equal(states.get(keyFingerprint(keys.fails))?.out?.reason, "auth", "the failing key stays out");
    assert.equal(states.get(keyFingerprint(keys.byHand))?.manual?.reason, "under review");
    assert.ok(!fake.received.some((q) => bearerKey(q.headers) === keys.byHand), "a key taken out by hand is never probed");

    const used = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const at = fake.received.length;
      assert.equal((await chat(gw)).status, 200);
      for (const q of fake.received.slice(at)) if (!isProbe(q)) used.add(bearerKey(q.headers));
    }
    assert.ok(used.has(keys.recovers), "the recovered key serves again");
    assert.ok(!used.has(keys.fails) && !used.has(keys.byHand));
    const metrics = (await rawRequest(`${gw.url}/metrics`)).text;
    assert.match(metrics, /gateway_channel_key_recovery_probes_total\{channel="probed",result="recovered"\} [1-9]/);
    assert.match(metrics, /gateway_channel_key_recovery_probes_total\{channel="probed",result="failed"\} [1-9]/);
  });
});

describe("the periodic probe on a shared Redis", () => {
  const prefix = testKeyPrefix("key-probe");
  const admin = testRedisClient();
  const faults = new Map<string, KeyFaultScript>();
  let fake: FakeServer<BaseReceived>;
  const states: State[] = [];
  const gateways: TestGateway[] = [];
  const [bad, good] = [newKey("shared-bad"), newKey("shared-good")];
  const EVERY_MS = 1000;

  before(async () => {
    fake = await startFakeOpenAI({ keyFaults: faults });
    faults.set(bad, "invalid_key");
    const yaml = config({ channels: [{
      name: "shared", protocol: "openai", base_url: fake.url, keys: [bad, good], groups: ["default"], models: ["gpt-4o-mini"], probe: { every: `${EVERY_MS}ms` },
    }] });
    for (let i = 0; i < 3; i++) {
      const state = await openRedisSharedState(REDIS_URL, new StoreUsageLog(createMemoryStore()), { keyPrefix: prefix });
      states.push(state);
      gateways.push(await startTestGateway(yaml, { state }));
    }
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    for (const s of states) await s.close();
    await fake?.close();
    await deleteKeys(admin, prefix);
    await admin.quit();
    destroyAgents();
  });

  test("one gateway of three probes a channel per period", async () => {
    const r = await chat(gateways[0]);
    assert.equal(r.status, 200, r.text);
    const probesAt: number[] = [];
    const seen = new Set<BaseReceived>();
    await eventually(() => {
      for (const q of fake.received) {
        if (!seen.has(q) && isProbe(q)) probesAt.push(Date.now());
        seen.add(q);
      }
      return probesAt.length >= 5;
    }, 15_000, "five probes");
    // One probe a period: n probes span at least n − 1 periods, less one for the first (a
    // gateway's first round starts when it does, so its probe may land just before the next
    // period's). Three gateways probing each period would fit 5 probes in about 2 periods.
    const spanPeriods = (probesAt.at(-1)! - probesAt[0]) / EVERY_MS;
    assert.ok(probesAt.length - 1 <= spanPeriods + 1.3, `one probe per period: ${probesAt.length} probes over ${spanPeriods.toFixed(2)} periods`);
    assert.ok(fake.received.filter(isProbe).every((q) => bearerKey(q.headers) === bad), "only the key out is probed");
  });
});
