// The lease of a process on Redis (redis-leases.ts), with two "processes" in this one: when
// one stops renewing (its connection dropped, as a kill leaves it), the other gives back,
// within seconds of the lease's end, everything its requests held (reservation, concurrency
// slot, tokens-per-minute estimate), and makes the spend counters agree with the usage log
// for each of them: a charge the log has but the counters missed is added, one the counters
// counted but the log never got is taken back. A process that ends cleanly leaves nothing.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import type { Token, User } from "../../src/runtime/types.js";
import type { Admitter, UsageLog } from "../../src/state/interfaces.js";
import { createMemoryStore } from "../../src/state/memory.js";
import { RedisAccounts } from "../../src/state/redis-accounts.js";
import { RedisAdmitter } from "../../src/state/redis-admit.js";
import { LEASE_MS, livesKey, RedisLease } from "../../src/state/redis-leases.js";
import { openRedisState } from "../../src/state/redis.js";
import { StoreUsageLog } from "../../src/state/store-usage-log.js";
import { eventually } from "../helpers/gateway.js";
import { deleteKeys, keysUnder, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { entry } from "../helpers/usage-entry.js";

const prefix = testKeyPrefix("leases");
const token: Token = { name: "t1", keyHash: "", user: "alice", group: "default", quotaNano: 1_000_000n, active: true };
const alice: User = { name: "alice", creditNano: 10_000_000n, groups: new Set(["default"]), active: true };

/** A gateway process's Redis half, built from its parts so the test can cut its connection. */
async function gatewayProcess(usageLog: UsageLog): Promise<{ client: Redis; admitter: Admitter; lease: RedisLease }> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  await new Promise((r) => client.once("ready", r));
  const accounts = new RedisAccounts(client, { keyPrefix: prefix, usageLog, reservationTtlMs: 600_000, settledTtlMs: 900_000 });
  await accounts.seed();
  const lease = new RedisLease(client, { keyPrefix: prefix, usageLog, keys: accounts.keyNames, settledTtlMs: 900_000 });
  await lease.start();
  return { client, admitter: new RedisAdmitter(client, accounts, prefix, lease), lease };
}

describe("Redis leases", () => {
  let admin: Redis;
  const usageLog = new StoreUsageLog(createMemoryStore());

  before(() => {
    admin = testRedisClient();
  });
  after(async () => {
    await deleteKeys(admin, prefix);
    await admin.quit();
  });

  const admitted = (admitter: Admitter, requestId: string) => admitter.admit({
    requestId, token, user: alice, amountNano: 100_000n, windows: [], now: Date.now(),
    slots: [{ key: "t1\0concurrent", max: 3 }], budgets: [{ key: "t1\0tpm", max: 10_000, tokens: 2_000 }],
  });
  const account = async (kind: "t" | "u") => admin.hgetall(`${prefix}acct:${kind}:${kind === "t" ? "t1" : "alice"}`);

  test("a process that stops renewing: what its requests held is given back, and its charges agree with the log", async () => {
    const doomed = await gatewayProcess(usageLog);
    // In flight: never finished, no log entry.
    const inFlight = await admitted(doomed.admitter, "in-flight");
    // Logged but never settled (killed between the two): the log has 500 nano.
    const loggedOnly = await admitted(doomed.admitter, "logged-only");
    await usageLog.append(entry({ requestId: "logged-only", token: "t1", user: "alice", costNano: 500n }));
    // Settled (700 counted) but its log entry never written.
    const settledOnly = await admitted(doomed.admitter, "settled-only");
    assert.ok(inFlight.ok && loggedOnly.ok && settledOnly.ok);
    await doomed.admitter.finish({
      reservation: settledOnly.reservation, holds: settledOnly.holds, now: Date.now(), usedTokens: 20,
      charge: { requestId: "settled-only", token: "t1", user: "alice", costNano: 700n },
    });
    assert.equal((await account("t")).spent, "700");
    assert.equal((await account("t")).reserved, "200000");
    assert.equal(await admin.zcard(`${prefix}slots:t1\0concurrent`), 2);
    assert.equal(Number((await admin.hget(`${prefix}tpm:t1\0tpm`, "held"))), 4000);

    const survivor = await gatewayProcess(usageLog);
    doomed.client.disconnect(); // renewals fail from now on, as after a kill
    const cut = Date.now();
    await eventually(async () => (await account("t")).reserved === "0", LEASE_MS + 4000, "the dead process's reservations freed");
    assert.ok(Date.now() - cut < LEASE_MS + 3000, `freed after ${Date.now() - cut} ms`);
    assert.equal(await admin.zcard(`${prefix}slots:t1\0concurrent`), 0, "its concurrency slots freed");
    assert.equal(Number(await admin.hget(`${prefix}tpm:t1\0tpm`, "held")), 0, "its tokens-per-minute estimates freed");
    assert.equal((await account("t")).spent, "500", "the counters = the log: 500 added, 700 taken back");
    assert.equal((await account("u")).spent, "500");
    assert.equal((await account("u")).reserved, "0");
    assert.deepEqual(await admin.zrange(livesKey(prefix), "0", "-1"), [survivor.lease.life], "the dead life is gone");

    await survivor.lease.close();
    survivor.client.disconnect();
    assert.deepEqual((await keysUnder(admin, prefix)).filter((k) => k.includes("life") || k.includes("lives")), [],
      "a process that ends cleanly leaves no lease or record");
  });

  test("a process that ends cleanly while a charge's log entry is pending gives back nothing it should keep", async () => {
    const state = await openRedisState(REDIS_URL, { keyPrefix: prefix, usageLog, upstreamTimeoutMs: 1000 });
    const a = await state.admitter.admit({ requestId: "clean", token, user: alice, amountNano: 1000n, windows: [], now: Date.now() });
    assert.ok(a.ok);
    const before = BigInt((await account("t")).spent ?? 0);
    await state.admitter.finish({ reservation: a.reservation, holds: a.holds, now: Date.now(), usedTokens: 1,
      charge: { requestId: "clean", token: "t1", user: "alice", costNano: 300n } });
    const logged = usageLog.append(entry({ requestId: "clean", token: "t1", user: "alice", costNano: 300n }));
    state.admitter.whenLogged!("clean", logged);
    await logged;
    await state.close();
    assert.equal(BigInt((await account("t")).spent), before + 300n, "counted once, kept");
    assert.deepEqual((await keysUnder(admin, prefix)).filter((k) => k.includes("life")), []);
  });
});
