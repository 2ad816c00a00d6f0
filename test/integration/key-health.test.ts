// Channel key health end to end: fake upstreams of each provider answer some keys with the
// provider's real error bodies (refused, forbidden, out of credit, rate limited). A refused
// or out-of-credit key is taken out of rotation and the request that met it is served by
// the channel's next key with 200 (Anthropic's out-of-credit answer, a 400 told only by its
// message, once the gateway's own probe on that key has seen it too); an ordinary rate limit leaves the key in; with every key
// out the client gets a gateway error in its protocol's shape and no upstream is asked; a
// key comes back after its cooldown or when a reload changes the channel's keys; /metrics
// and `gateway channels` show every key by fingerprint with its state, never the key; two
// gateways on one Redis take a key out together.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/format.js";
import { applyLogLevel, setLogLevel, setLogSink } from "../../src/observability/log.js";
import { KeyHealth, keyFingerprint } from "../../src/routing/key-health.js";
import { createMemoryStore } from "../../src/state/memory.js";
import { RedisKeyedStore } from "../../src/state/redis-keyed.js";
import { openRedisSharedState } from "../../src/state/redis.js";
import { StoreUsageLog } from "../../src/state/store-usage-log.js";
import type { State } from "../../src/state/interfaces.js";
import { compileSource } from "../../src/config/index.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { apiKeyOf, isKeyProbe, startFakeAnthropic } from "../helpers/fake-anthropic.js";
import { startFakeGemini } from "../helpers/fake-gemini.js";
import { startFakeOpenAI } from "../helpers/fake-openai.js";
import { bearerKey, type BaseReceived, type FakeServer, type KeyFaultScript } from "../helpers/fake-server.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { deleteKeys, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { TOKEN, closedPort, config, rawRequest, type Obj, type RawResponse } from "./support.js";

type Protocol = "openai" | "anthropic" | "gemini";

const run = randomBytes(3).toString("hex");
/** A channel key unique to this run and test; it must never reach a client, a log or /metrics. */
const newKey = (label: string) => `sk-${label}-${run}-SECRET-${randomBytes(6).toString("hex")}`;

/** What each provider's fake answers a key with, changed by the tests as they go. */
const faults = new Map<string, KeyFaultScript>();

const models: Record<Protocol, string> = { openai: "gpt-4o-mini", anthropic: "claude-sonnet-4-5", gemini: "gemini-2.5-flash" };

/** One request in the protocol's own shape, with the gateway token. */
function ask(gw: TestGateway, protocol: Protocol): Promise<RawResponse> {
  const json = { "content-type": "application/json" };
  if (protocol === "openai") {
    return rawRequest(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { ...json, authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ model: models.openai, max_tokens: 8, messages: [{ role: "user", content: "hi" }] }) });
  }
  if (protocol === "anthropic") {
    return rawRequest(`${gw.url}/v1/messages`, { method: "POST", headers: { ...json, "x-api-key": TOKEN, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: models.anthropic, max_tokens: 8, messages: [{ role: "user", content: "hi" }] }) });
  }
  return rawRequest(`${gw.url}/v1beta/models/${models.gemini}:generateContent`, { method: "POST", headers: { ...json, "x-goog-api-key": TOKEN },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }) });
}

/** The gateway error code in a protocol's error body. */
function codeOf(protocol: Protocol, r: RawResponse): string | undefined {
  if (protocol === "gemini") return r.json?.error?.details?.[0]?.reason;
  return r.json?.error?.code;
}

describe("channel key health", () => {
  const fakes = {} as Record<Protocol, FakeServer<BaseReceived>>;
  const open: TestGateway[] = [];
  const logged: string[] = [];
  let restoreLog: () => void;

  before(async () => {
    restoreLog = setLogSink((line) => logged.push(line));
    setLogLevel("debug");
    fakes.openai = await startFakeOpenAI({ keyFaults: faults });
    fakes.anthropic = await startFakeAnthropic({ keyFaults: faults });
    fakes.gemini = await startFakeGemini({ keyFaults: faults });
  });
  after(async () => {
    for (const gw of open) await gw.close();
    for (const fake of Object.values(fakes)) await fake?.close();
    destroyAgents();
    restoreLog?.();
    applyLogLevel(undefined);
    // Nothing a gateway logged named a channel key (every key of this file carries the run id).
    assert.ok(logged.some((line) => line.includes("channel key out of rotation")), "the gateway said which keys it took out");
    for (const line of logged) assert.ok(!line.includes(`-${run}-SECRET-`), `a log line holds a key: ${line}`);
  });

  const keyOf = (protocol: Protocol, r: BaseReceived) =>
    protocol === "openai" ? bearerKey(r.headers) : protocol === "anthropic" ? apiKeyOf(r) : (r as BaseReceived & { key: string }).key;

  /** The keys the fake of `protocol` was asked with by clients' requests since `from` (the gateway's key probes apart). */
  function keysSeen(protocol: Protocol, from: number): string[] {
    return fakes[protocol].received.slice(from).filter((r) => !isKeyProbe(r)).map((r) => keyOf(protocol, r));
  }

  /** The keys the gateway probed since `from` to confirm a fault named only in a message. */
  function keysProbed(protocol: Protocol, from: number): string[] {
    return fakes[protocol].received.slice(from).filter(isKeyProbe).map((r) => keyOf(protocol, r));
  }

  function channelOf(name: string, protocol: Protocol, keys: string[], extra: Obj = {}): Obj {
    return { name, protocol, base_url: fakes[protocol].url, keys, groups: ["default"], models: [models[protocol]], ...extra };
  }

  async function gateway(channels: Obj[]): Promise<TestGateway> {
    const gw = await startTestGateway(config({ channels }));
    open.push(gw);
    return gw;
  }

  async function metrics(gw: TestGateway): Promise<string> {
    const r = await rawRequest(`${gw.url}/metrics`);
    assert.equal(r.status, 200);
    assert.ok(!r.text.includes(`-${run}-SECRET-`), "/metrics never holds a key");
    return r.text;
  }

  for (const protocol of ["openai", "anthropic", "gemini"] as const) {
    for (const fault of ["invalid_key", "forbidden", "no_credit"] as const) {
      test(`${protocol}: a key answered ${fault} is taken out and the request is served by the next key`, async () => {
        const [bad, good] = [newKey(`${fault}-bad`), newKey(`${fault}-good`)];
        faults.set(bad, fault);
        const gw = await gateway([channelOf(`${protocol}-${fault}`, protocol, [bad, good])]);
        const from = fakes[protocol].received.length;
        const r = await ask(gw, protocol);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(keysSeen(protocol, from), [bad, good], "the bad key first (rotation starts there), then the next");
        assert.deepEqual(keysProbed(protocol, from), protocol === "anthropic" && fault === "no_credit" ? [bad] : [],
          "only a fault told by message text alone is probed, once");
        assert.ok(!r.text.includes(bad) && !JSON.stringify(r.headers).includes(bad));
        const again = fakes[protocol].received.length;
        for (let i = 0; i < 3; i++) assert.equal((await ask(gw, protocol)).status, 200);
        assert.deepEqual(keysSeen(protocol, again), [good, good, good], "the bad key is out of rotation; the other serves");
        const reason = fault === "no_credit" ? "quota" : "auth";
        const text = await metrics(gw);
        const series = (key: string, r: string) => `gateway_channel_key_up{channel="${protocol}-${fault}",key="${keyFingerprint(key)}",reason="${r}"}`;
        assert.ok(text.includes(`${series(bad, reason)} 0`), text);
        assert.ok(text.includes(`${series(good, "none")} 1`));
        assert.ok(text.includes(`gateway_channel_key_failures_total{channel="${protocol}-${fault}",key="${keyFingerprint(bad)}",class="${reason}"} 1`));
        // The channel's error count says the same (an out-of-credit 429 is no rate limit).
        assert.ok(text.includes(`gateway_upstream_errors_total{channel="${protocol}-${fault}",class="${reason}"} 1`), text);
      });
    }

    test(`${protocol}: an ordinary rate limit leaves the key in rotation (the request fails over to the next channel)`, async () => {
      const [limited, other] = [newKey("rl"), newKey("rl-other")];
      faults.set(limited, "rate_limited");
      const gw = await gateway([
        channelOf(`${protocol}-rl`, protocol, [limited], { priority: 10 }),
        channelOf(`${protocol}-rl-next`, protocol, [other]),
      ]);
      const from = fakes[protocol].received.length;
      assert.equal((await ask(gw, protocol)).status, 200);
      assert.equal((await ask(gw, protocol)).status, 200);
      assert.deepEqual(keysSeen(protocol, from), [limited, other, limited, other], "the rate-limited key is tried again");
      const text = await metrics(gw);
      assert.ok(text.includes(`gateway_channel_key_up{channel="${protocol}-rl",key="${keyFingerprint(limited)}",reason="none"} 1`));
    });
  }

  for (const [fault, status, code] of [["invalid_key", 502, "upstream_auth_failed"], ["no_credit", 503, "upstream_quota_exhausted"]] as const) {
    for (const protocol of ["openai", "anthropic", "gemini"] as const) {
      test(`${protocol}: with every key ${fault}, the client gets ${status} ${code} in its protocol, and then no upstream is asked`, async () => {
        const keys = [newKey("all-1"), newKey("all-2")];
        for (const k of keys) faults.set(k, fault);
        const gw = await gateway([channelOf(`${protocol}-all-${fault}`, protocol, keys)]);
        const from = fakes[protocol].received.length;
        const r = await ask(gw, protocol);
        assert.equal(r.status, status, r.text);
        assert.equal(codeOf(protocol, r), code, r.text);
        assert.deepEqual(keysSeen(protocol, from), keys, "each key tried once");
        assert.deepEqual(keysProbed(protocol, from), protocol === "anthropic" && fault === "no_credit" ? keys : []);
        for (const leak of [...keys, "Incorrect API key", "credit balance", "API key not valid", "exceeded your current quota"]) {
          assert.ok(!r.text.includes(leak), `the client saw "${leak}": ${r.text}`);
        }
        const later = fakes[protocol].received.length;
        const r2 = await ask(gw, protocol);
        assert.equal(r2.status, status);
        assert.equal(codeOf(protocol, r2), code);
        assert.equal(fakes[protocol].received.length, later, "keys out: nothing sent upstream");
      });
    }
  }

  test("a key comes back after its cooldown (channels[].key_cooldown)", async () => {
    const [bad, good] = [newKey("cool-bad"), newKey("cool-good")];
    faults.set(bad, "invalid_key");
    const gw = await gateway([channelOf("cooldown", "openai", [bad, good], { key_cooldown: { auth: "300ms" } })]);
    assert.equal((await ask(gw, "openai")).status, 200);
    const up = `gateway_channel_key_up{channel="cooldown",key="${keyFingerprint(bad)}",reason="none"} 1`;
    assert.ok(!(await metrics(gw)).includes(up), "out at first");
    faults.delete(bad); // the operator fixed the account
    await eventually(async () => (await metrics(gw)).includes(up), 5000, "the key to be back in rotation");
    const from = fakes.openai.received.length;
    for (let i = 0; i < 2; i++) assert.equal((await ask(gw, "openai")).status, 200);
    assert.ok(keysSeen("openai", from).includes(bad), "the key serves again");
  });

  test("a reload that changes the channel's keys puts its keys back at once", async () => {
    const [bad, good, added] = [newKey("reload-bad"), newKey("reload-good"), newKey("reload-added")];
    faults.set(bad, "no_credit");
    const yaml = (keys: string[]) => config({ channels: [channelOf("reloaded", "openai", keys)] });
    const gw = await startTestGateway(yaml([bad, good]));
    open.push(gw);
    assert.equal((await ask(gw, "openai")).status, 200);
    gw.swapConfig(yaml([bad, good])); // the same keys: still out
    let from = fakes.openai.received.length;
    for (let i = 0; i < 2; i++) assert.equal((await ask(gw, "openai")).status, 200);
    assert.ok(!keysSeen("openai", from).includes(bad));
    faults.delete(bad); // topped up
    gw.swapConfig(yaml([bad, good, added]));
    from = fakes.openai.received.length;
    for (let i = 0; i < 3; i++) assert.equal((await ask(gw, "openai")).status, 200);
    assert.deepEqual(new Set(keysSeen("openai", from)), new Set([bad, good, added]), "every key in rotation again");
  });

  describe("gateway channels", () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "gw-channels-"));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
      let out = "";
      let err = "";
      const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t) };
      const code = await main(["channels", ...args], io);
      return { code, out, err };
    }

    test("lists every channel and key by fingerprint with state, reason, cooldown, error rate and latency", async () => {
      const [bad, good] = [newKey("cli-bad"), newKey("cli-good")];
      const idle = newKey("cli-idle");
      faults.set(bad, "no_credit");
      const channels = [channelOf("cli-main", "openai", [bad, good]), channelOf("cli-idle", "anthropic", [idle]), channelOf("cli-off", "openai", [])];
      const yaml = config({ channels });
      const file = join(dir, "gateway.yaml");
      await writeFile(file, yaml);
      const gw = await startTestGateway(yaml);
      open.push(gw);
      for (let i = 0; i < 3; i++) assert.equal((await ask(gw, "openai")).status, 200);

      const table = await cli(["--config", file, "--url", `${gw.url}/metrics`]);
      assert.equal(table.code, 0, table.err);
      assert.ok(!table.out.includes(`-${run}-SECRET-`), "no key in the output");
      const lines = table.out.split("\n");
      assert.match(lines[0], /^CHANNEL\s+PROTOCOL\s+CHANNEL STATE\s+KEY\s+KEY STATE\s+REASON\s+BACK IN\s+ATTEMPTS 5m\s+ERRORS 5m\s+LATENCY 5m$/);
      const row = (fp: string) => lines.find((l) => l.includes(fp))?.split(/\s{2,}/);
      const badRow = row(keyFingerprint(bad));
      assert.deepEqual(badRow?.slice(0, 7), ["cli-main", "openai", "enabled", keyFingerprint(bad), "out", "quota", badRow?.[6]]);
      assert.match(badRow![6], /^(59m \d+s|1h 0m)$/, "back in about an hour (the quota cooldown)");
      assert.deepEqual(badRow!.slice(7, 9), ["1", "100%"]);
      const goodRow = row(keyFingerprint(good))!;
      assert.deepEqual(goodRow.slice(0, 7), ["cli-main", "openai", "enabled", keyFingerprint(good), "up", "-", "-"]);
      assert.deepEqual(goodRow.slice(7, 9), ["3", "0%"]);
      assert.match(goodRow[9], /^\d+ ms$/);
      assert.deepEqual(row(keyFingerprint(idle))!.slice(0, 9), ["cli-idle", "anthropic", "enabled", keyFingerprint(idle), "up", "-", "-", "0", "-"]);
      assert.ok(lines.some((l) => /^cli-off\s+openai\s+disabled\s+\(no keys\)\s+-\s+-\s+-\s+-\s+-\s+-$/.test(l)), table.out);
      assert.match(table.out, /note: key states: the gateway at http:\/\/127\.0\.0\.1:\d+\/metrics \(store (sqlite|memory): they live in its process\)/);

      const json = await cli(["--config", file, "--url", `${gw.url}/metrics`, "--json"]);
      assert.equal(json.code, 0);
      const objects = json.out.trim().split("\n").map((l) => JSON.parse(l) as Obj);
      const badJson = objects.find((o) => o.key === keyFingerprint(bad))!;
      assert.equal(badJson.state, "out");
      assert.equal(badJson.reason, "quota");
      assert.ok(Date.parse(String(badJson.back)) > Date.now() + 50 * 60_000);
      assert.equal(badJson.errorRate, 1);
      assert.equal(objects.find((o) => o.key === keyFingerprint(good))!.errorRate, 0);
    });

    test("with no gateway answering and an in-process store, the states are unknown, said so, and the exit code is 1", async () => {
      const key = newKey("cli-down");
      const file = join(dir, "down.yaml");
      await writeFile(file, config({ channels: [channelOf("cli-down", "openai", [key])] }));
      const r = await cli(["--config", file, "--url", `http://127.0.0.1:${await closedPort()}/metrics`]);
      assert.equal(r.code, 1);
      assert.match(r.out, new RegExp(`cli-down\\s+openai\\s+enabled\\s+${keyFingerprint(key)}\\s+unknown`));
      assert.match(r.out, /note: no gateway answered at .*recent figures unknown, and key states too/);
    });
  });
});

describe("channel key health on a shared Redis", () => {
  const prefix = testKeyPrefix("key-health");
  const admin = testRedisClient();
  const faultsHere = new Map<string, KeyFaultScript>();
  let fake: FakeServer<BaseReceived>;
  const states: State[] = [];
  const gateways: TestGateway[] = [];
  const [bad, good] = [newKey("redis-bad"), newKey("redis-good")];
  /** A channel name of this run: `gateway channels` reads the gateway's own key prefix. */
  const shared = `kh-shared-${run}`;

  before(async () => {
    fake = await startFakeOpenAI({ keyFaults: faultsHere });
    faultsHere.set(bad, "invalid_key");
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    for (const s of states) await s.close();
    await fake?.close();
    await deleteKeys(admin, prefix);
    await deleteKeys(admin, `gateway:kv:keyhealth:${shared}:`);
    await admin.quit();
    destroyAgents();
  });

  const yaml = () => config({ channels: [{ name: "shared", protocol: "openai", base_url: fake.url, keys: [bad, good], groups: ["default"], models: ["gpt-4o-mini"] }] });

  async function gatewayOnRedis(): Promise<TestGateway> {
    const state = await openRedisSharedState(REDIS_URL, new StoreUsageLog(createMemoryStore()), { keyPrefix: prefix });
    states.push(state);
    const gw = await startTestGateway(yaml(), { state });
    gateways.push(gw);
    return gw;
  }

  const chat = (gw: TestGateway) => rawRequest(`${gw.url}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
  });

  test("a key one gateway found bad is out of rotation on the other", async () => {
    const [a, b] = [await gatewayOnRedis(), await gatewayOnRedis()];
    let from = fake.received.length;
    assert.equal((await chat(a)).status, 200);
    assert.deepEqual(fake.received.slice(from).map((r) => bearerKey(r.headers)), [bad, good]);
    from = fake.received.length;
    for (let i = 0; i < 3; i++) assert.equal((await chat(b)).status, 200);
    assert.deepEqual(fake.received.slice(from).map((r) => bearerKey(r.headers)), [good, good, good], "b never tries the bad key");
  });

  test("`gateway channels` reads the key states from a Redis store, where every gateway reads them", async () => {
    const dir = await mkdtemp(join(tmpdir(), "gw-channels-redis-"));
    try {
      const keys = [newKey("cli-redis-bad"), newKey("cli-redis-good")];
      const text = config({ store: REDIS_URL, channels: [{ name: shared, protocol: "anthropic", base_url: "http://127.0.0.1:1", keys, groups: ["default"], models: ["claude-sonnet-4-5"] }] });
      const channel = compileSource(text, { path: "t.yaml", env: {}, generation: 1 }).runtime.channels.get(shared)!;
      // What a gateway on this Redis writes when the provider refuses the first key.
      await new KeyHealth(new RedisKeyedStore(admin, "gateway:")).markOut(channel, 0, "auth");
      const file = join(dir, "gateway.yaml");
      await writeFile(file, text);
      let out = "";
      const code = await main(["channels", "--config", file, "--url", `http://127.0.0.1:${await closedPort()}/metrics`], { out: (t) => void (out += t), err: () => undefined });
      assert.equal(code, 0, out);
      assert.match(out, new RegExp(`${shared}\\s+anthropic\\s+enabled\\s+${keyFingerprint(keys[0])}\\s+out\\s+auth\\s+(9m \\d+s|10m 0s)`));
      assert.match(out, new RegExp(`${shared}\\s+anthropic\\s+enabled\\s+${keyFingerprint(keys[1])}\\s+up\\s+-`));
      assert.match(out, /note: key states: redis 127\.0\.0\.1:6379/);
      assert.ok(!out.includes(`-${run}-SECRET-`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
