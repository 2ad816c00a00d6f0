// The PostgreSQL usage log partitioned by month (migration 7, postgres-partitions.ts), on
// the machine's server: a ledger of schema 6 is migrated with every entry, its order, the
// spend and the rollups kept; months are made ahead and on demand, rows that went to the
// default partition move into their month when it is made; retention drops whole months
// (archiving them first when asked) and removes the cutoff's month row by row.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import pg from "pg";
import { openPostgresUsageLog, type PostgresUsageLog } from "../../src/state/postgres-log.js";
import { monthOf, partitionName } from "../../src/state/postgres-partitions.js";
import type { UsageEntry } from "../../src/state/store.js";
import { copyLedgerTables, ledgerAtVersion } from "../helpers/postgres-ledger.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { entry } from "../helpers/usage-entry.js";

const databases: TestDatabase[] = [];
after(() => Promise.all(databases.map((d) => d.drop())));

async function database(label: string): Promise<TestDatabase> {
  const db = await createTestDatabase(label);
  databases.push(db);
  return db;
}

async function sql<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The partitions of usage_log and the entries each holds, by name. */
async function partitions(url: string): Promise<Map<string, number>> {
  const rows = await sql<{ name: string; n: string }>(url, `
    SELECT c.relname AS name, (SELECT count(*) FROM usage_log u WHERE u.tableoid = c.oid) AS n
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'usage_log'::regclass`);
  return new Map(rows.map((r) => [r.name, Number(r.n)]));
}

const rollups = (url: string) => sql(url, `SELECT * FROM usage_daily ORDER BY day, "user", token, model, channel, grp`);
const JAN = Date.UTC(2026, 0, 1);
const FEB = Date.UTC(2026, 1, 1);
const MAR = Date.UTC(2026, 2, 1);
const DAY = 86_400_000;

/** `count` entries a day apart from `from`, with a refund among every seven. */
function monthOfEntries(prefix: string, from: number, count: number, step = DAY / 4): UsageEntry[] {
  return Array.from({ length: count }, (_, i) => entry({
    requestId: `${prefix}-${i}`, time: from + i * step, user: i % 2 ? "alice" : "bob", token: i % 2 ? "a1" : "b1",
    costNano: BigInt(1000 + i), channelCostNano: BigInt(700 + i), channel: i % 3 ? "east" : undefined,
  }));
}

async function appendAll(log: PostgresUsageLog, entries: readonly UsageEntry[]): Promise<void> {
  await Promise.all(entries.map((e) => log.append(e)));
  for (const [i, e] of entries.entries()) if (i % 7 === 3) await log.refund(e.requestId, e.time + 5);
}

describe("PostgreSQL usage log partitioned by month", () => {
  test("migration 7 partitions a ledger of schema 6: every entry, its order, spend and rollups kept", async () => {
    const written = await database("part_new");
    const old = await database("part_v6");
    // Entries over three months, some in one millisecond (their order is seq's).
    const entries = [
      ...monthOfEntries("jan", JAN + DAY, 40), ...monthOfEntries("feb", FEB, 30),
      ...Array.from({ length: 5 }, (_, i) => entry({ requestId: `same-ms-${i}`, time: MAR + 7, costNano: 5n })),
    ];
    const log = await openPostgresUsageLog(written.url);
    for (const e of entries) await log.append(e); // one by one: seq follows this order
    for (const [i, e] of entries.entries()) if (i % 7 === 3) await log.refund(e.requestId, e.time + 5);
    const expected = { logs: await log.logs({ limit: 1000 }), totals: await log.spendTotals(), rollups: await rollups(written.url) };
    await log.close();

    await ledgerAtVersion(old.url, 6);
    await copyLedgerTables(written.url, old.url, ["usage_log", "spend", "usage_daily"]);
    const migrated = await openPostgresUsageLog(old.url);
    try {
      const [{ kind }] = await sql<{ kind: string }>(old.url, "SELECT relkind AS kind FROM pg_class WHERE relname = 'usage_log'");
      assert.equal(kind, "p", "usage_log is a partitioned table");
      const parts = await partitions(old.url);
      assert.equal(parts.get("usage_log_y2026m01"), 40);
      assert.equal(parts.get("usage_log_y2026m02"), 30);
      assert.equal(parts.get("usage_log_y2026m03"), 5);
      assert.equal(parts.get("usage_log_default"), 0);
      const now = monthOf(Date.now());
      assert.ok(parts.has(partitionName(now)) && parts.has(partitionName(now + 1)), "this month and the next are made at open");

      assert.deepEqual(await migrated.logs({ limit: 1000 }), expected.logs);
      assert.deepEqual(await migrated.spendTotals(), expected.totals);
      assert.deepEqual(await rollups(old.url), expected.rollups);
      // Appends go on: a retried old entry is ignored, a new one in the same millisecond
      // sorts after the old ones (seq continues), refunds find entries in any month.
      await migrated.append(entries[0]);
      await migrated.append(entry({ requestId: "after", time: MAR + 7, costNano: 9n }));
      assert.deepEqual((await migrated.logs({ since: MAR, until: MAR + 8 })).map((e) => e.requestId),
        ["after", "same-ms-4", "same-ms-3", "same-ms-2", "same-ms-1", "same-ms-0"]);
      assert.deepEqual(await migrated.refund("jan-0", JAN + 2 * DAY), { kind: "refunded", token: "b1", user: "bob", costNano: 1000n });
      assert.equal((await migrated.refund("jan-3", FEB + DAY)).kind, "already-refunded");
      assert.equal((await migrated.logs({ requestId: "jan-0" })).length, 1);
    } finally {
      await migrated.close();
    }
  });

  test("an entry of a month with no partition gets one; entries that went to the default move into it", async () => {
    const db = await database("part_demand");
    const log = await openPostgresUsageLog(db.url);
    try {
      const far = Date.UTC(2031, 4, 10);
      // An entry written while its month had no partition (as when making one failed).
      await sql(db.url, `INSERT INTO usage_log (request_id, time, token, "user", grp, model, inbound_protocol, input, cache_read,
        cache_write, output, reasoning, cost_nano, status, duration_ms, estimated) VALUES ('stray', $1, 't1', 'alice', 'default', 'm',
        'chat-completions', 1, 0, 0, 1, 0, 10, 200, 1, false)`, [far + 1]);
      assert.equal((await partitions(db.url)).get("usage_log_default"), 1);
      await log.append(entry({ requestId: "far", time: far }));
      const parts = await partitions(db.url);
      assert.equal(parts.get("usage_log_y2031m05"), 2);
      assert.equal(parts.get("usage_log_default"), 0);
      assert.deepEqual((await log.logs({ since: far })).map((e) => e.requestId), ["stray", "far"]);
      // Times with no month of their own (before 1970) stay in the default.
      await log.append(entry({ requestId: "ancient", time: -5 * DAY }));
      assert.equal((await partitions(db.url)).get("usage_log_default"), 1);
    } finally {
      await log.close();
    }
  });

  test("gateways making the same month at once make it once, and lose no entry", async () => {
    const db = await database("part_race");
    const logs = await Promise.all([1, 2, 3].map(() => openPostgresUsageLog(db.url)));
    try {
      const far = Date.UTC(2032, 8, 3);
      await Promise.all(logs.flatMap((log, i) => Array.from({ length: 20 }, (_, j) => log.append(entry({ requestId: `r${i}-${j}`, time: far + j })))));
      const parts = await partitions(db.url);
      assert.equal(parts.get("usage_log_y2032m09"), 60);
      assert.equal(parts.get("usage_log_default"), 0);
    } finally {
      await Promise.all(logs.map((l) => l.close()));
    }
  });

  test("retention drops whole months at once and removes the cutoff's month row by row; rollups and spend stay", async () => {
    const db = await database("part_drop");
    const log = await openPostgresUsageLog(db.url);
    try {
      await appendAll(log, [...monthOfEntries("jan", JAN, 100), ...monthOfEntries("feb", FEB, 100), ...monthOfEntries("mar", MAR, 60)]);
      const cutoff = MAR + 10 * DAY; // January and February whole, the first ten days of March
      const kept = (await log.logs({ limit: 1000 })).filter((e) => e.time >= cutoff);
      const before = { totals: await log.spendTotals(), rollups: await rollups(db.url) };

      const first = await log.removeBefore(cutoff, 7);
      assert.equal(first, 200, "the first batch is the two whole months");
      let removed = first;
      let batches = 1;
      for (let n = -1; n !== 0; removed += n, batches++) n = await log.removeBefore(cutoff, 7);
      assert.equal(removed, 240);
      assert.ok(batches > 5, `March went row by row (${batches} batches)`);
      const parts = await partitions(db.url);
      assert.equal(parts.has("usage_log_y2026m01") || parts.has("usage_log_y2026m02"), false, "whole months are dropped");
      assert.equal(parts.get("usage_log_y2026m03"), 20);
      assert.deepEqual(await log.logs({ limit: 1000 }), kept);
      assert.deepEqual(await log.spendTotals(), before.totals);
      assert.deepEqual(await rollups(db.url), before.rollups);
      // A late entry of a dropped month gets its month again.
      await log.append(entry({ requestId: "late", time: FEB + 3 }));
      assert.equal((await partitions(db.url)).get("usage_log_y2026m02"), 1);
    } finally {
      await log.close();
    }
  });

  test("with an archive, whole months are archived batch by batch before their partitions go", async () => {
    const db = await database("part_archive");
    const log = await openPostgresUsageLog(db.url);
    try {
      await appendAll(log, [...monthOfEntries("jan", JAN, 50), ...monthOfEntries("feb", FEB, 30)]);
      const old = await log.logs({ until: FEB + 5 * DAY, limit: 1000 });
      const archived: UsageEntry[] = [];
      let removed = 0;
      for (let n = -1; n !== 0; removed += n) {
        n = await log.removeBefore(FEB + 5 * DAY, 16, async (batch) => void archived.push(...batch));
      }
      assert.equal(removed, old.length);
      const byId = (a: UsageEntry, b: UsageEntry) => (a.requestId < b.requestId ? -1 : 1);
      assert.deepEqual(archived.sort(byId), old.sort(byId));
      const parts = await partitions(db.url);
      assert.equal(parts.has("usage_log_y2026m01"), false, "the emptied month is dropped");
      assert.equal(parts.get("usage_log_y2026m02"), 30 - old.filter((e) => e.time >= FEB).length);
    } finally {
      await log.close();
    }
  });
});
