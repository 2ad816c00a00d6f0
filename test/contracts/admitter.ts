// The admitter contract, run against every implementation: a request's rate windows and
// its pre-deduction are taken together, all or nothing. A full window refuses with nothing
// reserved and no hit left in the windows before it; a money refusal (used up, does not
// fit) throws the accounts' refusal with no hit left taken; concurrent admissions never
// exceed a window or a quota. Hits and reservations go back through the ordinary Limiter
// and Accounts. Concurrency slots and tokens-per-minute holds are taken in the same step
// and given back by Admitter.finish, which also settles the money and counts the tokens
// really used in place of the estimates.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { Token, User } from "../../src/runtime/types.js";
import { outcome } from "./accounts.js";
import type {
  Accounts, AdmitRequest, Admitter, BudgetWindow, Charge, Limiter, SlotTake, TokenBudgetTake, WindowTake,
} from "../../src/state/interfaces.js";

export interface AdmitterFixture {
  readonly admitter: Admitter;
  /** The accounts and limiter the admitter works over. */
  readonly accounts: Accounts;
  readonly limiter: Limiter;
  close(): Promise<void>;
}

const user = (creditNano: bigint): User => ({ name: "alice", creditNano, groups: new Set(["default"]), active: true });
const token = (quotaNano?: bigint): Token => ({ name: "t1", keyHash: "0".repeat(64), user: "alice", group: "default", quotaNano, active: true });
const total = (max: number): WindowTake => ({ key: "t1\0total", window: { max, perMs: 60_000 } });
const rate = (max: number): WindowTake => ({ key: "t1\0rate", window: { max, perMs: 60_000 } });

export function admitterContract(name: string, open: () => Promise<AdmitterFixture>): void {
  describe(`Admitter contract: ${name}`, () => {
    let fx: AdmitterFixture;
    let seq = 0;
    beforeEach(async () => {
      fx = await open();
    });
    afterEach(() => fx.close());

    const request = (amountNano: bigint, windows: readonly WindowTake[], now: number, t = token(), u = user(10_000n)): AdmitRequest =>
      ({ requestId: `r${seq++}`, token: t, user: u, amountNano, windows, now });
    /** A request holding only slots and token budgets (no money, no windows). */
    const limited = (now: number, slots: readonly SlotTake[], budgets: readonly TokenBudgetTake[], windows: readonly WindowTake[] = []): AdmitRequest =>
      ({ ...request(0n, windows, now), slots, budgets });
    const chargeOf = (requestId: string, costNano = 0n): Charge => ({ requestId, token: "t1", user: "alice", costNano });
    /** How many more hits `w` admits at `now` (taking them). */
    const room = async (w: WindowTake, now: number): Promise<number> => {
      let n = 0;
      while ((await fx.limiter.take(w.key, w.window, now)).ok) n++;
      return n;
    };

    test("takes a hit in every window and reserves", async () => {
      const u = user(1000n);
      const admitted = await fx.admitter.admit(request(600n, [total(10), rate(10)], 5000, token(), u));
      assert.ok(admitted.ok);
      assert.equal(admitted.hits.length, 2);
      const { token: tokenName, user: userName, amountNano } = admitted.reservation;
      assert.deepEqual({ tokenName, userName, amountNano }, { tokenName: "t1", userName: "alice", amountNano: 600n });
      assert.equal(await fx.accounts.reservedByUser("alice"), 600n);
      assert.equal(fx.accounts.reservationsHeld, 1);
      assert.equal(await room(total(10), 5001), 9);
      assert.equal(await room(rate(10), 5001), 9);
    });

    test("with no windows it is the reservation alone", async () => {
      const admitted = await fx.admitter.admit(request(5n, [], 5000));
      assert.ok(admitted.ok);
      assert.deepEqual(admitted.hits, []);
      assert.equal(await fx.accounts.reservedByUser("alice"), 5n);
    });

    test("a full window refuses, naming it, with nothing reserved and no hit left taken", async () => {
      assert.ok((await fx.admitter.admit(request(100n, [total(10), rate(1)], 5000))).ok);
      assert.deepEqual(await fx.admitter.admit(request(100n, [total(10), rate(1)], 5001)), { ok: false, refused: "window", index: 1, retryAfterMs: 59_999 });
      assert.equal(await fx.accounts.reservedByUser("alice"), 100n, "only the first request's reservation");
      assert.equal(await room(total(10), 5002), 9, "the refused request's total hit was taken back");
    });

    test("a money refusal throws the accounts' refusal with no hit left taken", async () => {
      const u = user(1000n);
      assert.equal(await outcome(fx.admitter.admit(request(1001n, [total(10), rate(10)], 5000, token(), u))), "402 pre_deduction_failed");
      assert.equal(await outcome(fx.admitter.admit(request(11n, [total(10)], 5000, token(10n), u))), "402 pre_deduction_failed");
      assert.equal(await outcome(fx.admitter.admit(request(1n, [total(10)], 5000, token(), user(0n)))), "402 insufficient_quota");
      assert.equal(await outcome(fx.admitter.admit(request(1n, [total(10)], 5000, token(0n), u))), "401 token_quota_exhausted");
      assert.equal(await fx.accounts.reservedByUser("alice"), 0n);
      assert.equal(fx.accounts.reservationsHeld, 0);
      assert.equal(await room(total(10), 5001), 10);
      assert.equal(await room(rate(10), 5001), 10);
    });

    test("hits and the reservation go back through the limiter and the accounts", async () => {
      const admitted = await fx.admitter.admit(request(300n, [rate(1)], 5000));
      assert.ok(admitted.ok);
      await fx.limiter.refund(rate(1).key, admitted.hits[0]);
      await fx.accounts.release(admitted.reservation);
      assert.equal(await fx.accounts.reservedByUser("alice"), 0n);
      assert.ok((await fx.admitter.admit(request(300n, [rate(1)], 5001))).ok, "the window has room again");
    });

    test("concurrent admissions exceed neither a window nor a quota", async () => {
      const u = user(1_000_000n);
      const byWindow = await Promise.all(Array.from({ length: 30 }, (_, i) => fx.admitter.admit(request(1n, [total(1000), rate(7)], 9000 + i, token(), u))));
      assert.equal(byWindow.filter((a) => a.ok).length, 7);
      const t = { ...token(50n), name: "t2" };
      const byMoney = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        outcome(fx.admitter.admit({ ...request(10n, [{ key: "t2\0total", window: { max: 1000, perMs: 60_000 } }], 9100 + i, t, u) }))));
      assert.equal(byMoney.filter((r) => r === "ok").length, 5);
      assert.equal(await room({ key: "t2\0total", window: { max: 1000, perMs: 60_000 } }, 9200), 995, "refused requests left no hit");
    });

    const slot = (max: number): SlotTake => ({ key: "t1\0inflight", max });
    const tpm = (max: number, tokens: number, key = "t1\0tpm"): TokenBudgetTake => ({ key, max, tokens });

    test("concurrency: slots are held until finish; a full limit refuses with nothing taken", async () => {
      const first = await fx.admitter.admit(limited(5000, [slot(2)], []));
      const second = await fx.admitter.admit(limited(5000, [slot(2)], []));
      assert.ok(first.ok && second.ok);
      const third = await fx.admitter.admit({ ...limited(5000, [slot(2)], [], [total(10)]), amountNano: 50n });
      assert.deepEqual(third, { ok: false, refused: "slots", index: 0, retryAfterMs: 1000 });
      assert.equal(await room(total(10), 5001), 10, "the refused request's window hit was given back");
      assert.equal(await fx.accounts.reservedByUser("alice"), 0n);
      await fx.admitter.finish({ reservation: first.reservation, holds: first.holds, charge: chargeOf(first.reservation.id), usedTokens: 0, now: 5002 });
      assert.ok((await fx.admitter.admit(limited(5003, [slot(2)], []))).ok, "a finished request's slot is free again");
      assert.equal((await fx.admitter.admit(limited(5003, [slot(2)], []))).ok, false);
    });

    test("concurrency under Promise.all: exactly max admitted; all free again after finishing", async () => {
      const all = await Promise.all(Array.from({ length: 20 }, (_, i) => fx.admitter.admit(limited(6000 + i, [slot(5)], []))));
      const admitted = all.filter((a) => a.ok);
      assert.equal(admitted.length, 5);
      await Promise.all(admitted.map((a) => fx.admitter.finish({
        reservation: a.reservation, holds: a.holds, charge: chargeOf(a.reservation.id), usedTokens: 0, now: 6100,
      })));
      const again = await Promise.all(Array.from({ length: 20 }, (_, i) => fx.admitter.admit(limited(6200 + i, [slot(5)], []))));
      assert.equal(again.filter((a) => a.ok).length, 5);
    });

    test("tokens per minute: the estimate is held; finish counts the real usage instead, for a minute", async () => {
      const t0 = 1_000_000;
      const a = await fx.admitter.admit(limited(t0, [], [tpm(1000, 700)]));
      assert.ok(a.ok);
      // 700 held: 400 more does not fit while it is in flight (no usage to wait for: 1 s).
      assert.deepEqual(await fx.admitter.admit(limited(t0 + 100, [], [tpm(1000, 400)])), { ok: false, refused: "tokens", index: 0, retryAfterMs: 1000 });
      // It used 100 tokens (finished at t0 + 500): 900 fit beside them, 901 do not.
      await fx.admitter.finish({ reservation: a.reservation, holds: a.holds, charge: chargeOf(a.reservation.id), usedTokens: 100, now: t0 + 500 });
      assert.deepEqual(await fx.admitter.admit(limited(t0 + 1000, [], [tpm(1000, 901)])),
        { ok: false, refused: "tokens", index: 0, retryAfterMs: 59_000 }, "the 100 (counted in second t0) leave at t0 + 60 s");
      const b = await fx.admitter.admit(limited(t0 + 1000, [], [tpm(1000, 900)]));
      assert.ok(b.ok);
      await fx.admitter.finish({ reservation: b.reservation, holds: b.holds, charge: chargeOf(b.reservation.id), usedTokens: 0, now: t0 + 1000 });
      // A minute after the usage's second, the whole budget is free.
      assert.ok((await fx.admitter.admit(limited(t0 + 60_000, [], [tpm(1000, 1000)]))).ok);
    });

    test("tokens per minute: Retry-After is when enough of the oldest usage leaves the window", async () => {
      const t0 = 2_000_000;
      for (const [at, used] of [[t0, 300], [t0 + 10_000, 300], [t0 + 20_000, 300]] as const) {
        const a = await fx.admitter.admit(limited(at, [], [tpm(1000, 300)]));
        assert.ok(a.ok, `admitted at ${at}`);
        await fx.admitter.finish({ reservation: a.reservation, holds: a.holds, charge: chargeOf(a.reservation.id), usedTokens: used, now: at });
      }
      // 900 used: 500 needs 400 freed, the first two seconds' usage: t0 + 10 s + 60 s.
      const refused = await fx.admitter.admit(limited(t0 + 30_000, [], [tpm(1000, 500)]));
      assert.deepEqual(refused, { ok: false, refused: "tokens", index: 0, retryAfterMs: 40_000 });
      assert.ok((await fx.admitter.admit(limited(t0 + 70_000, [], [tpm(1000, 500)]))).ok);
    });

    test("a calendar budget in money: holds the pre-deduction, counts the charge, frees all at the period's end", async () => {
      const start = 10_000_000;
      const end = start + 86_400_000;
      const day: BudgetWindow = { measure: "money", bucketMs: end - start, buckets: 1, periodEndMs: end };
      const budget = (amount: number): TokenBudgetTake => ({ key: `t1\0budget\0money/day@${start}`, max: 1000, tokens: amount, window: day });
      const a = await fx.admitter.admit(limited(start + 5, [], [budget(900)]));
      assert.ok(a.ok);
      assert.deepEqual(await fx.admitter.admit(limited(start + 6, [], [budget(200)])), { ok: false, refused: "tokens", index: 0, retryAfterMs: 1000 },
        "900 held: 200 more waits for the hold (an estimate), not for the period");
      // It was charged 700 (nano-units), not the 900 held, nor the tokens it used.
      await fx.admitter.finish({ reservation: a.reservation, holds: a.holds, charge: chargeOf(a.reservation.id, 700n), usedTokens: 5, now: start + 10 });
      const b = await fx.admitter.admit(limited(start + 20, [], [budget(300)]));
      assert.ok(b.ok, "700 charged + 300 = the budget");
      await fx.admitter.finish({ reservation: b.reservation, holds: b.holds, charge: chargeOf(b.reservation.id, 300n), usedTokens: 5, now: start + 30 });
      assert.deepEqual(await fx.admitter.admit(limited(start + 1000, [], [budget(1)])),
        { ok: false, refused: "tokens", index: 0, retryAfterMs: end - start - 1000 }, "used up until the period ends");
      // The next period is another key: it starts empty.
      const next: TokenBudgetTake = { key: `t1\0budget\0money/day@${end}`, max: 1000, tokens: 1000, window: { ...day, periodEndMs: end + 86_400_000 } };
      assert.ok((await fx.admitter.admit(limited(end, [], [next]))).ok);
    });

    test("a rolling budget in tokens: usage leaves bucket by bucket, never before its window has passed", async () => {
      const hour = 3_600_000;
      const window: BudgetWindow = { measure: "tokens", bucketMs: hour / 60, buckets: 61 };
      const budget = (tokens: number): TokenBudgetTake => ({ key: "t1\0budget\0tokens/1h~", max: 100, tokens, window });
      const t0 = 60 * hour; // a bucket's start
      const a = await fx.admitter.admit(limited(t0, [], [budget(80)]));
      assert.ok(a.ok);
      await fx.admitter.finish({ reservation: a.reservation, holds: a.holds, charge: chargeOf(a.reservation.id, 999n), usedTokens: 60, now: t0 });
      const refused = await fx.admitter.admit(limited(t0 + 30 * 60_000, [], [budget(50)]));
      assert.deepEqual(refused, { ok: false, refused: "tokens", index: 0, retryAfterMs: 61 * 60_000 - 30 * 60_000 },
        "the 60 counted at t0 leave 61 buckets (1 h 1 min) later");
      assert.equal((await fx.admitter.admit(limited(t0 + hour - 1, [], [budget(50)]))).ok, false, "not before the hour has passed");
      assert.ok((await fx.admitter.admit(limited(t0 + hour + 60_000, [], [budget(100)]))).ok);
    });

    test("a budget shared by two tokens' requests (a group) counts both", async () => {
      const group = (tokens: number) => tpm(1000, tokens, "group\0video\0tpm");
      const a = await fx.admitter.admit(limited(3_000_000, [], [tpm(10_000, 600), group(600)]));
      assert.ok(a.ok);
      const other = { ...limited(3_000_000, [], [{ key: "t2\0tpm", max: 10_000, tokens: 600 }, group(600)]), token: { ...token(), name: "t2" } };
      const b = await fx.admitter.admit(other);
      assert.deepEqual(b, { ok: false, refused: "tokens", index: 1, retryAfterMs: 1000 });
      assert.ok((await fx.admitter.admit(limited(3_000_000, [], [{ key: "t2\0tpm", max: 600, tokens: 600 }]))).ok,
        "the refused request's hold in its own budget was given back");
    });

    test("all or nothing: a refusal by any limit, or by the money, leaves no slot, hold or hit taken", async () => {
      const now = 4_000_000;
      // Refused by the budget: the slot and the window hit go back.
      assert.equal((await fx.admitter.admit(limited(now, [slot(1)], [tpm(100, 101)], [total(1)]))).ok, false);
      // Refused by the money: the slot, the hold and the hit go back.
      const tooDear = { ...limited(now, [slot(1)], [tpm(100, 100)], [total(1)]), amountNano: 1n, user: user(0n) };
      assert.equal(await outcome(fx.admitter.admit(tooDear)), "402 insufficient_quota");
      // Refused by the window (the one hit taken here): the slot and the hold go back.
      assert.ok((await fx.admitter.admit(limited(now, [], [], [rate(1)]))).ok);
      assert.equal((await fx.admitter.admit(limited(now, [slot(1)], [tpm(100, 100)], [rate(1)]))).ok, false);
      const all = await fx.admitter.admit(limited(now, [slot(1)], [tpm(100, 100)], [total(1)]));
      assert.ok(all.ok, "the slot, the whole budget and the window are all free");
    });

    test("finish settles the money and frees the holds together", async () => {
      const u = user(1000n);
      const a = await fx.admitter.admit({ ...request(400n, [], 5_000_000, token(), u), slots: [slot(1)], budgets: [tpm(1000, 800)] });
      assert.ok(a.ok);
      assert.equal(await fx.accounts.reservedByUser("alice"), 400n);
      await fx.admitter.finish({ reservation: a.reservation, holds: a.holds, charge: chargeOf(a.reservation.id, 150n), usedTokens: 50, now: 5_000_000 });
      assert.equal(await fx.accounts.reservedByUser("alice"), 0n);
      assert.equal(await fx.accounts.spentByUser("alice"), 150n);
      assert.equal(fx.accounts.reservationsHeld, 0);
      assert.ok((await fx.admitter.admit(limited(5_000_001, [slot(1)], [tpm(1000, 950)]))).ok);
    });
  });
}
