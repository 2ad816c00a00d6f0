import assert from "node:assert/strict";
import { test } from "node:test";
import { SlidingLogLimiter } from "../../src/limits/sliding-log.js";
import { describeWindow } from "../../src/pipeline/stages/limits.js";

test("a sliding window admits max hits, then says when the next one fits", () => {
  const l = new SlidingLogLimiter();
  const w = { max: 3, perMs: 60_000 };
  for (const t of [0, 10_000, 20_000]) assert.equal(l.take("k", w, 1_000_000 + t).ok, true);
  const refused = l.take("k", w, 1_030_000);
  assert.deepEqual(refused, { ok: false, retryAfterMs: 30_000 });
  assert.equal(l.take("k", w, 1_060_001).ok, true); // the first hit left the window
  assert.equal(l.take("other", w, 1_030_000).ok, true); // keys are separate
});

test("a refunded hit frees its place", () => {
  const l = new SlidingLogLimiter();
  const w = { max: 1, perMs: 1000 };
  const a = l.take("k", w, 5);
  assert.ok(a.ok);
  assert.equal(l.take("k", w, 6).ok, false);
  l.refund("k", a.hit);
  assert.equal(l.take("k", w, 7).ok, true);
});

test("hits in the same millisecond stay distinct for refunds", () => {
  const l = new SlidingLogLimiter();
  const w = { max: 2, perMs: 1000 };
  const a = l.take("k", w, 5);
  const b = l.take("k", w, 5);
  assert.ok(a.ok && b.ok && a.hit !== b.hit);
  l.refund("k", b.hit);
  assert.equal(l.take("k", w, 5).ok, true);
  assert.equal(l.take("k", w, 5).ok, false);
});

test("windows are described the way the 429 message states them", () => {
  assert.equal(describeWindow({ max: 1, perMs: 60_000 }), "1 minute");
  assert.equal(describeWindow({ max: 1, perMs: 300_000 }), "5 minutes");
  assert.equal(describeWindow({ max: 1, perMs: 30_000 }), "30 seconds");
  assert.equal(describeWindow({ max: 1, perMs: 3_600_000 }), "1 hour");
});
