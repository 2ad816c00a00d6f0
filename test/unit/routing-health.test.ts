import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { coolingLast, isCooling, recordFailure, recordSuccess, resetHealth } from "../../src/routing/health.js";

beforeEach(() => resetHealth());

test("three consecutive failures cool a channel for 10 s; more failures double it", () => {
  const t = 1_000_000;
  recordFailure("a", t);
  recordFailure("a", t);
  assert.equal(isCooling("a", t), false);
  recordFailure("a", t);
  assert.equal(isCooling("a", t + 9_999), true);
  assert.equal(isCooling("a", t + 10_000), false);
  recordFailure("a", t);
  assert.equal(isCooling("a", t + 19_999), true);
  assert.equal(isCooling("a", t + 20_000), false);
});

test("an answer resets a channel's health", () => {
  for (let i = 0; i < 3; i++) recordFailure("a", 0);
  assert.equal(isCooling("a", 1), true);
  recordSuccess("a");
  assert.equal(isCooling("a", 1), false);
  recordFailure("a", 0);
  assert.equal(isCooling("a", 1), false, "the count started over");
});

test("cooling channels go last, the rest keep their order, and none is dropped", () => {
  const plan = [{ name: "a" }, { name: "b" }, { name: "c" }];
  for (let i = 0; i < 3; i++) recordFailure("a", 0);
  assert.deepEqual(coolingLast(plan, 1).map((c) => c.name), ["b", "c", "a"]);
  assert.equal(coolingLast(plan, 1_000_000), plan, "after the cooldown, the plan is untouched");
});
