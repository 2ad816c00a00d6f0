import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { Affinity } from "../../src/routing/affinity.js";
import { ChannelHealth } from "../../src/routing/health.js";
import { Jobs } from "../../src/routing/jobs.js";
import { MemoryKeyedStore } from "../../src/state/memory-keyed.js";

let keyed: MemoryKeyedStore;
let health: ChannelHealth;
beforeEach(() => {
  keyed = new MemoryKeyedStore();
  health = new ChannelHealth(keyed);
});

test("three consecutive failures cool a channel for 10 s; more failures double it", async () => {
  const t = 1_000_000;
  await health.recordFailure("a", t);
  await health.recordFailure("a", t);
  assert.equal(await health.isCooling("a", t), false);
  await health.recordFailure("a", t);
  assert.equal(await health.isCooling("a", t + 9_999), true);
  assert.equal(await health.isCooling("a", t + 10_000), false);
  await health.recordFailure("a", t);
  assert.equal(await health.isCooling("a", t + 19_999), true);
  assert.equal(await health.isCooling("a", t + 20_000), false);
});

test("an answer resets a channel's health", async () => {
  for (let i = 0; i < 3; i++) await health.recordFailure("a", 0);
  assert.equal(await health.isCooling("a", 1), true);
  await health.recordSuccess("a");
  assert.equal(await health.isCooling("a", 1), false);
  await health.recordFailure("a", 0);
  assert.equal(await health.isCooling("a", 1), false, "the count started over");
});

test("cooling channels go last, the rest keep their order, and none is dropped", async () => {
  const plan = [{ name: "a" }, { name: "b" }, { name: "c" }];
  for (let i = 0; i < 3; i++) await health.recordFailure("a", 0);
  assert.deepEqual((await health.coolingLast(plan, 1)).map((c) => c.name), ["b", "c", "a"]);
  assert.equal(await health.coolingLast(plan, 1_000_000), plan, "after the cooldown, the plan is untouched");
});

test("health lives in the keyed store under health: keys, and forget() clears only those", async () => {
  for (let i = 0; i < 3; i++) await health.recordFailure("a", Date.now());
  await new Affinity(keyed).bind("s", "a", 60_000);
  assert.equal(await new ChannelHealth(keyed).isCooling("a"), true, "another gateway on the same store sees it");
  assert.deepEqual(JSON.parse((await keyed.get("health:a"))!).failures, 3);
  await health.forget();
  assert.equal(await health.isCooling("a"), false);
  assert.equal(await new Affinity(keyed).bound("s", 60_000), "a");
});

test("affinity and jobs are JSON values under aff: and job: keys", async () => {
  const affinity = new Affinity(keyed);
  assert.equal(await affinity.bound("tok\u0000m\u0000s1", 60_000), undefined);
  await affinity.bind("tok\u0000m\u0000s1", "ch-1", 60_000);
  assert.equal(await keyed.get("aff:tok\u0000m\u0000s1"), '"ch-1"');
  assert.equal(await affinity.bound("tok\u0000m\u0000s1", 60_000), "ch-1");
  const jobs = new Jobs(keyed);
  await jobs.remember("video_1", { channel: "ch-1", user: "alice", model: "sora-2", requestId: "r1" }, 123);
  assert.deepEqual(await jobs.owner("video_1"), { id: "video_1", channel: "ch-1", user: "alice", model: "sora-2", requestId: "r1", rememberedAt: 123 });
  assert.equal(await jobs.owner("video_2"), undefined);
  const all = [];
  for await (const job of jobs.remembered()) all.push(job.id);
  assert.deepEqual(all, ["video_1"]);
});
