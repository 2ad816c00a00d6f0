// The limiter contract, run against every implementation: a sliding window admits exactly
// `max` hits, is exact at its edge, keeps keys apart, and takes refunded hits back, also
// under concurrent takes. Each fixture brings its own storage; the suite only uses the
// Limiter interface.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { Limiter } from "../../src/state/interfaces.js";

export interface LimiterFixture {
  readonly limiter: Limiter;
  /** Closes what is open and removes what the fixture made. */
  close(): Promise<void>;
}

export function limiterContract(name: string, open: () => Promise<LimiterFixture>): void {
  describe(`Limiter contract: ${name}`, () => {
    let fx: LimiterFixture;
    let l: Limiter;
    beforeEach(async () => {
      fx = await open();
      l = fx.limiter;
    });
    afterEach(() => fx.close());

    test("a sliding window admits max hits, then says when the next one fits", async () => {
      const w = { max: 3, perMs: 60_000 };
      for (const t of [0, 10_000, 20_000]) assert.equal((await l.take("k", w, 1_000_000 + t)).ok, true);
      assert.deepEqual(await l.take("k", w, 1_030_000), { ok: false, retryAfterMs: 30_000 });
      assert.equal((await l.take("k", w, 1_060_001)).ok, true); // the first hit left the window
      assert.equal((await l.take("other", w, 1_030_000)).ok, true); // keys are separate
    });

    test("exact at the window's edge: a hit counts until perMs after it, not one ms longer", async () => {
      const w = { max: 1, perMs: 1000 };
      assert.equal((await l.take("edge", w, 5000)).ok, true);
      assert.deepEqual(await l.take("edge", w, 5999), { ok: false, retryAfterMs: 1 });
      assert.equal((await l.take("edge", w, 6000)).ok, true);
      assert.equal((await l.take("edge", w, 6999)).ok, false);
    });

    test("a refunded hit frees its place", async () => {
      const w = { max: 1, perMs: 1000 };
      const a = await l.take("k", w, 5);
      assert.ok(a.ok);
      assert.equal((await l.take("k", w, 6)).ok, false);
      await l.refund("k", a.hit);
      assert.equal((await l.take("k", w, 7)).ok, true);
      await l.refund("nobody", 1); // an unknown key or hit is harmless
    });

    test("hits in the same millisecond stay distinct for refunds", async () => {
      const w = { max: 2, perMs: 1000 };
      const a = await l.take("k", w, 5);
      const b = await l.take("k", w, 5);
      assert.ok(a.ok && b.ok && a.hit !== b.hit);
      await l.refund("k", b.hit);
      assert.equal((await l.take("k", w, 5)).ok, true);
      assert.equal((await l.take("k", w, 5)).ok, false);
    });

    test("50 concurrent takes against a window of 10: exactly 10 admitted; refunds give places back", async () => {
      const w = { max: 10, perMs: 60_000 };
      const now = 2_000_000;
      const results = await Promise.all(Array.from({ length: 50 }, () => l.take("burst", w, now)));
      const admitted = results.filter((a) => a.ok);
      assert.equal(admitted.length, 10);
      for (const a of results) if (!a.ok) assert.ok(a.retryAfterMs > 0 && a.retryAfterMs <= 60_000);
      await Promise.all(admitted.slice(0, 3).map((a) => l.refund("burst", (a as { hit: number }).hit)));
      const again = await Promise.all(Array.from({ length: 10 }, () => l.take("burst", w, now + 1)));
      assert.equal(again.filter((a) => a.ok).length, 3);
    });
  });
}
