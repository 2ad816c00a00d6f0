import assert from "node:assert/strict";
import { test } from "node:test";
import { planAttempts } from "../../src/routing/plan.js";
import { KeyRotation } from "../../src/routing/keys.js";
import type { Channel, ChannelTier } from "../../src/runtime/types.js";

function channel(name: string, priority: number, weight = 1, keys = ["k"]): Channel {
  return {
    name, priority, weight, keys, keyCooldownMs: { auth: 600_000, quota: 3_600_000 }, kind: "openai", protocol: "openai", settings: {}, baseUrl: new URL("http://127.0.0.1:1"),
    groups: new Set(["default"]), models: new Set(["m"]), modelMap: new Map(), enabled: true,
  };
}

function tier(priority: number, channels: Channel[]): ChannelTier {
  return { priority, channels, totalWeight: channels.reduce((s, c) => s + c.weight, 0) };
}

test("higher priority tiers come first, every channel at most once", () => {
  const tiers = [tier(10, [channel("a", 10), channel("b", 10)]), tier(0, [channel("c", 0)])];
  for (let i = 0; i < 50; i++) {
    const plan = planAttempts(tiers, 10).map((c) => c.name);
    assert.equal(plan.length, 3);
    assert.equal(plan[2], "c");
    assert.deepEqual([...plan.slice(0, 2)].sort(), ["a", "b"]);
  }
});

test("the limit bounds the plan", () => {
  const tiers = [tier(1, [channel("a", 1), channel("b", 1)]), tier(0, [channel("c", 0)])];
  assert.equal(planAttempts(tiers, 2).length, 2);
  assert.equal(planAttempts(tiers, 1).length, 1);
});

test("weights decide who goes first, in proportion", () => {
  const tiers = [tier(0, [channel("heavy", 0, 3), channel("light", 0, 1)])];
  // A deterministic sweep of random() over [0,1) must give exactly a 3:1 split.
  const counts = { heavy: 0, light: 0 };
  for (let i = 0; i < 400; i++) {
    const first = planAttempts(tiers, 1, undefined, () => (i + 0.5) / 400)[0];
    counts[first.name as "heavy" | "light"]++;
  }
  assert.deepEqual(counts, { heavy: 300, light: 100 });
});

test("the accept filter drops channels and keeps the order rules", () => {
  const other = { ...channel("x", 5), protocol: "anthropic" as const };
  const tiers = [tier(5, [other]), tier(0, [channel("a", 0)])];
  assert.deepEqual(planAttempts(tiers, 5, (c) => c.protocol === "openai").map((c) => c.name), ["a"]);
});

test("keys rotate round-robin per channel", () => {
  const c = channel("rot", 0, 1, ["k1", "k2", "k3"]);
  const keys = new KeyRotation();
  assert.deepEqual([keys.next(c), keys.next(c), keys.next(c), keys.next(c)], ["k1", "k2", "k3", "k1"]);
});
