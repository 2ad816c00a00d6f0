// The Redis state (accounts, limiter, keyed store) against the machine's real Redis: the
// behaviours every implementation shares, then what only a shared server shows: two
// clients (standing for two gateway processes) racing for one quota and one rate window,
// reservations of a crashed process expiring, exact money near 2^63, counters rebuilt
// from the usage log, an unreachable Redis at start, and one that goes away mid-run.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import type { Redis } from "ioredis";
import type { Token, User } from "../../src/runtime/types.js";
import type { SpendTotals, TokenBudgetTake, UsageLog } from "../../src/state/interfaces.js";
import { entry } from "../helpers/usage-entry.js";
import { openRedisSharedState, openRedisState, splitKeyPrefix, type RedisState } from "../../src/state/redis.js";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { createMemoryStore } from "../../src/state/memory.js";
import { StoreUsageLog } from "../../src/state/store-usage-log.js";
import { deleteKeys, keysUnder, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { accountsContract } from "../contracts/accounts.js";
import { admitterContract } from "../contracts/admitter.js";
import { keyedStoreContract } from "../contracts/keyed-store.js";
import { limiterContract } from "../contracts/limiter.js";

const filePrefix = testKeyPrefix("redis-state");
let admin: Redis;
const opened: RedisState[] = [];
let tests = 0;

before(() => {
  admin = testRedisClient();
});
after(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await deleteKeys(admin, filePrefix);
  await admin.quit();
});

/** A usage log holding only settled totals: what the Redis accounts read from it. */
function fakeUsageLog(tokens: Record<string, bigint> = {}, users: Record<string, bigint> = {}, readMs = 0): UsageLog & { totalsRead: number } {
  const notUsed = (): never => {
    throw new Error("not used by the Redis accounts");
  };
  return {
    totalsRead: 0,
    async spendTotals(): Promise<SpendTotals> {
      this.totalsRead++;
      if (readMs > 0) await new Promise((r) => setTimeout(r, readMs)); // a big log takes a while
      return { tokens: new Map(Object.entries(tokens)), users: new Map(Object.entries(users)) };
    },
    append: notUsed, refund: notUsed, logs: notUsed, spend: notUsed, spentByToken: notUsed, spentByUser: notUsed, usageBuckets: notUsed, traffic: notUsed, keyHealth: notUsed, flush: notUsed,
    close: async () => {},
  };
}

/** A fresh prefix under this file's, so each test starts from an empty Redis. */
function freshPrefix(): string {
  return `${filePrefix}${++tests}:`;
}

async function open(prefix: string, over: Partial<Parameters<typeof openRedisState>[1]> = {}, url = REDIS_URL): Promise<RedisState> {
  const state = await openRedisState(url, { keyPrefix: prefix, usageLog: fakeUsageLog(), upstreamTimeoutMs: 30_000, ...over });
  opened.push(state);
  return state;
}

function token(name: string, quotaNano?: bigint, user = "alice"): Token {
  return { name, keyHash: "", user, group: "default", quotaNano, active: true };
}

function user(name: string, creditNano: bigint): User {
  return { name, creditNano, groups: new Set(["default"]), active: true };
}

async function rejectsWith(promise: Promise<unknown>, status: number, code: string): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    return err;
  }
  assert.fail(`expected ${status} ${code}, but it resolved`);
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

// The contracts every implementation meets, each fixture on a fresh prefix of this file's.
accountsContract("redis", async () => {
  const prefix = freshPrefix();
  const usageLog = new StoreUsageLog(createMemoryStore());
  const mine: RedisState[] = [];
  const openHere = async (): Promise<RedisState> => {
    const state = await openRedisState(REDIS_URL, { keyPrefix: prefix, usageLog, upstreamTimeoutMs: 30_000 });
    mine.push(state);
    return state;
  };
  return {
    accounts: (await openHere()).accounts,
    usageLog,
    reopen: async () => (await openHere()).accounts, // a restarted gateway: spend lives on in Redis
    close: async () => {
      await Promise.all(mine.map((s) => s.close()));
      await usageLog.close();
      await deleteKeys(admin, prefix);
    },
  };
}, { reopens: true });
limiterContract("redis", async () => {
  const prefix = freshPrefix();
  const state = await openRedisState(REDIS_URL, { keyPrefix: prefix, usageLog: fakeUsageLog(), upstreamTimeoutMs: 30_000 });
  return { limiter: state.limiter, close: async () => {
    await state.close();
    await deleteKeys(admin, prefix);
  } };
});
admitterContract("redis (one script)", async () => {
  const prefix = freshPrefix();
  const state = await openRedisState(REDIS_URL, { keyPrefix: prefix, usageLog: fakeUsageLog(), upstreamTimeoutMs: 30_000 });
  return { admitter: state.admitter, accounts: state.accounts, limiter: state.limiter, close: async () => {
    await state.close();
    await deleteKeys(admin, prefix);
  } };
});
keyedStoreContract("redis", async () => {
  const prefix = freshPrefix();
  const state = await openRedisState(REDIS_URL, { keyPrefix: prefix, usageLog: fakeUsageLog(), upstreamTimeoutMs: 30_000 });
  return { keyed: state.keyed, close: async () => {
    await state.close();
    await deleteKeys(admin, prefix);
  } };
});

describe("Redis accounts", () => {
  test("reserve holds money on the token and the user; settle charges and frees; release frees", async () => {
    const { accounts } = await open(freshPrefix());
    const t = token("t1", 1000n);
    const u = user("alice", 5000n);
    const r = await accounts.reserve("req-1", t, u, 600n);
    assert.deepEqual({ id: r.id, token: r.token, user: r.user, amountNano: r.amountNano }, { id: "req-1", token: "t1", user: "alice", amountNano: 600n });
    assert.equal(accounts.reservationsHeld, 1);
    assert.equal(accounts.reservationsHeld, 1);
    assert.equal(await accounts.reservedByUser("alice"), 600n);
    const short = await rejectsWith(accounts.reserve("req-2", t, u, 401n), 402, "pre_deduction_failed");
    assert.match(short.message, /remaining token quota is 0\.0000004\b.*pre-deduction of 0\.000000401/);
    await accounts.settle(r, { requestId: "req-1", token: "t1", user: "alice", costNano: 250n });
    assert.equal(accounts.reservationsHeld, 0);
    assert.equal(await accounts.reservedByUser("alice"), 0n);
    assert.equal(await accounts.spentByToken("t1"), 250n);
    assert.equal(await accounts.spentByUser("alice"), 250n);
    const r2 = await accounts.reserve("req-2", t, u, 750n);
    await accounts.release(r2);
    await accounts.release(r2); // twice is harmless
    assert.equal(await accounts.reservedByUser("alice"), 0n);
    assert.equal(accounts.reservationsHeld, 0);
    assert.equal(await accounts.spentByToken("t1"), 250n);
  });

  test("settling a request id twice charges once; refund lowers the spend", async () => {
    const { accounts } = await open(freshPrefix());
    const charge = { requestId: "r", token: "t1", user: "alice", costNano: 40n };
    await accounts.settle(undefined, charge);
    await accounts.settle(undefined, charge);
    assert.equal(await accounts.spentByToken("t1"), 40n);
    assert.equal(await accounts.spentByUser("alice"), 40n);
    await accounts.refund(charge);
    assert.equal(await accounts.spentByToken("t1"), 0n);
    assert.equal(await accounts.spentByUser("alice"), 0n);
  });

  test("a used-up quota is 401 and a used-up balance 402, both before any reservation", async () => {
    const { accounts } = await open(freshPrefix());
    await accounts.settle(undefined, { requestId: "a", token: "t1", user: "alice", costNano: 100n });
    await rejectsWith(accounts.checkNotExhausted(token("t1", 100n), user("alice", 1000n)), 401, "token_quota_exhausted");
    await rejectsWith(accounts.reserve("b", token("t1", 100n), user("alice", 1000n), 0n), 401, "token_quota_exhausted");
    await rejectsWith(accounts.checkNotExhausted(token("t1"), user("alice", 100n)), 402, "insufficient_quota");
    await rejectsWith(accounts.reserve("c", token("t1"), user("alice", 100n), 0n), 402, "insufficient_quota");
    await accounts.checkNotExhausted(token("t1"), user("alice", 101n)); // a token without quota: the balance decides
    const short = await rejectsWith(accounts.reserve("d", token("t1"), user("alice", 150n), 51n), 402, "pre_deduction_failed");
    assert.match(short.message, /remaining balance is 0\.00000005\b/);
    assert.equal(accounts.reservationsHeld, 0);
  });

  test("two processes reserving at once never overspend: 200 reserves, a quota that fits 37", async () => {
    const prefix = freshPrefix();
    const [a, b] = [await open(prefix), await open(prefix)];
    const t = token("shared", 37n * 1000n);
    const u = user("alice", 10n ** 12n);
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).accounts.reserve(`q${i}`, t, u, 1000n)),
    );
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    assert.equal(ok.length, 37);
    assert.ok(refused.every((r) => r.reason instanceof GatewayError && r.reason.code === "pre_deduction_failed"));
    assert.equal(a.accounts.reservationsHeld + b.accounts.reservationsHeld, 37);
    assert.equal(await a.accounts.reservedByUser("alice"), 37_000n);
    // Settling them all in parallel from both: spend is exact, nothing stays reserved.
    await Promise.all(ok.map((r, i) => {
      const res = (r as PromiseFulfilledResult<Awaited<ReturnType<typeof a.accounts.reserve>>>).value;
      const by = (i % 2 === 0 ? a : b).accounts;
      return by.settle(res, { requestId: res.id, token: "shared", user: "alice", costNano: 999n });
    }));
    assert.equal(await b.accounts.spentByToken("shared"), 37n * 999n);
    assert.equal(await b.accounts.reservedByUser("alice"), 0n);
  });

  test("a crashed process's reservations expire and are freed (TTL = upstream timeout + margin, here shortened)", async () => {
    const prefix = freshPrefix();
    const crashed = await open(prefix, { reservationTtlMs: 300 });
    const survivor = await open(prefix, { reservationTtlMs: 300 });
    const t = token("t1", 1000n);
    const u = user("alice", 1000n);
    await crashed.accounts.reserve("lost", t, u, 1000n); // never settled: its process "died"
    await rejectsWith(survivor.accounts.reserve("next", t, u, 1n), 402, "pre_deduction_failed");
    await eventually(async () => (await survivor.accounts.reservedByUser("alice")) === 0n, 3000, "the lost reservation to expire");
    const next = await survivor.accounts.reserve("next", t, u, 1000n);
    // The late settle of an expired reservation frees nothing twice.
    await crashed.accounts.release({ id: "lost", token: "t1", user: "alice", amountNano: 1000n });
    assert.equal(await survivor.accounts.reservedByUser("alice"), 1000n);
    await survivor.accounts.release(next);
  });

  test("money is exact near 2^63 nano (limbs of 10^9 in Lua, HINCRBY in int64)", async () => {
    const max = 2n ** 63n - 1n;
    const prefix = freshPrefix();
    const usageLog = fakeUsageLog({ big: max - 10n }, { rich: max - 10n });
    const { accounts } = await open(prefix, { usageLog });
    assert.equal(await accounts.spentByToken("big"), max - 10n);
    const t = token("big", max, "rich");
    const u = user("rich", max);
    await rejectsWith(accounts.reserve("x", t, u, 11n), 402, "pre_deduction_failed");
    const r = await accounts.reserve("y", t, u, 10n);
    const short = await rejectsWith(accounts.reserve("z", t, u, 1n), 402, "pre_deduction_failed");
    assert.match(short.message, /remaining token quota is 0,/);
    await accounts.settle(r, { requestId: "y", token: "big", user: "rich", costNano: 9n });
    assert.equal(await accounts.spentByToken("big"), max - 1n);
    assert.equal(await accounts.spentByUser("rich"), max - 1n);
    await accounts.checkNotExhausted(t, u);
    await accounts.settle(undefined, { requestId: "w", token: "big", user: "rich", costNano: 1n });
    await rejectsWith(accounts.checkNotExhausted(t, u), 401, "token_quota_exhausted");
    // Around 2^53, where a double would round: 2^53 + 1 fits a quota of 2^53 + 1 exactly, one more does not.
    const edge = 2n ** 53n + 1n;
    const t2 = token("edge", edge, "rich2");
    const u2 = user("rich2", max);
    const held = await accounts.reserve("e1", t2, u2, edge - 1n);
    await rejectsWith(accounts.reserve("e2", t2, u2, 2n), 402, "pre_deduction_failed");
    await accounts.reserve("e3", t2, u2, 1n);
    assert.equal(await accounts.reservedByUser("rich2"), edge);
    await accounts.release(held);
  });

  test("an empty Redis is seeded from the usage log once, even when two processes start together", async () => {
    const prefix = freshPrefix();
    const log = fakeUsageLog({ t1: 700n, t2: 5n }, { alice: 705n }, 30);
    const [a, b, ...others] = await Promise.all(Array.from({ length: 5 }, () => open(prefix, { usageLog: log })));
    assert.equal(log.totalsRead, 1);
    assert.equal(await others[2].accounts.spentByToken("t1"), 700n);
    assert.equal(await a.accounts.spentByToken("t1"), 700n);
    assert.equal(await b.accounts.spentByUser("alice"), 705n);
    await rejectsWith(b.accounts.reserve("r", token("t1", 800n), user("alice", 10_000n), 101n), 402, "pre_deduction_failed");
    // Redis loses everything while serving: the next call rebuilds the counters first.
    await deleteKeys(admin, prefix);
    await rejectsWith(a.accounts.reserve("r", token("t1", 800n), user("alice", 10_000n), 101n), 402, "pre_deduction_failed");
    assert.equal(log.totalsRead, 2);
    assert.equal(await b.accounts.spentByToken("t2"), 5n);
  });

  test("a charge settled after Redis lost its counters is counted on top of the rebuilt ones, not lost under them", async () => {
    const prefix = freshPrefix();
    // The ledger as the rebuild reads it: the in-flight request's own entry is not in it yet.
    const log = fakeUsageLog({ t1: 700n }, { alice: 700n });
    const state = await open(prefix, { usageLog: log });
    const t = token("t1", 10_000n);
    const u = user("alice", 10_000n);
    const admitted = await state.admitter.admit({ requestId: "inflight", token: t, user: u, amountNano: 50n, windows: [], now: Date.now() });
    assert.ok(admitted.ok);
    await deleteKeys(admin, prefix); // Redis restarts empty while the request is upstream
    await state.admitter.finish({ reservation: admitted.reservation, holds: admitted.holds,
      charge: { requestId: "inflight", token: "t1", user: "alice", costNano: 40n }, usedTokens: 0, now: Date.now() });
    assert.equal(log.totalsRead, 2, "the settlement had the counters rebuilt first");
    assert.equal(await state.accounts.spentByToken("t1"), 740n);
    assert.equal(await state.accounts.spentByUser("alice"), 740n);
    // The same through Accounts.settle alone.
    const r = await state.accounts.reserve("inflight-2", t, u, 10n);
    await deleteKeys(admin, prefix);
    await state.accounts.settle(r, { requestId: "inflight-2", token: "t1", user: "alice", costNano: 5n });
    assert.equal(await state.accounts.spentByUser("alice"), 705n, "rebuilt from the ledger (700), then this charge");
    assert.equal(state.accounts.reservationsHeld, 0);
  });

  test("reserve is one round trip, settle one, checkNotExhausted one, limiter take one", async () => {
    const prefix = freshPrefix();
    const state = await open(prefix);
    const monitor = await admin.monitor(); // its own connection
    const seen: string[][] = [];
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source !== "lua" && args.some((a) => a.startsWith(prefix))) seen.push(args);
    });
    try {
      let marks = 0;
      /** Waits until MONITOR has reported everything sent so far: a marker echoed after it. */
      const sync = async (): Promise<void> => {
        const mark = `${prefix}mark-${++marks}`;
        await admin.echo(mark);
        await eventually(async () => seen.some((args) => args.includes(mark)), 2000, "MONITOR to catch up");
      };
      const count = async (run: () => Promise<unknown>): Promise<number> => {
        await sync();
        seen.length = 0;
        await run();
        await sync();
        return seen.length - 1; // the marker
      };
      const t = token("t1", 10_000n);
      const u = user("alice", 10_000n);
      assert.equal(await count(() => state.accounts.checkNotExhausted(t, u)), 1);
      let r: Awaited<ReturnType<typeof state.accounts.reserve>> | undefined;
      assert.equal(await count(async () => (r = await state.accounts.reserve("rt", t, u, 500n))), 1);
      assert.equal(await count(() => state.accounts.settle(r, { requestId: "rt", token: "t1", user: "alice", costNano: 100n })), 1);
      assert.equal(await count(() => state.limiter.take("k", { max: 5, perMs: 1000 }, Date.now())), 1);
      const windows = [{ key: "t1\0total", window: { max: 5, perMs: 60_000 } }, { key: "t1\0rate", window: { max: 5, perMs: 1000 } }];
      assert.equal(await count(() => state.admitter.admit({ requestId: "both", token: t, user: u, amountNano: 500n, windows, now: Date.now() })), 1);
      // Admissions (and settlements) started in one event-loop turn share one command, each
      // with its own answer: of 7, the rate window (5, one taken above) admits 4.
      const many = Array.from({ length: 7 }, (_, i) => ({ requestId: `many-${i}`, token: t, user: u, amountNano: 10n, windows, now: Date.now() }));
      let answers: Awaited<ReturnType<typeof state.admitter.admit>>[] = [];
      assert.equal(await count(async () => (answers = await Promise.all(many.map((m) => state.admitter.admit(m))))), 1);
      assert.deepEqual(answers.map((a) => a.ok), [true, true, true, true, false, false, false], "the window held 5; one was taken above");
      const admitted = answers.flatMap((a) => (a.ok ? [a] : []));
      assert.equal(await count(() => Promise.all(admitted.map((a, i) => state.admitter.finish({
        reservation: a.reservation, holds: a.holds, charge: { requestId: `many-${i}`, token: "t1", user: "alice", costNano: 1n }, usedTokens: 0, now: Date.now(),
      })))), 1);
      assert.equal(await state.accounts.reservedByUser("alice"), 500n, "only the first admission above still holds money");
    } finally {
      monitor.disconnect();
    }
  });
});

describe("Redis admission holds", () => {
  test("a crashed process's concurrency slots and token holds expire with its reservations", async () => {
    const { admitter, accounts } = await open(freshPrefix(), { reservationTtlMs: 300 });
    const t = token("t1");
    const u = user("alice", 10_000n);
    const limits = { slots: [{ key: "t1\0concurrent", max: 1 }], budgets: [{ key: "t1\0tpm", max: 100, tokens: 100 }] };
    const admit = (id: string) => admitter.admit({ requestId: id, token: t, user: u, amountNano: 10n, windows: [], now: Date.now(), ...limits });
    assert.ok((await admit("crashed")).ok); // never finished: its process is gone
    const refused = await admit("next");
    assert.equal(refused.ok, false);
    await eventually(async () => (await admit(`later-${Date.now()}`)).ok, 3000, "the slot and the hold to expire");
    assert.equal(await accounts.reservedByUser("alice"), 10n, "only the later request's reservation");
  });
});

describe("Redis limiter", () => {
  test("admits max hits per window, says when the next fits, and slides", async () => {
    const { limiter } = await open(freshPrefix());
    const w = { max: 2, perMs: 1000 };
    const first = await limiter.take("k", w, 10_000);
    assert.equal(first.ok, true);
    assert.equal((await limiter.take("k", w, 10_400)).ok, true);
    assert.deepEqual(await limiter.take("k", w, 10_500), { ok: false, retryAfterMs: 500 });
    assert.equal((await limiter.take("other", w, 10_500)).ok, true); // keys are independent
    assert.equal((await limiter.take("k", w, 11_000)).ok, true); // the first hit left the window
    assert.deepEqual(await limiter.take("k", w, 11_001), { ok: false, retryAfterMs: 399 });
  });

  test("a refunded hit frees its slot, and only its own", async () => {
    const { limiter } = await open(freshPrefix());
    const w = { max: 2, perMs: 60_000 };
    const a = await limiter.take("k", w, 1000);
    const b = await limiter.take("k", w, 1000);
    assert.ok(a.ok && b.ok);
    assert.notEqual(a.hit, b.hit);
    assert.equal((await limiter.take("k", w, 1001)).ok, false);
    await limiter.refund("k", a.hit);
    await limiter.refund("k", a.hit); // twice frees nothing more
    assert.equal((await limiter.take("k", w, 1002)).ok, true);
    assert.equal((await limiter.take("k", w, 1003)).ok, false);
  });

  test("two processes share one window exactly: 60 concurrent takes, max 25", async () => {
    const prefix = freshPrefix();
    const [a, b] = [await open(prefix), await open(prefix)];
    const w = { max: 25, perMs: 60_000 };
    const now = Date.now();
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).limiter.take("shared", w, now)));
    assert.equal(results.filter((r) => r.ok).length, 25);
    assert.ok(results.every((r) => r.ok || r.retryAfterMs === 60_000));
    const hits = results.flatMap((r) => (r.ok ? [r.hit] : []));
    assert.equal(new Set(hits).size, 25);
  });
});

describe("Redis keyed store", () => {
  test("get, set with a TTL, refresh on read, delete", async () => {
    const { keyed } = await open(freshPrefix());
    assert.equal(await keyed.get("a"), undefined);
    await keyed.set("a", "one", 60_000);
    assert.equal(await keyed.get("a"), "one");
    await keyed.set("short", "x", 150);
    await keyed.set("kept", "y", 150);
    await eventually(async () => (await keyed.get("short")) === undefined, 3000, "the short key to expire");
    await keyed.set("kept", "y", 300);
    const until = Date.now() + 600;
    while (Date.now() < until) {
      assert.equal(await keyed.get("kept", { refreshTtlMs: 300 }), "y"); // kept alive by reading it
      await new Promise((r) => setTimeout(r, 50));
    }
    await keyed.delete("a");
    assert.equal(await keyed.get("a"), undefined);
  });

  test("entries lists live keys under a prefix, glob characters taken literally", async () => {
    const prefix = freshPrefix();
    const { keyed } = await open(prefix);
    await keyed.set("job:a", "1", 60_000);
    await keyed.set("job:b", "2", 60_000);
    await keyed.set("jobx", "3", 60_000);
    await keyed.set("j*b:[c]?", "4", 60_000);
    await keyed.set("jab:c1", "5", 60_000);
    const list = async (p: string): Promise<string[]> => {
      const found: string[] = [];
      for await (const [k, v] of keyed.entries(p)) found.push(`${k}=${v}`);
      return found.sort();
    };
    assert.deepEqual(await list("job:"), ["job:a=1", "job:b=2"]);
    assert.deepEqual(await list("j*b:[c]"), ["j*b:[c]?=4"]);
    assert.deepEqual(await list("nothing"), []);
    const many = Array.from({ length: 450 }, (_, i) => keyed.set(`bulk:${i}`, String(i), 60_000));
    await Promise.all(many);
    assert.equal((await list("bulk:")).length, 450);
    // (and the process's lease: redis-leases.ts)
    assert.ok((await keysUnder(admin, prefix)).every((k) => k.startsWith(`${prefix}kv:`) || k.startsWith(`${prefix}acct`) || k === `${prefix}lives`));
  });
});

describe("Redis store URL", () => {
  test("?key_prefix= namespaces every key and is not passed on to Redis", async () => {
    const prefix = freshPrefix();
    assert.deepEqual(splitKeyPrefix(`redis://:pw@127.0.0.1:6379/3?key_prefix=${prefix}&family=4`),
      { url: "redis://:pw@127.0.0.1:6379/3?family=4", keyPrefix: prefix });
    assert.deepEqual(splitKeyPrefix("redis://127.0.0.1:6379/3"), { url: "redis://127.0.0.1:6379/3" });
    assert.throws(() => splitKeyPrefix("redis://127.0.0.1:6379/3?key_prefix="), /key_prefix in the store URL is empty/);
    const url = new URL(REDIS_URL);
    url.searchParams.set("key_prefix", prefix);
    const state = await openRedisSharedState(url.toString(), fakeUsageLog());
    try {
      await state.accounts.reserve("kp", token("t1"), user("alice", 10n), 1n);
      const keys = await keysUnder(admin, prefix);
      assert.ok(keys.some((k) => k.startsWith(`${prefix}acct:t:t1`)), keys.join(", "));
    } finally {
      await state.close();
      await deleteKeys(admin, prefix);
    }
  });
});

describe("Redis availability", () => {
  test("an unreachable Redis at start is a clear error naming redis and the address, within seconds", async () => {
    const port = await freePort();
    const started = Date.now();
    await assert.rejects(
      openRedisState(`redis://127.0.0.1:${port}/0`, { keyPrefix: freshPrefix(), usageLog: fakeUsageLog(), upstreamTimeoutMs: 1000, connectTimeoutMs: 1500 }),
      (err: Error) => {
        assert.match(err.message, new RegExp(`^redis at 127\\.0\\.0\\.1:${port}/0 is unreachable: .*ECONNREFUSED`));
        return true;
      },
    );
    assert.ok(Date.now() - started < 4000, `took ${Date.now() - started} ms`);
  });

  test("the State for store: redis:// merges the ledger's health and closes both", async () => {
    const prefix = freshPrefix();
    let ledgerDown = false;
    let ledgerClosed = false;
    const usageLog: UsageLog = {
      ...fakeUsageLog({ t9: 3n }),
      health: () => ({ degraded: ledgerDown ? ["postgres"] : [] }),
      close: async () => void (ledgerClosed = true),
    };
    const state = await openRedisSharedState(REDIS_URL, usageLog, { keyPrefix: prefix, upstreamTimeoutMs: 1000 });
    assert.equal(state.usageLog, usageLog);
    assert.equal(await state.accounts.spentByToken("t9"), 3n);
    assert.deepEqual(state.health(), { degraded: [] });
    ledgerDown = true;
    assert.deepEqual(state.health(), { degraded: ["postgres"] });
    await state.close();
    assert.equal(ledgerClosed, true);
  });

  const redisServer = spawnSync("redis-server", ["--version"]).status === 0;
  test("a Redis that goes away mid-run: calls reject promptly, health says so, service resumes when it returns",
    async () => {
      assert.ok(redisServer, "redis-server must be on PATH: this test stops a Redis of its own (.ci/run installs it)");
      const port = await freePort();
      let server = await startRedisServer(port);
      try {
        const log = fakeUsageLog({ t1: 100n }, { alice: 100n });
        const state = await open(freshPrefix(), { usageLog: log, commandTimeoutMs: 1000 }, `redis://127.0.0.1:${port}/0`);
        const t = token("t1", 10_000n);
        const u = user("alice", 10_000n);
        await state.accounts.reserve("before", t, u, 10n);
        assert.deepEqual(state.health(), { degraded: [] });

        await stopRedisServer(server);
        await eventually(async () => state.health().degraded.includes("redis"), 3000, "health to report redis degraded");
        const started = Date.now();
        await assert.rejects(state.accounts.reserve("during", t, u, 10n));
        await assert.rejects(state.limiter.take("k", { max: 1, perMs: 1000 }, Date.now()));
        await assert.rejects(state.keyed.get("k"));
        assert.ok(Date.now() - started < 1500, `rejecting took ${Date.now() - started} ms`);

        server = await startRedisServer(port); // comes back empty: counters are rebuilt from the log
        await eventually(async () => state.health().degraded.length === 0, 5000, "the client to reconnect");
        await state.accounts.reserve("after", t, u, 10n);
        assert.equal(await state.accounts.spentByToken("t1"), 100n);
        assert.equal(log.totalsRead, 2);
      } finally {
        await stopRedisServer(server);
      }
    });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A throwaway redis-server without persistence, ready to answer. */
async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const probe = testRedisClient(`redis://127.0.0.1:${port}/0`);
  probe.on("error", () => {});
  try {
    await eventually(async () => (await probe.ping().catch(() => "")) === "PONG", 5000, `redis-server on port ${port}`);
  } finally {
    probe.disconnect();
  }
  return child;
}

async function stopRedisServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("Redis budgets", () => {
  test("a new budget counter is seeded from the usage log once, even by two processes admitting together", async () => {
    const prefix = freshPrefix();
    const store = createMemoryStore();
    const start = Date.UTC(2026, 10, 1);
    const end = Date.UTC(2026, 11, 1);
    for (let i = 0; i < 3; i++) {
      await store.record(entry({ requestId: `old${i}`, time: start + i * 1000, token: "t1", costNano: 200n }));
    }
    await store.record(entry({ requestId: "before", time: start - 1, token: "t1", costNano: 5000n }));
    const usageLog = new StoreUsageLog(store);
    const [a, b] = await Promise.all([open(prefix, { usageLog }), open(prefix, { usageLog })]);
    const month: TokenBudgetTake = {
      key: `t1\0budget\0money/month@${start}`, max: 1000, tokens: 300,
      window: { measure: "money", bucketMs: end - start, buckets: 1, periodEndMs: end, seed: { subject: { kind: "token", name: "t1" }, sinceMs: start } },
    };
    const request = (id: string, tokens: number) => ({
      requestId: id, token: token("t1"), user: user("alice", 10n ** 12n), amountNano: 0n, windows: [], budgets: [{ ...month, tokens }], now: start + 10_000,
    });
    // 600 used this month (the entry before it does not count): 300 fit, once, across both processes.
    const both = await Promise.all([a.admitter.admit(request("x", 300)), b.admitter.admit(request("y", 300))]);
    assert.deepEqual(both.map((r) => r.ok).sort(), [false, true], "seeded once: 600 + 300 + 300 would exceed 1000");
    const refused = both.find((r) => !r.ok)!;
    assert.equal(refused.ok, false);
    if (!refused.ok) assert.equal(refused.retryAfterMs, end - (start + 10_000), "the month's usage frees when the month ends");
    assert.equal((await a.admitter.admit(request("z", 101))).ok, false);
  });
});
