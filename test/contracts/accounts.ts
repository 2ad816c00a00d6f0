// The accounts contract, run against every implementation: reservations are atomic
// against the token's quota and the user's balance (never overspent, even by concurrent
// requests), settling is once per request id, releasing twice is harmless, refunds lower
// spend exactly once, and spend reads back. Each fixture brings its own storage; the
// suite only uses the Accounts and UsageLog interfaces.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { Token, User } from "../../src/runtime/types.js";
import type { Accounts, Charge, Reservation, UsageLog } from "../../src/state/interfaces.js";
import { entry } from "../helpers/usage-entry.js";

export interface AccountsFixture {
  readonly accounts: Accounts;
  /** The usage log the accounts were opened beside. */
  readonly usageLog: UsageLog;
  /** Accounts opened afresh on the same storage (what a restarted gateway sees); absent
   * when the accounts do not outlive their object and their log. */
  readonly reopen?: () => Promise<Accounts>;
  /** Closes what is open and removes what the fixture made. */
  close(): Promise<void>;
}

const user = (creditNano: bigint, name = "alice"): User => ({ name, creditNano, groups: new Set(["default"]), active: true });
const token = (quotaNano?: bigint, name = "t1", owner = "alice"): Token =>
  ({ name, keyHash: "0".repeat(64), user: owner, group: "default", quotaNano, active: true });

/** What a refusal says: "status code", or "ok". */
export async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return `${err.status} ${err.code}`;
  }
}

/** @param reopens the fixture's accounts outlive their object (`reopen`): the restart test runs */
export function accountsContract(name: string, open: () => Promise<AccountsFixture>, { reopens = false } = {}): void {
  describe(`Accounts contract: ${name}`, () => {
    let fx: AccountsFixture;
    let accounts: Accounts;
    let seq = 0;
    beforeEach(async () => {
      fx = await open();
      accounts = fx.accounts;
    });
    afterEach(() => fx.close());

    const charge = (costNano: bigint, requestId = `c${seq++}`, t = "t1", u = "alice"): Charge => ({ requestId, token: t, user: u, costNano });
    /** Settles as the settle stage does: the accounts and the usage log together. */
    const settle = (r: Reservation | undefined, c: Charge) =>
      Promise.all([accounts.settle(r, c), fx.usageLog.append(entry({ requestId: c.requestId, token: c.token, user: c.user, costNano: c.costNano }))]);

    test("reservations count against the balance until settled or released", async () => {
      const u = user(100n);
      const a = await accounts.reserve("a", token(), u, 60n);
      assert.equal(accounts.reservationsHeld, 1);
      assert.equal(await accounts.reservedByUser("alice"), 60n);
      assert.equal(await outcome(accounts.reserve("b", token(), u, 60n)), "402 pre_deduction_failed");
      await settle(a, charge(10n, "a"));
      assert.equal(await accounts.spentByUser("alice"), 10n);
      assert.equal(await accounts.spentByToken("t1"), 10n);
      assert.equal(await accounts.reservedByUser("alice"), 0n);
      const b = await accounts.reserve("b", token(), u, 90n); // 100 - 10 spent = 90 left
      await accounts.release(b);
      await accounts.release(b); // twice is harmless
      assert.equal(await accounts.reservedByUser("alice"), 0n);
      assert.equal(accounts.reservationsHeld, 0);
      assert.equal(await outcome(accounts.reserve("c", token(), u, 90n)), "ok", "released money is offered again");
    });

    test("the refusal states the remaining balance and the required pre-deduction", async () => {
      await assert.rejects(accounts.reserve("r", token(), user(1_000_000n), 2_500_000n),
        /remaining balance is 0\.001\b.*pre-deduction of 0\.0025\b/);
    });

    test("token quota: used up is 401, not enough for the estimate is 402", async () => {
      const t = token(50n);
      await settle(await accounts.reserve("a", t, user(1000n), 10n), charge(30n, "a"));
      assert.equal(await outcome(accounts.reserve("b", t, user(1000n), 30n)), "402 pre_deduction_failed");
      await settle(undefined, charge(20n));
      assert.equal(await outcome(accounts.reserve("c", t, user(1000n), 1n)), "401 token_quota_exhausted");
      assert.equal(await outcome(accounts.checkNotExhausted(t, user(1000n))), "401 token_quota_exhausted");
    });

    test("a user whose balance is used up gets insufficient_quota (402)", async () => {
      await settle(undefined, charge(100n));
      assert.equal(await outcome(accounts.checkNotExhausted(token(), user(100n))), "402 insufficient_quota");
      assert.equal(await outcome(accounts.reserve("r", token(), user(100n), 1n)), "402 insufficient_quota");
      assert.equal(await outcome(accounts.checkNotExhausted(token(), user(101n))), "ok");
    });

    test("50 concurrent reserves against a quota that fits 10: exactly 10 succeed", async () => {
      const t = token(100n);
      const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => accounts.reserve(`q${i}`, t, user(10n ** 9n), 10n)));
      const held = results.filter((r) => r.status === "fulfilled");
      assert.equal(held.length, 10);
      assert.equal(accounts.reservationsHeld, 10);
      for (const r of results) if (r.status === "rejected") assert.equal((r.reason as GatewayError).status, 402);
      await Promise.all(held.map((r) => accounts.release((r as PromiseFulfilledResult<Reservation>).value)));
      assert.equal(accounts.reservationsHeld, 0);
    });

    test("many concurrent reserve-and-settle rounds against a small balance never overspend", async () => {
      const u = user(1000n);
      let admitted = 0;
      await Promise.all(Array.from({ length: 200 }, async (_, i) => {
        let r: Reservation;
        try {
          r = await accounts.reserve(`m${i}`, token(), u, 30n);
        } catch {
          return;
        }
        admitted++;
        await new Promise((res) => setTimeout(res, i % 3));
        await settle(r, charge(30n, `m${i}`)); // the real cost equals the estimate: worst case
      }));
      assert.equal(admitted, 33);
      assert.equal(await accounts.spentByUser("alice"), 990n);
      assert.equal(await accounts.reservedByUser("alice"), 0n);
    });

    test("settling a request twice charges once", async () => {
      const r = await accounts.reserve("same", token(), user(1000n), 50n);
      await settle(r, charge(7n, "same"));
      await settle(r, charge(7n, "same"));
      await Promise.all([settle(undefined, charge(5n, "other")), settle(undefined, charge(5n, "other"))]);
      assert.equal(await accounts.spentByToken("t1"), 12n);
      assert.equal(await accounts.spentByUser("alice"), 12n);
      assert.equal(await accounts.reservedByUser("alice"), 0n);
      assert.equal(accounts.reservationsHeld, 0);
    });

    test("a charge without a reservation, or of nothing, settles too", async () => {
      await settle(undefined, charge(3n));
      const r = await accounts.reserve("z", token(), user(1000n), 40n);
      await settle(r, charge(0n, "z"));
      assert.equal(await accounts.spentByUser("alice"), 3n);
      assert.equal(await accounts.reservedByUser("alice"), 0n);
    });

    test("tokens and users are accounted separately", async () => {
      await settle(undefined, charge(4n, "x1", "t1", "alice"));
      await settle(undefined, charge(6n, "x2", "t2", "alice"));
      await settle(undefined, charge(9n, "x3", "t3", "bob"));
      assert.equal(await accounts.spentByToken("t1"), 4n);
      assert.equal(await accounts.spentByToken("t2"), 6n);
      assert.equal(await accounts.spentByUser("alice"), 10n);
      assert.equal(await accounts.spentByUser("bob"), 9n);
      const r = await accounts.reserve("y", token(undefined, "t3", "bob"), user(100n, "bob"), 11n);
      assert.equal(await accounts.reservedByUser("bob"), 11n);
      assert.equal(await accounts.reservedByUser("alice"), 0n);
      await accounts.release(r);
    });

    test("a refund the usage log reports lowers the spend exactly once", async () => {
      await settle(undefined, charge(800n, "job"));
      await settle(undefined, charge(5n, "kept"));
      const results = await Promise.all([fx.usageLog.refund("job", 10), fx.usageLog.refund("job", 11)]);
      for (const result of results) {
        if (result.kind !== "refunded") continue;
        await accounts.refund({ requestId: "job", token: result.token, user: result.user, costNano: result.costNano });
        await accounts.refund({ requestId: "job", token: result.token, user: result.user, costNano: result.costNano }); // repeated: no effect
      }
      assert.equal(results.filter((r) => r.kind === "refunded").length, 1);
      assert.equal(await accounts.spentByToken("t1"), 5n);
      assert.equal(await accounts.spentByUser("alice"), 5n);
      assert.equal(await outcome(accounts.reserve("n", token(), user(805n), 800n)), "ok", "the refunded money is offered again");
    });

    if (reopens) test("spend reads back from the usage log when accounts start", async () => {
      assert.ok(fx.reopen, "a fixture that reopens has reopen()");
      await settle(undefined, charge(21n));
      await settle(undefined, charge(4n, "x", "t2", "alice"));
      await fx.usageLog.flush();
      const again = await fx.reopen();
      try {
        assert.equal(await again.spentByToken("t1"), 21n);
        assert.equal(await again.spentByUser("alice"), 25n);
        assert.equal(await outcome(again.reserve("r", token(), user(25n), 1n)), "402 insufficient_quota");
      } finally {
        await again.close();
      }
    });
  });
}
