// The usage-log contract, run against every implementation: appends are idempotent per
// request id and add exact money to the spend, logs filter and order, spend aggregates,
// refunds happen once, and (where the log outlives its object) appends survive a reopen.
// Each fixture brings its own storage; the suite only uses the UsageLog interface.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { UsageLog } from "../../src/state/interfaces.js";
import type { LogFilter } from "../../src/state/store.js";
import { entry } from "../helpers/usage-entry.js";

export interface UsageLogFixture {
  readonly usageLog: UsageLog;
  /** Opens the same log again once `usageLog` is closed (what a restart sees); absent for
   * a log that vanishes with its object. */
  readonly reopen?: () => Promise<UsageLog>;
  /** Closes whatever is still open and removes what the fixture made. */
  close(): Promise<void>;
}

/** @param reopens the fixture's log outlives its object (`reopen`): the durability test runs */
export function usageLogContract(name: string, open: () => Promise<UsageLogFixture>, { reopens = false } = {}): void {
  describe(`UsageLog contract: ${name}`, () => {
    let fx: UsageLogFixture;
    let log: UsageLog;
    beforeEach(async () => {
      fx = await open();
      log = fx.usageLog;
    });
    afterEach(() => fx.close());

    const ids = async (f: LogFilter) => (await log.logs(f)).map((e) => e.requestId);

    test("append adds the cost to the token's and the user's spend", async () => {
      assert.equal(await log.spentByToken("t1"), 0n);
      await log.append(entry({ requestId: "a", costNano: 300n }));
      await log.append(entry({ requestId: "b", costNano: 200n, token: "t2" }));
      await log.append(entry({ requestId: "c", costNano: 7n, user: "bob", token: "t3" }));
      assert.equal(await log.spentByToken("t1"), 300n);
      assert.equal(await log.spentByToken("t2"), 200n);
      assert.equal(await log.spentByUser("alice"), 500n);
      assert.equal(await log.spentByUser("bob"), 7n);
      assert.equal(await log.spentByUser("nobody"), 0n);
      const totals = await log.spendTotals();
      assert.deepEqual([...totals.tokens].sort(), [["t1", 300n], ["t2", 200n], ["t3", 7n]]);
      assert.deepEqual([...totals.users].sort(), [["alice", 500n], ["bob", 7n]]);
    });

    // A retried append carries its entry's first time: PostgreSQL's log, partitioned by
    // month, keys entries by (request id, time).
    test("a request id appended twice is logged and charged once, even at the same time", async () => {
      await Promise.all([
        log.append(entry({ requestId: "dup", costNano: 100n })),
        log.append(entry({ requestId: "dup", costNano: 100n })),
      ]);
      await log.append(entry({ requestId: "dup", costNano: 100n }));
      assert.equal(await log.spentByToken("t1"), 100n);
      assert.equal(await log.spentByUser("alice"), 100n);
      assert.equal((await log.logs({})).length, 1);
    });

    test("money is exact bigint nano-units", async () => {
      const costs = [1n, 999_999_999n, 2n ** 53n + 1n, 123_456_789_012_345n];
      await Promise.all(costs.map((costNano, i) => log.append(entry({ requestId: `m${i}`, costNano }))));
      const total = costs.reduce((a, b) => a + b, 0n);
      assert.equal(await log.spentByToken("t1"), total);
      assert.equal(await log.spentByUser("alice"), total);
      assert.equal((await log.spend("user", {}))[0].costNano, total);
      assert.equal((await log.logs({ requestId: "m2" }))[0].costNano, 2n ** 53n + 1n);
    });

    test("an entry round-trips, optional fields absent or present", async () => {
      const full = entry({
        requestId: "full", upstreamModel: "gpt-4o-mini-2024-07-18", channel: "openai-main", upstreamProtocol: "openai",
        error: "upstream_timeout", ttfbMs: 3.25, estimated: true, status: 504,
        droppedFields: ["context_management", "tools[].defer_loading"],
        usage: { input: 100, cacheRead: 0, cacheWrite: 0, output: 50, reasoning: 0, toolCalls: { web_search: 3, web_fetch: 1 } },
      });
      const bare = entry({ requestId: "bare", time: full.time - 1 });
      await log.append(full);
      await log.append(bare);
      assert.deepEqual(await log.logs({}), [full, bare]);
      assert.equal("channel" in (await log.logs({ requestId: "bare" }))[0], false);
      assert.equal("toolCalls" in (await log.logs({ requestId: "bare" }))[0].usage, false, "no hosted tools: no field");
    });

    test("text round-trips whatever it holds: quotes, backslashes, JSON-like text, non-ASCII", async () => {
      const odd = entry({
        requestId: `odd-"'\\-{}[]`, model: `m"o\\d'e,l {"a":[1]} 模型 🙂`, channel: "c\"h", error: "e\\r",
        droppedFields: ["a\"b", "ü"], durationMs: 0.1 + 0.2, ttfbMs: 1e-3,
      });
      await log.append(odd);
      assert.deepEqual((await log.logs({ requestId: odd.requestId }))[0], odd);
    });

    test("logs filter by each field, newest first, with a limit", async () => {
      const t0 = 1_700_000_000_000;
      await log.append(entry({ requestId: "r1", time: t0 + 1, token: "t1", user: "alice", model: "m1", status: 200 }));
      await log.append(entry({ requestId: "r2", time: t0 + 3, token: "t2", user: "alice", model: "m2", status: 429 }));
      await log.append(entry({ requestId: "r3", time: t0 + 2, token: "t3", user: "bob", model: "m1", status: 200 }));
      await log.append(entry({ requestId: "r4", time: t0 + 3, token: "t3", user: "bob", model: "m2", status: 502 }));
      assert.deepEqual(await ids({}), ["r4", "r2", "r3", "r1"]);
      assert.deepEqual(await ids({ requestId: "r3" }), ["r3"]);
      assert.deepEqual(await ids({ token: "t3" }), ["r4", "r3"]);
      assert.deepEqual(await ids({ user: "alice" }), ["r2", "r1"]);
      assert.deepEqual(await ids({ model: "m1" }), ["r3", "r1"]);
      assert.deepEqual(await ids({ status: 200 }), ["r3", "r1"]);
      assert.deepEqual(await ids({ since: t0 + 2 }), ["r4", "r2", "r3"]);
      assert.deepEqual(await ids({ until: t0 + 3 }), ["r3", "r1"]);
      assert.deepEqual(await ids({ since: t0 + 2, until: t0 + 3, user: "bob" }), ["r3"]);
      assert.deepEqual(await ids({ limit: 2 }), ["r4", "r2"]);
      assert.deepEqual(await ids({ model: "m2", limit: 1 }), ["r4"]);
      assert.deepEqual(await ids({ user: "carol" }), []);
    });

    test("logs default to the newest 100 entries", async () => {
      for (let i = 0; i < 105; i++) await log.append(entry({ requestId: `n${i}`, time: i }));
      const logs = await log.logs({});
      assert.equal(logs.length, 100);
      assert.equal(logs[0].requestId, "n104");
    });

    test("spend aggregates per dimension over [since, until)", async () => {
      const u = (input: number) => ({ input, cacheRead: 1, cacheWrite: 2, output: 3, reasoning: 1 });
      await log.append(entry({ requestId: "s1", time: 10, token: "k1", user: "alice", model: "m1", group: "g1", usage: u(1), costNano: 5n }));
      await log.append(entry({ requestId: "s2", time: 20, token: "k2", user: "alice", model: "m2", group: "g1", usage: u(2), costNano: 7n }));
      await log.append(entry({ requestId: "s3", time: 30, token: "k3", user: "bob", model: "m1", group: "g2", usage: u(4), costNano: 20n }));
      const usage = (input: number, n: number) => ({ input, cacheRead: n, cacheWrite: 2 * n, output: 3 * n, reasoning: n });
      // Entries that did not record their cost to the operator: unknown, not 0.
      assert.deepEqual(await log.spend("user", {}), [
        { key: "bob", requests: 1, usage: usage(4, 1), costNano: 20n, channelCostNano: 0n, channelCostUnknown: 1 },
        { key: "alice", requests: 2, usage: usage(3, 2), costNano: 12n, channelCostNano: 0n, channelCostUnknown: 2 },
      ]);
      assert.deepEqual((await log.spend("model", {})).map((r) => [r.key, r.requests, r.costNano]), [["m1", 2, 25n], ["m2", 1, 7n]]);
      assert.deepEqual((await log.spend("group", {})).map((r) => [r.key, r.costNano]), [["g2", 20n], ["g1", 12n]]);
      assert.deepEqual((await log.spend("token", {})).map((r) => r.key), ["k3", "k2", "k1"]);
      assert.deepEqual((await log.spend("user", { since: 20 })).map((r) => [r.key, r.costNano]), [["bob", 20n], ["alice", 7n]]);
      assert.deepEqual((await log.spend("user", { until: 30 })).map((r) => [r.key, r.requests]), [["alice", 2]]);
      assert.deepEqual((await log.spend("model", { since: 11, until: 30 })).map((r) => r.key), ["m2"]);
      assert.deepEqual(await log.spend("token", { since: 31 }), []);
    });

    test("an entry's breakdown and cost to the operator round-trip; entries without them read back without", async () => {
      const breakdown = "input=1200@3/1M output=300@15/1M web_search=2@10/1k multiplier=0.7 service_tier=flex@0.5 tier=200000 variant=size:1024x1024";
      const priced = entry({ requestId: "priced", channel: "openai-main", costNano: 9_002_345n, breakdown, channelCostNano: 2n ** 53n + 3n });
      const free = entry({ requestId: "free", time: priced.time - 1, costNano: 0n, breakdown: "multiplier=1", channelCostNano: 0n });
      const old = entry({ requestId: "old", time: priced.time - 2 });
      for (const e of [priced, free, old]) await log.append(e);
      assert.deepEqual(await log.logs({}), [priced, free, old]);
      const [readOld] = await log.logs({ requestId: "old" });
      assert.equal("breakdown" in readOld, false);
      assert.equal("channelCostNano" in readOld, false);
      assert.equal(typeof (await log.logs({ requestId: "priced" }))[0].channelCostNano, "bigint");
    });

    test("logs filter by channel", async () => {
      await log.append(entry({ requestId: "c1", time: 3, channel: "east" }));
      await log.append(entry({ requestId: "c2", time: 2, channel: "west" }));
      await log.append(entry({ requestId: "c3", time: 1, channel: "east", model: "m9" }));
      await log.append(entry({ requestId: "c4", time: 0 }));
      assert.deepEqual(await ids({ channel: "east" }), ["c1", "c3"]);
      assert.deepEqual(await ids({ channel: "east", model: "m9" }), ["c3"]);
      assert.deepEqual(await ids({ channel: "north" }), []);
    });

    test("spend by channel sums what was charged and what it cost, refunds left out; unknown costs counted", async () => {
      await log.append(entry({ requestId: "e1", time: 10, channel: "east", costNano: 1000n, channelCostNano: 600n }));
      await log.append(entry({ requestId: "e2", time: 11, channel: "east", costNano: 500n, channelCostNano: 450n }));
      await log.append(entry({ requestId: "e3", time: 12, channel: "east", costNano: 9000n, channelCostNano: 8000n }));
      await log.append(entry({ requestId: "w1", time: 13, channel: "west", costNano: 700n, channelCostNano: 900n }));
      await log.append(entry({ requestId: "w2", time: 14, channel: "west", costNano: 100n })); // an old row: cost unknown
      await log.append(entry({ requestId: "w3", time: 15, channel: "west", costNano: 0n, status: 502 })); // nothing priced
      await log.append(entry({ requestId: "n1", time: 16, costNano: 0n, status: 401 })); // no channel answered
      await log.refund("e3", 20);
      const usage = (n: number) => ({ input: 10 * n, cacheRead: 2 * n, cacheWrite: n, output: 5 * n, reasoning: 3 * n });
      assert.deepEqual(await log.spend("channel", {}), [
        { key: "east", requests: 3, usage: usage(3), costNano: 1500n, channelCostNano: 1050n, channelCostUnknown: 0 },
        { key: "west", requests: 3, usage: usage(3), costNano: 800n, channelCostNano: 900n, channelCostUnknown: 1 },
        { key: "", requests: 1, usage: usage(1), costNano: 0n, channelCostNano: 0n, channelCostUnknown: 0 },
      ]);
      assert.deepEqual((await log.spend("model", {})).map((r) => [r.key, r.costNano, r.channelCostNano, r.channelCostUnknown]), [["gpt-4o-mini", 2300n, 1950n, 1]]);
      assert.deepEqual((await log.spend("channel", { since: 11, until: 14 })).map((r) => [r.key, r.costNano, r.channelCostNano]), [["west", 700n, 900n], ["east", 500n, 450n]]);
    });

    test("the serving key's fingerprint round-trips; an entry no key served reads back without", async () => {
      const served = entry({ requestId: "k1", time: 3, channel: "east", key: "1a2b3c4d" });
      const unserved = entry({ requestId: "k0", time: 2, channel: "east", status: 502, costNano: 0n });
      await log.append(served);
      await log.append(unserved);
      assert.deepEqual(await log.logs({}), [served, unserved]);
      assert.equal("key" in (await log.logs({ requestId: "k0" }))[0], false);
    });

    test("logs filter by key and by status class", async () => {
      await log.append(entry({ requestId: "a", time: 6, channel: "east", key: "aaaa1111", status: 200 }));
      await log.append(entry({ requestId: "b", time: 5, channel: "east", key: "bbbb2222", status: 429 }));
      await log.append(entry({ requestId: "c", time: 4, channel: "east", key: "aaaa1111", status: 400 }));
      await log.append(entry({ requestId: "d", time: 3, channel: "west", status: 502 }));
      await log.append(entry({ requestId: "e", time: 2, status: 499 }));
      await log.append(entry({ requestId: "f", time: 1, status: 500 }));
      assert.deepEqual(await ids({ key: "aaaa1111" }), ["a", "c"]);
      assert.deepEqual(await ids({ key: "aaaa1111", statusClass: 4 }), ["c"]);
      assert.deepEqual(await ids({ key: "cccc3333" }), []);
      assert.deepEqual(await ids({ statusClass: 4 }), ["b", "c", "e"]);
      assert.deepEqual(await ids({ statusClass: 5 }), ["d", "f"]);
      assert.deepEqual(await ids({ statusClass: 2 }), ["a"]);
      assert.deepEqual(await ids({ statusClass: 4, limit: 1 }), ["b"]);
    });

    test("spend by key groups by channel and key fingerprint; requests no key served under none", async () => {
      await log.append(entry({ requestId: "a1", time: 1, channel: "east", key: "aaaa1111", costNano: 300n, channelCostNano: 100n }));
      await log.append(entry({ requestId: "a2", time: 2, channel: "east", key: "aaaa1111", costNano: 200n, channelCostNano: 100n }));
      await log.append(entry({ requestId: "b1", time: 3, channel: "east", key: "bbbb2222", costNano: 400n, channelCostNano: 300n }));
      // The same key on another channel is another row.
      await log.append(entry({ requestId: "w1", time: 4, channel: "west", key: "aaaa1111", costNano: 50n, channelCostNano: 10n }));
      await log.append(entry({ requestId: "n1", time: 5, channel: "west", costNano: 0n, status: 502 }));
      await log.append(entry({ requestId: "r1", time: 6, channel: "east", key: "bbbb2222", costNano: 900n, channelCostNano: 1n }));
      await log.refund("r1", 7);
      const usage = (n: number) => ({ input: 10 * n, cacheRead: 2 * n, cacheWrite: n, output: 5 * n, reasoning: 3 * n });
      assert.deepEqual(await log.spend("key", {}), [
        { key: "east/aaaa1111", requests: 2, usage: usage(2), costNano: 500n, channelCostNano: 200n, channelCostUnknown: 0 },
        { key: "east/bbbb2222", requests: 2, usage: usage(2), costNano: 400n, channelCostNano: 300n, channelCostUnknown: 0 },
        { key: "west/aaaa1111", requests: 1, usage: usage(1), costNano: 50n, channelCostNano: 10n, channelCostUnknown: 0 },
        { key: "", requests: 1, usage: usage(1), costNano: 0n, channelCostNano: 0n, channelCostUnknown: 0 },
      ]);
      assert.deepEqual((await log.spend("key", { since: 2, until: 4 })).map((r) => [r.key, r.costNano]), [["east/bbbb2222", 400n], ["east/aaaa1111", 200n]]);
    });

    test("spend by day: one row per UTC day, newest first, whatever the cost", async () => {
      const day = Date.UTC(2026, 10, 26); // 2026-11-26T00:00Z
      await log.append(entry({ requestId: "d1", time: day - 1, costNano: 900n, channelCostNano: 100n })); // 25th, last ms
      await log.append(entry({ requestId: "d2", time: day, costNano: 1n, channelCostNano: 1n }));
      await log.append(entry({ requestId: "d3", time: day + 86_400_000 - 1, costNano: 2n, channelCostNano: 1n }));
      await log.append(entry({ requestId: "d4", time: day + 86_400_000 + 5, costNano: 30n })); // the 27th, cost unknown
      const usage = (n: number) => ({ input: 10 * n, cacheRead: 2 * n, cacheWrite: n, output: 5 * n, reasoning: 3 * n });
      assert.deepEqual(await log.spend("day", {}), [
        { key: "2026-11-27", requests: 1, usage: usage(1), costNano: 30n, channelCostNano: 0n, channelCostUnknown: 1 },
        { key: "2026-11-26", requests: 2, usage: usage(2), costNano: 3n, channelCostNano: 2n, channelCostUnknown: 0 },
        { key: "2026-11-25", requests: 1, usage: usage(1), costNano: 900n, channelCostNano: 100n, channelCostUnknown: 0 },
      ]);
      assert.deepEqual((await log.spend("day", { since: day })).map((r) => r.key), ["2026-11-27", "2026-11-26"]);
      assert.deepEqual(await log.spend("day", { since: day + 10 * 86_400_000 }), []);
    });

    test("spend by day in a time zone: days begin at its midnight, half-hour offsets and DST included", async () => {
      const day = Date.UTC(2026, 10, 26);
      // Asia/Kolkata is UTC+5:30: 18:29Z on the 25th is 23:59 there, 18:30Z is the 26th.
      await log.append(entry({ requestId: "i1", time: day - 5.5 * 3_600_000 - 60_000, costNano: 1n }));
      await log.append(entry({ requestId: "i2", time: day - 5.5 * 3_600_000, costNano: 2n }));
      await log.append(entry({ requestId: "i3", time: day + 3_600_000, costNano: 4n }));
      assert.deepEqual((await log.spend("day", { timeZone: "Asia/Kolkata" })).map((r) => [r.key, r.requests, r.costNano]), [
        ["2026-11-26", 2, 6n], ["2026-11-25", 1, 1n],
      ]);
      assert.deepEqual((await log.spend("day", {})).map((r) => [r.key, r.requests, r.costNano]), [
        ["2026-11-26", 1, 4n], ["2026-11-25", 2, 3n],
      ]);
      // America/New_York left summer time at 06:00Z on 2026-11-01: UTC-4 before, UTC-5 after.
      const nov1 = Date.UTC(2026, 10, 1);
      await log.append(entry({ requestId: "n1", time: nov1 + 3.5 * 3_600_000, costNano: 8n })); // 23:30 on Oct 31 (EDT)
      await log.append(entry({ requestId: "n2", time: nov1 + 4 * 3_600_000, costNano: 16n })); // 00:00 on Nov 1 (EDT)
      await log.append(entry({ requestId: "n3", time: nov1 + 28.5 * 3_600_000, costNano: 32n })); // 23:30 on Nov 1 (EST)
      await log.append(entry({ requestId: "n4", time: nov1 + 29 * 3_600_000, costNano: 64n })); // 00:00 on Nov 2 (EST)
      assert.deepEqual((await log.spend("day", { timeZone: "America/New_York", until: nov1 + 2 * 86_400_000 })).map((r) => [r.key, r.costNano]), [
        ["2026-11-02", 64n], ["2026-11-01", 48n], ["2026-10-31", 8n],
      ]);
    });

    test("spend of one subject: only that token's or user's requests, from whole days and the range's edges alike", async () => {
      const day = Date.UTC(2026, 10, 20);
      const D = 86_400_000;
      // Three whole UTC days of alice (two tokens) and bob, plus partial days at both edges.
      const rows: [string, number, string, string, bigint][] = [
        ["e1", day - 3_600_000, "a1", "alice", 1n], ["e2", day + 3_600_000, "a1", "alice", 10n], ["e3", day + 3_600_000, "b1", "bob", 100n],
        ["e4", day + D + 5, "a2", "alice", 1_000n], ["e5", day + 2 * D + 5, "b1", "bob", 10_000n], ["e6", day + 3 * D + 7, "a1", "alice", 100_000n],
      ];
      for (const [requestId, time, token, user, costNano] of rows) await log.append(entry({ requestId, time, token, user, costNano, model: `m-${token}` }));
      await log.refund("e4", day + 4 * D);
      const range = { since: day - 2 * 3_600_000, until: day + 3 * D + 3_600_000 };
      const alice = { ...range, subject: { kind: "user" as const, name: "alice" } };
      assert.deepEqual((await log.spend("day", alice)).map((r) => [r.key, r.requests, r.costNano]), [
        ["2026-11-23", 1, 100_000n], ["2026-11-21", 1, 0n], ["2026-11-20", 1, 10n], ["2026-11-19", 1, 1n],
      ]);
      assert.deepEqual((await log.spend("model", alice)).map((r) => [r.key, r.requests, r.costNano]), [["m-a1", 3, 100_011n], ["m-a2", 1, 0n]]);
      assert.deepEqual((await log.spend("user", alice)).map((r) => [r.key, r.costNano]), [["alice", 100_011n]]);
      const a2 = { ...range, subject: { kind: "token" as const, name: "a2" } };
      assert.deepEqual((await log.spend("token", a2)).map((r) => [r.key, r.requests, r.costNano]), [["a2", 1, 0n]]);
      const b1 = { ...range, subject: { kind: "token" as const, name: "b1" }, timeZone: "Asia/Kolkata" };
      assert.deepEqual((await log.spend("day", b1)).map((r) => [r.key, r.costNano]), [["2026-11-22", 10_000n], ["2026-11-20", 100n]]);
      assert.deepEqual(await log.spend("day", { ...range, subject: { kind: "user", name: "nobody" } }), []);
      // Everyone's spend is unchanged by the filter's existence.
      assert.deepEqual((await log.spend("user", range)).map((r) => [r.key, r.costNano]), [["alice", 100_011n], ["bob", 10_100n]]);
    });

    test("spend rows of equal cost are ordered by key", async () => {
      for (const user of ["carol", "alice", "bob"]) await log.append(entry({ requestId: user, user, costNano: 1n }));
      assert.deepEqual((await log.spend("user", {})).map((r) => r.key), ["alice", "bob", "carol"]);
    });

    test("refund marks the entry and takes its cost off the token's and the user's spend", async () => {
      await log.append(entry({ requestId: "job", costNano: 800n }));
      await log.append(entry({ requestId: "other", costNano: 5n }));
      assert.deepEqual(await log.refund("job", 1_700_000_000_123), { kind: "refunded", token: "t1", user: "alice", costNano: 800n });
      assert.equal(await log.spentByToken("t1"), 5n);
      assert.equal(await log.spentByUser("alice"), 5n);
      assert.deepEqual([...(await log.spendTotals()).users], [["alice", 5n]]);
      const [refunded] = await log.logs({ requestId: "job" });
      assert.equal(refunded.refundedAt, 1_700_000_000_123);
      assert.equal(refunded.costNano, 800n, "the entry keeps what was charged");
      assert.equal("refundedAt" in (await log.logs({ requestId: "other" }))[0], false);
    });

    test("a request id is refunded exactly once, even at the same time; an unknown one not at all", async () => {
      await log.append(entry({ requestId: "job", costNano: 2n ** 53n + 1n }));
      const results = await Promise.all([log.refund("job", 10), log.refund("job", 10), log.refund("job", 10)]);
      assert.deepEqual(results.map((r) => r.kind).sort(), ["already-refunded", "already-refunded", "refunded"]);
      assert.deepEqual(await log.refund("job", 20), { kind: "already-refunded" });
      assert.deepEqual(await log.refund("nope", 30), { kind: "not-recorded" });
      assert.equal(await log.spentByToken("t1"), 0n);
      assert.equal(await log.spentByUser("alice"), 0n);
      assert.equal((await log.logs({ requestId: "job" }))[0].refundedAt, 10);
      // A late duplicate of the refunded request charges nothing either.
      await log.append(entry({ requestId: "job", costNano: 7n }));
      assert.equal(await log.spentByUser("alice"), 0n);
    });

    test("spend aggregates leave refunded costs out but count the request", async () => {
      await log.append(entry({ requestId: "r1", time: 10, costNano: 30n }));
      await log.append(entry({ requestId: "r2", time: 20, costNano: 12n }));
      await log.refund("r1", 25);
      assert.deepEqual((await log.spend("user", {})).map((r) => [r.key, r.requests, r.costNano]), [["alice", 2, 12n]]);
    });

    test("append ignores a refundedAt it is given; only refund sets it", async () => {
      await log.append(entry({ requestId: "r", costNano: 9n, refundedAt: 5 }));
      assert.equal("refundedAt" in (await log.logs({}))[0], false);
      assert.equal(await log.spentByUser("alice"), 9n);
    });

    test("a cost that is not a bigint is refused", async () => {
      await assert.rejects(log.append(entry({ requestId: "x", costNano: 5 as unknown as bigint })), TypeError);
      await log.flush().catch(() => {});
      assert.equal((await log.logs({})).length, 0);
    });

    test("flush resolves once everything appended is durable", async () => {
      const appended = Array.from({ length: 50 }, (_, i) => log.append(entry({ requestId: `f${i}`, costNano: 2n })));
      await log.flush();
      await Promise.all(appended);
      assert.equal(await log.spentByUser("alice"), 100n);
    });

    const T = (name: string) => ({ kind: "token", name }) as const;
    const U = (name: string) => ({ kind: "user", name }) as const;
    /** Buckets as [bucket, costNano, tokens], short to compare. */
    const buckets = async (subject: { kind: "token" | "user"; name: string }, sinceMs: number, bucketMs: number) =>
      (await log.usageBuckets(subject, sinceMs, bucketMs)).map((b) => [b.bucket, b.costNano, b.tokens]);

    test("usageBuckets: what a token or a user used per bucket, oldest first, other subjects not counted", async () => {
      // The helper's usage counts 10 + 2 + 1 + 5 = 18 tokens; reasoning (3) is inside output.
      await log.append(entry({ requestId: "b1", time: 1000, token: "t1", user: "alice", costNano: 1n }));
      await log.append(entry({ requestId: "b2", time: 1999, token: "t1", user: "alice", costNano: 2n }));
      await log.append(entry({ requestId: "b3", time: 3000, token: "t1", user: "alice", costNano: 4n }));
      await log.append(entry({ requestId: "b4", time: 1500, token: "t2", user: "alice", costNano: 8n }));
      await log.append(entry({ requestId: "b5", time: 1200, token: "t3", user: "bob", costNano: 16n }));
      await log.append(entry({ requestId: "b6", time: 7500, token: "t1", user: "alice", costNano: 32n,
        usage: { input: 100, cacheRead: 20, cacheWrite: 3, output: 7, reasoning: 50 } }));
      await log.append(entry({ requestId: "b0", time: 999, token: "t1", user: "alice", costNano: 64n })); // appended last, earliest
      assert.deepEqual(await buckets(T("t1"), 0, 1000), [[0, 64n, 18], [1, 3n, 36], [3, 4n, 18], [7, 32n, 130]]);
      assert.deepEqual(await buckets(U("alice"), 0, 1000), [[0, 64n, 18], [1, 11n, 54], [3, 4n, 18], [7, 32n, 130]]);
      assert.deepEqual(await buckets(T("t3"), 0, 1000), [[1, 16n, 18]]);
      assert.deepEqual(await buckets(U("bob"), 0, 1000), [[1, 16n, 18]]);
      assert.deepEqual(await buckets(T("alice"), 0, 1000), [], "a user's name is not a token's");
      assert.deepEqual(await buckets(U("t1"), 0, 1000), []);
      assert.deepEqual(await buckets(T("nobody"), 0, 1000), []);
      // Other bucket sizes group the same entries otherwise.
      assert.deepEqual(await buckets(U("alice"), 0, 5000), [[0, 79n, 90], [1, 32n, 130]]);
      assert.deepEqual(await buckets(T("t1"), 0, 1), [[999, 64n, 18], [1000, 1n, 18], [1999, 2n, 18], [3000, 4n, 18], [7500, 32n, 130]]);
      const [one] = await log.usageBuckets(T("t3"), 0, 1000);
      assert.equal(typeof one.costNano, "bigint");
      assert.equal(typeof one.bucket, "number");
      assert.equal(typeof one.tokens, "number");
    });

    test("usageBuckets counts from sinceMs inclusive; a bucket it starts inside holds only what came after", async () => {
      for (const [i, time] of [1000, 1499, 1500, 1501, 2500].entries()) {
        await log.append(entry({ requestId: `s${i}`, time, costNano: 10n ** BigInt(i) }));
      }
      assert.deepEqual(await buckets(T("t1"), 1500, 1000), [[1, 1100n, 36], [2, 10_000n, 18]]);
      assert.deepEqual(await buckets(U("alice"), 1501, 1000), [[1, 1000n, 18], [2, 10_000n, 18]]);
      assert.deepEqual(await buckets(T("t1"), 1000, 1000), [[1, 1111n, 72], [2, 10_000n, 18]]);
      assert.deepEqual(await buckets(T("t1"), 2501, 1000), []);
    });

    test("usageBuckets groups real epoch times in days and weeks exactly", async () => {
      const day = 86_400_000;
      const nov26 = Date.UTC(2026, 10, 26);
      const times = [nov26 - 1, nov26, nov26 + day - 1, nov26 + day, nov26 + 9 * day + 5];
      for (const [i, time] of times.entries()) await log.append(entry({ requestId: `d${i}`, time, costNano: 1n << BigInt(i) }));
      const d = nov26 / day;
      assert.deepEqual(await buckets(T("t1"), nov26 - 3 * day, day), [[d - 1, 1n, 18], [d, 6n, 36], [d + 1, 8n, 18], [d + 9, 16n, 18]]);
      const week = 7 * day;
      assert.deepEqual((await log.usageBuckets(U("alice"), 0, week)).map((b) => b.bucket), [...new Set(times.map((t) => Math.floor(t / week)))]);
      // A rolling 5h window: since now - 5h, in 1-minute buckets.
      const now = nov26 + 9 * day + 5;
      assert.deepEqual(await buckets(T("t1"), now - 5 * 3_600_000, 60_000), [[Math.floor(now / 60_000), 16n, 18]]);
    });

    test("usageBuckets leaves refunded entries out; a bucket left with nothing is left out", async () => {
      await log.append(entry({ requestId: "r1", time: 100, costNano: 5n }));
      await log.append(entry({ requestId: "r2", time: 150, costNano: 7n }));
      await log.append(entry({ requestId: "r3", time: 250, costNano: 9n }));
      await log.append(entry({ requestId: "r4", time: 250, token: "t2", costNano: 11n }));
      await log.refund("r2", 300);
      await log.refund("r3", 300);
      assert.deepEqual(await buckets(T("t1"), 0, 100), [[1, 5n, 18]]);
      assert.deepEqual(await buckets(U("alice"), 0, 100), [[1, 5n, 18], [2, 11n, 18]]);
      await log.refund("r4", 300);
      assert.deepEqual(await buckets(U("alice"), 0, 100), [[1, 5n, 18]]);
    });

    test("usageBuckets: a bucket where nothing was used is left out; tokens without cost count", async () => {
      const none = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
      await log.append(entry({ requestId: "z1", time: 10, costNano: 0n, usage: none, status: 502 }));
      await log.append(entry({ requestId: "z2", time: 20, costNano: 0n, usage: { ...none, input: 4 } })); // free, not unused
      await log.append(entry({ requestId: "z3", time: 30, costNano: 3n, usage: none })); // charged per call
      assert.deepEqual(await buckets(T("t1"), 0, 10), [[2, 0n, 4], [3, 3n, 0]]);
    });

    test("usageBuckets sums money beyond 2^53 nano-units exactly", async () => {
      const costs = [2n ** 53n + 1n, 2n ** 60n, 3n, 2n ** 61n + 7n];
      for (const [i, costNano] of costs.entries()) await log.append(entry({ requestId: `m${i}`, time: 5_000 + i, costNano }));
      await log.append(entry({ requestId: "m-other", time: 9_000, costNano: 2n ** 53n + 3n }));
      const total = costs.reduce((a, b) => a + b, 0n);
      assert.deepEqual(await buckets(T("t1"), 0, 4_000), [[1, total, 72], [2, 2n ** 53n + 3n, 18]]);
      assert.deepEqual(await buckets(U("alice"), 0, 60_000), [[0, total + 2n ** 53n + 3n, 90]]);
    });

    test("usageBuckets sees an append as soon as it resolved", async () => {
      let total = 0n;
      for (let i = 0; i < 30; i++) {
        const costNano = BigInt(i) * 1_000_003n + 1n;
        await log.append(entry({ requestId: `a${i}`, time: 60_000 + i, user: i % 2 ? "alice" : "bob", costNano }));
        if (i % 2) total += costNano;
        assert.deepEqual(await buckets(U("alice"), 0, 60_000), total === 0n ? [] : [[1, total, 18 * Math.ceil(i / 2)]], `after append ${i}`);
      }
    });

    test("usageBuckets refuses a bucket size that is not a positive integer, or another kind of subject", async () => {
      await assert.rejects(log.usageBuckets(T("t1"), 0, 0), RangeError);
      await assert.rejects(log.usageBuckets(T("t1"), 0, -1000), RangeError);
      await assert.rejects(log.usageBuckets(T("t1"), 0, 1.5), RangeError);
      await assert.rejects(log.usageBuckets({ kind: "grp" as "user", name: "g" }, 0, 1000), RangeError);
      await assert.rejects(log.usageBuckets(T("t1"), Number.NaN, 1000), RangeError);
    });

    test("traffic: requests, errors and unrefunded cost per bucket over [since, until), oldest first, exact", async () => {
      const M = 60_000;
      const big = 2n ** 60n + 7n;
      await log.append(entry({ requestId: "t0", time: 10 * M - 1, costNano: 1n })); // before the range
      await log.append(entry({ requestId: "t1", time: 10 * M, costNano: big }));
      await log.append(entry({ requestId: "t2", time: 10 * M + 59_999, costNano: 3n, status: 502, error: "upstream_error" }));
      await log.append(entry({ requestId: "t3", time: 12 * M + 5, costNano: 0n, status: 200, error: "client_closed" }));
      await log.append(entry({ requestId: "t4", time: 12 * M + 6, costNano: 40n }));
      await log.append(entry({ requestId: "t5", time: 12 * M + 7, costNano: 0n, status: 429 }));
      await log.append(entry({ requestId: "t6", time: 13 * M, costNano: 9n })); // at until: out
      await log.refund("t4", 1);
      const rows = await log.traffic({ sinceMs: 10 * M, untilMs: 13 * M }, M);
      assert.deepEqual(rows, [
        { bucket: 10, requests: 2, errors: 1, costNano: big + 3n },
        { bucket: 12, requests: 3, errors: 2, costNano: 0n },
      ]);
      assert.deepEqual(await log.traffic({ sinceMs: 0, untilMs: 10 * M - 1 }, M), []);
      await assert.rejects(log.traffic({ sinceMs: 0, untilMs: M }, 0), RangeError);
      await assert.rejects(log.traffic({ sinceMs: 0.5, untilMs: M }, M), RangeError);
    });

    test("keyHealth: per channel key, exact requests and errors, latency p50/p95 by nearest rank", async () => {
      let n = 0;
      const add = (channel: string | undefined, key: string | undefined, durationMs: number, status = 200) =>
        log.append(entry({ requestId: `k${n++}`, time: 1000 + n, channel, key, durationMs, status }));
      for (let i = 1; i <= 20; i++) await add("main", "aaaa1111", i * 10, i <= 3 ? 500 : 200);
      await add("main", "bbbb2222", 7.5);
      await add("main", undefined, 3, 503);
      await add("backup", "cccc3333", 40);
      await add(undefined, undefined, 1, 401); // no channel answered: not a key's
      await log.append(entry({ requestId: "late", time: 999_999, channel: "main", key: "aaaa1111", durationMs: 5 }));
      const rows = await log.keyHealth({ sinceMs: 0, untilMs: 100_000 });
      assert.deepEqual(rows, [
        { channel: "backup", key: "cccc3333", requests: 1, errors: 0, latencySample: 1, p50Ms: 40, p95Ms: 40 },
        { channel: "main", requests: 1, errors: 1, latencySample: 1, p50Ms: 3, p95Ms: 3 },
        { channel: "main", key: "aaaa1111", requests: 20, errors: 3, latencySample: 20, p50Ms: 100, p95Ms: 190 },
        { channel: "main", key: "bbbb2222", requests: 1, errors: 0, latencySample: 1, p50Ms: 7.5, p95Ms: 7.5 },
      ]);
      assert.deepEqual(await log.keyHealth({ sinceMs: 200_000, untilMs: 300_000 }), []);
    });

    if (reopens) test("an append that resolved survives closing and reopening the log", async () => {
      assert.ok(fx.reopen, "a fixture that reopens has reopen()");
      await Promise.all(Array.from({ length: 20 }, (_, i) => log.append(entry({ requestId: `d${i}`, costNano: 3n }))));
      await log.refund("d0", 99);
      await log.close();
      log = await fx.reopen();
      try {
        assert.equal((await log.logs({ limit: 1000 })).length, 20);
        assert.equal(await log.spentByUser("alice"), 57n);
        assert.equal((await log.logs({ requestId: "d0" }))[0].refundedAt, 99);
        await log.append(entry({ requestId: "d1", costNano: 1000n }));
        assert.equal(await log.spentByToken("t1"), 57n, "still once per request id");
      } finally {
        await log.close();
      }
    });
  });
}
