// One contract suite for every Store implementation (SQLite on a file, SQLite in memory,
// the in-memory store): counters, idempotent record, exact money, log filters, spend,
// refunds.

import { after, beforeEach, afterEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore } from "../../src/state/memory.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import type { Store } from "../../src/state/store.js";
import { entry } from "../helpers/usage-entry.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-store-contract-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const implementations: Record<string, () => Store> = {
  "sqlite file": () => openSqliteStore(join(dir, `nested/s${++files}.db`)),
  "sqlite :memory:": () => openSqliteStore(":memory:"),
  memory: () => createMemoryStore(),
};

for (const [name, open] of Object.entries(implementations)) {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(() => (store = open()));
    afterEach(() => store.close());

    test("record adds the cost to the token's and the user's spend", () => {
      assert.equal(store.spentByToken("t1"), 0n);
      store.record(entry({ requestId: "a", costNano: 300n }));
      store.record(entry({ requestId: "b", costNano: 200n, token: "t2" }));
      store.record(entry({ requestId: "c", costNano: 7n, user: "bob", token: "t3" }));
      assert.equal(store.spentByToken("t1"), 300n);
      assert.equal(store.spentByToken("t2"), 200n);
      assert.equal(store.spentByUser("alice"), 500n);
      assert.equal(store.spentByUser("bob"), 7n);
      assert.equal(store.spentByUser("nobody"), 0n);
    });

    test("a request id recorded twice is logged and charged once", () => {
      store.record(entry({ requestId: "dup", costNano: 100n }));
      store.record(entry({ requestId: "dup", costNano: 100n, time: 1_800_000_000_000 }));
      assert.equal(store.spentByToken("t1"), 100n);
      assert.equal(store.spentByUser("alice"), 100n);
      assert.equal(store.logs({}).length, 1);
      assert.equal(store.logs({})[0].time, 1_700_000_000_000);
    });

    test("money is exact bigint nano-units", () => {
      const costs = [1n, 999_999_999n, 2n ** 53n + 1n, 123_456_789_012_345n];
      costs.forEach((costNano, i) => store.record(entry({ requestId: `m${i}`, costNano })));
      const total = costs.reduce((a, b) => a + b, 0n);
      assert.equal(store.spentByToken("t1"), total);
      assert.equal(store.spentByUser("alice"), total);
      assert.equal(store.spend("user", {})[0].costNano, total);
      assert.equal(store.logs({ requestId: "m2" })[0].costNano, 2n ** 53n + 1n);
    });

    test("an entry round-trips, optional fields absent or present", () => {
      const full = entry({
        requestId: "full",
        upstreamModel: "gpt-4o-mini-2024-07-18",
        channel: "openai-main",
        upstreamProtocol: "openai",
        error: "upstream_timeout",
        ttfbMs: 3.25,
        estimated: true,
        status: 504,
        droppedFields: ["context_management", "tools[].defer_loading"],
      });
      const bare = entry({ requestId: "bare", time: full.time - 1 });
      store.record(full);
      store.record(bare);
      assert.deepEqual(store.logs({}), [full, bare]);
      assert.equal("channel" in store.logs({ requestId: "bare" })[0], false);
    });

    test("logs filter by each field, newest first, with a limit", () => {
      const t0 = 1_700_000_000_000;
      store.record(entry({ requestId: "r1", time: t0 + 1, token: "t1", user: "alice", model: "m1", status: 200 }));
      store.record(entry({ requestId: "r2", time: t0 + 3, token: "t2", user: "alice", model: "m2", status: 429 }));
      store.record(entry({ requestId: "r3", time: t0 + 2, token: "t3", user: "bob", model: "m1", status: 200 }));
      store.record(entry({ requestId: "r4", time: t0 + 3, token: "t3", user: "bob", model: "m2", status: 502 }));
      const ids = (f: Parameters<Store["logs"]>[0]) => store.logs(f).map((e) => e.requestId);
      assert.deepEqual(ids({}), ["r4", "r2", "r3", "r1"]);
      assert.deepEqual(ids({ requestId: "r3" }), ["r3"]);
      assert.deepEqual(ids({ token: "t3" }), ["r4", "r3"]);
      assert.deepEqual(ids({ user: "alice" }), ["r2", "r1"]);
      assert.deepEqual(ids({ model: "m1" }), ["r3", "r1"]);
      assert.deepEqual(ids({ status: 200 }), ["r3", "r1"]);
      assert.deepEqual(ids({ since: t0 + 2 }), ["r4", "r2", "r3"]);
      assert.deepEqual(ids({ until: t0 + 3 }), ["r3", "r1"]);
      assert.deepEqual(ids({ since: t0 + 2, until: t0 + 3, user: "bob" }), ["r3"]);
      assert.deepEqual(ids({ limit: 2 }), ["r4", "r2"]);
      assert.deepEqual(ids({ model: "m2", limit: 1 }), ["r4"]);
      assert.deepEqual(ids({ user: "carol" }), []);
    });

    test("logs default to the newest 100 entries", () => {
      for (let i = 0; i < 105; i++) store.record(entry({ requestId: `n${i}`, time: i }));
      const logs = store.logs({});
      assert.equal(logs.length, 100);
      assert.equal(logs[0].requestId, "n104");
    });

    test("spend aggregates per dimension over [since, until)", () => {
      const u = (input: number) => ({ input, cacheRead: 1, cacheWrite: 2, output: 3, reasoning: 1 });
      store.record(entry({ requestId: "s1", time: 10, token: "k1", user: "alice", model: "m1", group: "g1", usage: u(1), costNano: 5n }));
      store.record(entry({ requestId: "s2", time: 20, token: "k2", user: "alice", model: "m2", group: "g1", usage: u(2), costNano: 7n }));
      store.record(entry({ requestId: "s3", time: 30, token: "k3", user: "bob", model: "m1", group: "g2", usage: u(4), costNano: 20n }));
      const usage = (input: number, n: number) => ({ input, cacheRead: n, cacheWrite: 2 * n, output: 3 * n, reasoning: n });
      assert.deepEqual(store.spend("user", {}), [
        { key: "bob", requests: 1, usage: usage(4, 1), costNano: 20n },
        { key: "alice", requests: 2, usage: usage(3, 2), costNano: 12n },
      ]);
      assert.deepEqual(store.spend("model", {}).map((r) => [r.key, r.requests, r.costNano]), [["m1", 2, 25n], ["m2", 1, 7n]]);
      assert.deepEqual(store.spend("group", {}).map((r) => [r.key, r.costNano]), [["g2", 20n], ["g1", 12n]]);
      assert.deepEqual(store.spend("token", {}).map((r) => r.key), ["k3", "k2", "k1"]);
      assert.deepEqual(store.spend("user", { since: 20 }).map((r) => [r.key, r.costNano]), [["bob", 20n], ["alice", 7n]]);
      assert.deepEqual(store.spend("user", { until: 30 }).map((r) => [r.key, r.requests]), [["alice", 2]]);
      assert.deepEqual(store.spend("model", { since: 11, until: 30 }).map((r) => r.key), ["m2"]);
      assert.deepEqual(store.spend("token", { since: 31 }), []);
    });

    test("refund marks the entry and takes its cost off the token's and the user's spend", async () => {
      await store.record(entry({ requestId: "job", costNano: 800n }));
      await store.record(entry({ requestId: "other", costNano: 5n }));
      assert.deepEqual(store.refund("job", 1_700_000_000_123), { kind: "refunded", token: "t1", user: "alice", costNano: 800n });
      assert.equal(store.spentByToken("t1"), 5n);
      assert.equal(store.spentByUser("alice"), 5n);
      const [refunded] = store.logs({ requestId: "job" });
      assert.equal(refunded.refundedAt, 1_700_000_000_123);
      assert.equal(refunded.costNano, 800n, "the entry keeps what was charged");
      assert.equal("refundedAt" in store.logs({ requestId: "other" })[0], false);
    });

    test("a request id is refunded once; an unknown one not at all", async () => {
      await store.record(entry({ requestId: "job", costNano: 2n ** 53n + 1n }));
      assert.equal(store.refund("job", 10).kind, "refunded");
      assert.deepEqual(store.refund("job", 20), { kind: "already-refunded" });
      assert.deepEqual(store.refund("nope", 30), { kind: "not-recorded" });
      assert.equal(store.spentByToken("t1"), 0n);
      assert.equal(store.spentByUser("alice"), 0n);
      assert.equal(store.logs({ requestId: "job" })[0].refundedAt, 10);
      // A late duplicate of the refunded request charges nothing either.
      await store.record(entry({ requestId: "job", costNano: 7n }));
      assert.equal(store.spentByUser("alice"), 0n);
    });

    test("spend aggregates leave refunded costs out but count the request", async () => {
      await store.record(entry({ requestId: "r1", time: 10, costNano: 30n }));
      await store.record(entry({ requestId: "r2", time: 20, costNano: 12n }));
      store.refund("r1", 25);
      assert.deepEqual(store.spend("user", {}).map((r) => [r.key, r.requests, r.costNano]), [["alice", 2, 12n]]);
    });

    test("record ignores a refundedAt it is given; only refund sets it", async () => {
      await store.record(entry({ requestId: "r", costNano: 9n, refundedAt: 5 }));
      assert.equal("refundedAt" in store.logs({})[0], false);
      assert.equal(store.spentByUser("alice"), 9n);
    });

    test("spend rows of equal cost are ordered by key", () => {
      for (const user of ["carol", "alice", "bob"]) store.record(entry({ requestId: user, user, costNano: 1n }));
      assert.deepEqual(store.spend("user", {}).map((r) => r.key), ["alice", "bob", "carol"]);
    });

    test("a cost that is not a bigint is refused", async () => {
      await assert.rejects(store.record(entry({ requestId: "x", costNano: 5 as unknown as bigint })), TypeError);
      assert.equal(store.logs({}).length, 0);
    });
  });
}
