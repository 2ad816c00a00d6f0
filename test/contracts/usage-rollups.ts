// The daily-rollups contract, run against every usage log that keeps rollups: over seeded
// random data (thousands of entries over several days, refunds among them) the rollups
// equal the entries they summarise, spend() gives the rows the entries give, retention
// removes old entries but keeps the rollups (so spend over whole days, balances and totals
// do not change), and a large sweep does not hold up appends.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { UsageLog } from "../../src/state/interfaces.js";
import { RetentionSweeper } from "../../src/state/retention.js";
import { addSpendMoney, addUsage } from "../../src/state/entry.js";
import { DAY_MS, orderSpendRows, RollupMap, type Rollup } from "../../src/state/rollups.js";
import { spendKeyer } from "../../src/state/spend-keys.js";
import type { SpendDimension, SpendRange, SpendRow, UsageEntry } from "../../src/state/store.js";
import { entry } from "../helpers/usage-entry.js";

export interface UsageRollupsFixture {
  readonly usageLog: UsageLog;
  /** Every rollup row the store holds (read from its table or map). */
  rollups(): Promise<Rollup[]>;
  close(): Promise<void>;
}

/** Deterministic pseudo-random numbers (mulberry32): the same data on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Day 0 of the data: a UTC midnight. */
const DAY0 = Date.UTC(2026, 2, 1);
const DAYS = 6;
const DIMENSIONS: readonly SpendDimension[] = ["user", "token", "model", "channel", "group", "day"];

/** `count` entries over DAYS days from DAY0 (some on the day edges exactly), of a few users,
 * tokens, models, channels (some none) and groups; some without a channel cost. */
function seededEntries(count: number, seed: number, prefix = "r"): UsageEntry[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const out: UsageEntry[] = [];
  for (let i = 0; i < count; i++) {
    const user = pick(["alice", "bob", "carol", "dävid"]);
    const onEdge = rnd() < 0.02;
    const time = DAY0 + (onEdge ? Math.floor(rnd() * DAYS) * DAY_MS : Math.floor(rnd() * DAYS * DAY_MS));
    const channel = pick(["openai-main", "anthropic", "backup", undefined]);
    const cost = BigInt(Math.floor(rnd() * 5_000_000)) * (rnd() < 0.1 ? 0n : 1n);
    out.push(entry({
      requestId: `${prefix}${seed}-${i}`, time, user, token: `${user}-${pick(["ci", "web"])}`, group: pick(["default", "premium"]),
      model: pick(["gpt-4o-mini", "claude-sonnet", "gemini-flash"]), channel, costNano: cost,
      ...(rnd() < 0.8 ? { channelCostNano: BigInt(Math.floor(rnd() * 3_000_000)) } : {}),
      usage: { input: Math.floor(rnd() * 5000), cacheRead: Math.floor(rnd() * 100), cacheWrite: Math.floor(rnd() * 50), output: Math.floor(rnd() * 900), reasoning: Math.floor(rnd() * 300) },
      status: rnd() < 0.05 ? 502 : 200,
    }));
  }
  return out;
}

/** What the entries give for spend(by, range): the reference every store must match. */
function spendOfEntries(entries: readonly UsageEntry[], by: SpendDimension, range: SpendRange): SpendRow[] {
  const keyOf = spendKeyer(by, range);
  const rows = new Map<string, SpendRow & { requests: number; costNano: bigint; channelCostNano: bigint; channelCostUnknown: number }>();
  for (const e of entries) {
    if ((range.since !== undefined && e.time < range.since) || (range.until !== undefined && e.time >= range.until)) continue;
    const key = keyOf(e);
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { key, requests: 0, usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 }, costNano: 0n, channelCostNano: 0n, channelCostUnknown: 0 }));
    row.requests++;
    addUsage(row.usage, e.usage);
    addSpendMoney(row, e);
  }
  return orderSpendRows(by, [...rows.values()]);
}

function rollupsOf(entries: readonly UsageEntry[]): Rollup[] {
  const map = new RollupMap();
  for (const e of entries) map.add(e);
  return sortRollups(map.rows());
}

function sortRollups(rows: readonly Rollup[]): Rollup[] {
  const id = (r: Rollup) => JSON.stringify([r.day, r.user, r.token, r.model, r.channel, r.group]);
  return rows
    .map((r) => ({ ...r, usage: { input: r.usage.input, cacheRead: r.usage.cacheRead, cacheWrite: r.usage.cacheWrite, output: r.usage.output, reasoning: r.usage.reasoning } }))
    .sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));
}

/** Ranges: the whole log, unbounded, days cut at odd hours, one partial day, one whole day. */
const RANGES: readonly SpendRange[] = [
  {},
  { since: DAY0, until: DAY0 + DAYS * DAY_MS },
  { since: DAY0 + 7 * 3_600_000 + 1234, until: DAY0 + 4 * DAY_MS + 13 * 3_600_000 },
  { since: DAY0 + DAY_MS + 5, until: DAY0 + DAY_MS + 20 * 3_600_000 },
  { since: DAY0 + 2 * DAY_MS, until: DAY0 + 3 * DAY_MS },
  { since: DAY0 + 2 * DAY_MS - 1 },
  { until: DAY0 + 3 * DAY_MS + 1 },
  { since: DAY0 + 30 * 60_000, until: DAY0 + 3 * DAY_MS + 30 * 60_000, timeZone: "Asia/Kolkata" },
];

async function appendAll(log: UsageLog, entries: readonly UsageEntry[]): Promise<void> {
  for (let at = 0; at < entries.length; at += 500) await Promise.all(entries.slice(at, at + 500).map((e) => log.append(e)));
  await log.flush();
}

async function allEntries(log: UsageLog): Promise<UsageEntry[]> {
  return log.logs({ limit: 1_000_000 });
}

/** Removes every entry before `before`, batch by batch; how many. */
async function removeAll(log: UsageLog, before: number, batch = 700): Promise<number> {
  let removed = 0;
  for (let n = -1; n !== 0; removed += n) n = await log.removeBefore!(before, batch);
  return removed;
}

export function usageRollupsContract(name: string, open: () => Promise<UsageRollupsFixture>): void {
  describe(`UsageLog rollups contract: ${name}`, () => {
    let fx: UsageRollupsFixture;
    let log: UsageLog;
    beforeEach(async () => {
      fx = await open();
      log = fx.usageLog;
    });
    afterEach(() => fx.close());

    test("rollups equal the entries they summarise across appends, refunds and days", async () => {
      const first = seededEntries(2500, 1);
      await appendAll(log, first);
      // The same request ids again (another cost, the same time, as a retried append has):
      // ignored, rollups too.
      await appendAll(log, first.slice(0, 200).map((e) => ({ ...e, costNano: 1n, model: "retried" })));
      assert.deepEqual(sortRollups(await fx.rollups()), rollupsOf(await allEntries(log)));
      const rnd = random(99);
      const refunded = first.filter(() => rnd() < 0.12);
      for (const e of refunded) assert.equal((await log.refund(e.requestId, e.time + 1000)).kind, "refunded");
      assert.equal((await log.refund(refunded[0].requestId, 1)).kind, "already-refunded");
      await appendAll(log, seededEntries(1500, 2));
      const entries = await allEntries(log);
      assert.equal(entries.length, 4000);
      assert.equal(entries.filter((e) => e.refundedAt !== undefined).length, refunded.length);
      assert.deepEqual(sortRollups(await fx.rollups()), rollupsOf(entries));
      for (const range of RANGES) {
        for (const by of DIMENSIONS) assert.deepEqual(await log.spend(by, range), spendOfEntries(entries, by, range), `${by} ${JSON.stringify(range)}`);
      }
    });

    test("retention removes old entries and keeps the rollups, spend over whole days and the balances", async () => {
      const seeded = seededEntries(3000, 3);
      await appendAll(log, seeded);
      const rnd = random(7);
      for (const e of seeded) if (rnd() < 0.1) await log.refund(e.requestId, e.time + 1);
      const entries = await allEntries(log);
      const cutoff = DAY0 + 3 * DAY_MS; // days 0, 1 and 2 go
      // Ranges whose entries before the cutoff all lie in days they hold whole.
      const covered: SpendRange[] = [{}, { since: DAY0, until: DAY0 + DAYS * DAY_MS }, { since: DAY0 - 5, until: DAY0 + 4 * DAY_MS + 77 }, { until: DAY0 + 5 * DAY_MS }];
      const before = new Map<string, SpendRow[]>();
      for (const [i, range] of covered.entries()) for (const by of DIMENSIONS) before.set(`${i}:${by}`, await log.spend(by, range));
      const rollups = sortRollups(await fx.rollups());
      const totals = await log.spendTotals();
      const spent = await log.spentByUser("alice");

      const old = entries.filter((e) => e.time < cutoff).length;
      assert.ok(old > 1000);
      assert.equal(await removeAll(log, cutoff), old);
      const left = await allEntries(log);
      assert.deepEqual(left, entries.filter((e) => e.time >= cutoff));
      assert.equal((await log.logs({ until: cutoff })).length, 0);

      assert.deepEqual(sortRollups(await fx.rollups()), rollups);
      for (const [i, range] of covered.entries()) {
        for (const by of DIMENSIONS) assert.deepEqual(await log.spend(by, range), before.get(`${i}:${by}`), `${by} ${JSON.stringify(range)}`);
      }
      // Ranges inside what is kept still equal what the (kept) entries give.
      for (const range of RANGES.slice(2)) {
        if ((range.since ?? -Infinity) < cutoff) continue;
        for (const by of DIMENSIONS) assert.deepEqual(await log.spend(by, range), spendOfEntries(left, by, range));
      }
      assert.deepEqual(await log.spendTotals(), totals);
      assert.equal(await log.spentByUser("alice"), spent);
      assert.equal(await removeAll(log, cutoff), 0);
    });

    test("removing with an archive hands each batch over before removing it", async () => {
      await appendAll(log, seededEntries(600, 4));
      const cutoff = DAY0 + 2 * DAY_MS;
      const old = (await allEntries(log)).filter((e) => e.time < cutoff);
      const archived: UsageEntry[] = [];
      let removed = 0;
      for (let n = -1; n !== 0; removed += n) {
        n = await log.removeBefore!(cutoff, 100, async (batch) => {
          // Still there while it is archived.
          assert.equal((await log.logs({ requestId: batch[0].requestId })).length, 1);
          archived.push(...batch);
        });
      }
      assert.equal(removed, old.length);
      const byId = (a: UsageEntry, b: UsageEntry) => (a.requestId < b.requestId ? -1 : 1);
      assert.deepEqual(archived.sort(byId), old.sort(byId));
      // An archive that fails removes nothing.
      await appendAll(log, seededEntries(50, 5, "late"));
      const failing = await log.removeBefore!(cutoff, 100, async () => { throw new Error("disk full"); }).catch((e: Error) => e.message);
      assert.equal(failing, "disk full");
      assert.ok((await log.logs({ until: cutoff })).length > 0);
    });

    test("a large sweep does not hold up appends made while it runs", async () => {
      const old = seededEntries(20_000, 6, "old");
      await appendAll(log, old);
      // The cutoff falls just after the old entries, inside their month: a log partitioned
      // by month removes them row by row too (whole months go at once, postgres-partitions).
      const now = DAY0 + (DAYS + 30) * DAY_MS + 1;
      const sweeper = new RetentionSweeper(log, { retentionMs: 30 * DAY_MS }, { now: () => now, batchTargetMs: 10, firstBatch: 200 });
      const sweep = sweeper.sweep();
      let done = false;
      void sweep.then(() => (done = true));
      // Appends while the sweep runs: each answered within a bound, interleaved with it.
      let appended = 0;
      let slowest = 0;
      while (!done) {
        const t0 = performance.now();
        await log.append(entry({ requestId: `new-${appended}`, time: now - appended }));
        slowest = Math.max(slowest, performance.now() - t0);
        appended++;
        await new Promise((resolve) => setImmediate(resolve)); // a turn of the event loop, not a sleep
      }
      const result = await sweep;
      assert.equal(result.ran, true);
      assert.equal(result.removed, old.length);
      assert.ok(result.batches >= 5, `the sweep ran in batches (${result.batches})`);
      assert.ok(appended >= 2, `appends ran while the sweep did (${appended} appends, ${result.batches} batches)`);
      assert.ok(slowest < 1000, `the slowest append took ${slowest.toFixed(1)} ms`);
      assert.equal((await allEntries(log)).length, appended);
      await sweeper.stop();
    });
  });
}
