// The pure and in-process parts of an operator's hand on channel keys: the bound on how old
// a key view a server routes by may be (FreshReads' maxAgeMs), a key taken out by another
// server seen within that bound, the listing of keys taken out (keys no longer configured
// included, channels whose names share a prefix apart), the period claim that lets one
// gateway of several probe a channel, and channels[].probe as compiled.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSource } from "../../src/config/index.js";
import { FreshReads } from "../../src/routing/fresh-reads.js";
import { KeyControl } from "../../src/routing/key-control.js";
import { KeyHealth, keyFingerprint, type KeyMark } from "../../src/routing/key-health.js";
import { claimPeriod } from "../../src/routing/period-claim.js";
import { MemoryKeyedStore } from "../../src/state/memory-keyed.js";

const yaml = (channels: string) => `
server: { listen: "127.0.0.1:0" }
groups: { default: { multiplier: 1 } }
users: { alice: { credit: 1, groups: [default] } }
tokens: [{ name: t, key: sk-gw-unit-0123456789, user: alice, group: default }]
models: { m1: { price: { input: 1, output: 1 } }, m2: { price: { input: 1, output: 1 } } }
channels:
${channels}`;
const runtimeOf = (channels: string) => compileSource(yaml(channels), { path: "t.yaml", env: {}, generation: 1 }).runtime;

test("a kept value is used until freshMs, refreshed in the background until maxAgeMs, and waited for past it", async () => {
  let reads = 0;
  const read = async () => ++reads;
  const fresh = new FreshReads<number>(1000, { maxAgeMs: 2000 });
  assert.equal(await fresh.get("c", read, 0), 1);
  assert.equal(fresh.get("c", read, 999), 1, "fresh: no read");
  assert.equal(fresh.get("c", read, 1500), 1, "stale: the old value now, a read behind it");
  await Promise.resolve();
  assert.equal(reads, 2);
  const late = fresh.get("c", read, 1500 + 2000);
  assert.ok(late instanceof Promise, "too old: the read is waited for");
  const again = fresh.get("c", read, 1500 + 2000);
  assert.equal(await late, 3);
  assert.equal(await again, 3, "two requests at once share one read");
  assert.equal(reads, 3);
  const unbounded = new FreshReads<number>(1000);
  await unbounded.get("c", read, 0);
  assert.equal(typeof unbounded.get("c", read, 3_600_000), "number", "without maxAgeMs any age is used while it refreshes");
});

test("a key taken out through another server is out in this server's view within freshMs", async () => {
  const keyed = new MemoryKeyedStore();
  const runtime = runtimeOf(`  - { name: c, protocol: openai, base_url: "http://127.0.0.1:1", keys: [k-one, k-two], groups: [default], models: [m1] }`);
  const channel = runtime.channels.get("c")!;
  const here = new KeyHealth(keyed, { freshMs: 1000 });
  const elsewhere = new KeyControl({ keyed, runtime: () => runtime });
  const view = async (now: number) => (await here.view(channel, now)) as readonly (KeyMark | undefined)[];
  assert.deepEqual(await view(0), [undefined, undefined]);
  await elsewhere.takeOut("c", keyFingerprint("k-two"), "rotating", "ops", 10);
  assert.deepEqual(await view(999), [undefined, undefined], "within freshMs the view read at 0 serves");
  const seen = await view(1000);
  assert.equal(seen[1]?.reason, "manual");
  assert.equal(seen[1]?.until, Number.POSITIVE_INFINITY);
  assert.deepEqual((seen[1] as { manual: unknown }).manual, { reason: "rotating", actor: "ops", at: 10 });
  const states = await here.states(channel);
  assert.deepEqual(states.map((s) => s.manual?.actor), [undefined, "ops"]);
  assert.deepEqual((await elsewhere.states("c"))[0].keys.map((k) => [k.fingerprint, k.manual?.reason]),
    [[keyFingerprint("k-one"), undefined], [keyFingerprint("k-two"), "rotating"]], "what the admin API shows");
});

test("keys taken out are listed by channel, a key no longer configured included; a reload's new key list leaves them out", async () => {
  const keyed = new MemoryKeyedStore();
  let runtime = runtimeOf(`  - { name: a, protocol: openai, base_url: "http://127.0.0.1:1", keys: [k-one, k-two], groups: [default], models: [m1] }
  - { name: "a:b", protocol: openai, base_url: "http://127.0.0.1:1", keys: [k-three], groups: [default], models: [m1] }`);
  const control = new KeyControl({ keyed, runtime: () => runtime });
  await control.takeOut("a", keyFingerprint("k-one"), "r1", "ops", 1);
  await control.takeOut("a:b", keyFingerprint("k-three"), "r3", "ops", 2);
  assert.deepEqual((await control.list("a")).map((e) => [e.fingerprint, e.configured]), [[keyFingerprint("k-one"), true]]);
  runtime = runtimeOf(`  - { name: a, protocol: openai, base_url: "http://127.0.0.1:1", keys: [k-one, k-four], groups: [default], models: [m1] }`);
  const health = new KeyHealth(keyed);
  const channel = runtime.channels.get("a")!;
  assert.equal((await health.view(channel))[0]?.reason, "manual", "the key's other keys changed: it stays out");
  runtime = runtimeOf(`  - { name: a, protocol: openai, base_url: "http://127.0.0.1:1", keys: [k-four], groups: [default], models: [m1] }`);
  assert.deepEqual((await control.list()).map((e) => [e.channel, e.configured]), [["a", false]]);
  assert.equal((await control.putBack("a", keyFingerprint("k-one"), "ops"))?.reason, "r1", "a key no longer configured can be put back");
  assert.deepEqual(await control.list(), []);
});

test("of several claims of one period at once, exactly one holds it; a later one finds it taken", async () => {
  const keyed = new MemoryKeyedStore();
  const claims = await Promise.all(Array.from({ length: 5 }, () => claimPeriod({ keyed, name: "keyprobe:c:7", ttlMs: 60_000, spreadMs: 0 })));
  assert.equal(claims.filter(Boolean).length, 1);
  assert.equal(await claimPeriod({ keyed, name: "keyprobe:c:7", ttlMs: 60_000, spreadMs: 0 }), false);
  assert.equal(await claimPeriod({ keyed, name: "keyprobe:c:8", ttlMs: 60_000, spreadMs: 0 }), true, "the next period is free");
});

test("channels[].probe compiles to its period and the upstream model (named or the first, through model_map)", () => {
  const runtime = runtimeOf(`  - { name: a, protocol: openai, base_url: "http://127.0.0.1:1", keys: [k], groups: [default], models: [m1, m2], model_map: { m2: up-m2 }, probe: { every: 5m, model: m2 } }
  - { name: b, protocol: openai, base_url: "http://127.0.0.1:1", keys: [k], groups: [default], models: [m1, m2], probe: { every: 30s } }
  - { name: c, protocol: openai, base_url: "http://127.0.0.1:1", keys: [k], groups: [default], models: [m1] }`);
  assert.deepEqual(runtime.channels.get("a")!.probe, { everyMs: 300_000, upstreamModel: "up-m2" });
  assert.deepEqual(runtime.channels.get("b")!.probe, { everyMs: 30_000, upstreamModel: "m1" });
  assert.equal(runtime.channels.get("c")!.probe, undefined);
});
