// Daily rollups and retention: the rollups contract on memory, a SQLite file and
// PostgreSQL; the sweep as openState runs it (at start, archiving, one process at a time);
// the migrations' backfill; and usage.retention in gateway.yaml.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { compileSource, ConfigError } from "../../src/config/index.js";
import { minimalConfig } from "../helpers/minimal-config.js";
import { createMemoryStore } from "../../src/state/memory.js";
import { openState } from "../../src/state/open.js";
import { openPostgresUsageLog } from "../../src/state/postgres-log.js";
import { DAY_MS, type Rollup, type RollupMap } from "../../src/state/rollups.js";
import { RetentionSweeper } from "../../src/state/retention.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { StoreUsageLog } from "../../src/state/store-usage-log.js";
import { usageRollupsContract } from "../contracts/usage-rollups.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { copyLedgerTables, ledgerAtVersion } from "../helpers/postgres-ledger.js";
import { entry } from "../helpers/usage-entry.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-rollups-"));
let files = 0;
const freshFile = () => join(dir, `r${++files}.db`);
let database: TestDatabase | undefined;
after(async () => {
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A usage_daily row as a driver returns it (integers as bigint, number or string). */
type RollupRow = Record<"day" | "user" | "token" | "model" | "channel" | "grp", string | number | bigint> &
  Record<"requests" | "input" | "cache_read" | "cache_write" | "output" | "reasoning" | "cost_nano" | "channel_cost_nano" | "channel_cost_unknown", string | number | bigint>;

function rollupOfRow(r: RollupRow): Rollup {
  return {
    day: Number(r.day), user: String(r.user), token: String(r.token), model: String(r.model), channel: String(r.channel), group: String(r.grp),
    requests: Number(r.requests),
    usage: { input: Number(r.input), cacheRead: Number(r.cache_read), cacheWrite: Number(r.cache_write), output: Number(r.output), reasoning: Number(r.reasoning) },
    costNano: BigInt(r.cost_nano), channelCostNano: BigInt(r.channel_cost_nano), channelCostUnknown: Number(r.channel_cost_unknown),
  };
}

function sqliteRollups(path: string): Rollup[] {
  const db = new Database(path, { readonly: true });
  try {
    db.defaultSafeIntegers(true);
    return (db.prepare("SELECT * FROM usage_daily").all() as RollupRow[]).map(rollupOfRow);
  } finally {
    db.close();
  }
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

usageRollupsContract("memory", async () => {
  const store = createMemoryStore();
  const usageLog = new StoreUsageLog(store);
  return { usageLog, rollups: async () => (store as unknown as { rollups: RollupMap }).rollups.rows(), close: () => usageLog.close() };
});

usageRollupsContract("sqlite file", async () => {
  const path = freshFile();
  const usageLog = new StoreUsageLog(openSqliteStore(path));
  return {
    usageLog,
    rollups: async () => {
      await usageLog.flush();
      return sqliteRollups(path);
    },
    close: () => usageLog.close(),
  };
});

usageRollupsContract("postgres", async () => {
  database ??= await createTestDatabase("rollups");
  const url = database.url;
  const usageLog = await openPostgresUsageLog(url);
  await sql(url, "TRUNCATE usage_log, spend, usage_daily");
  return { usageLog, rollups: async () => (await sql<RollupRow>(url, "SELECT * FROM usage_daily")).map(rollupOfRow), close: () => usageLog.close() };
});

/** Resolves once `check` holds, polling on the event loop (no fixed sleep); fails after `ms`. */
async function until(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("retention as a gateway runs it", () => {
  const now = Date.now();
  const oldEntries = (n: number, prefix: string) =>
    Array.from({ length: n }, (_, i) => entry({ requestId: `${prefix}${i}`, time: now - 500 * DAY_MS + i * 1000, costNano: BigInt(i + 1) }));

  test("openState with usage.retention sweeps at start, archiving as gzip JSON lines, and keeps spend", async () => {
    const path = freshFile();
    const seed = new StoreUsageLog(openSqliteStore(path));
    const old = oldEntries(1200, "o");
    await Promise.all(old.map((e) => seed.append(e)));
    await seed.append(entry({ requestId: "recent", time: now - DAY_MS }));
    const spentBefore = await seed.spentByUser("alice");
    const byModel = await seed.spend("model", {});
    await seed.close();

    const archiveDir = join(dir, "archive");
    const state = await openState({ store: `sqlite:${path}` }, { baseDir: dir, retention: { retentionMs: 400 * DAY_MS, archiveDir } });
    try {
      await until(async () => (await state.usageLog.logs({ limit: 5000 })).length === 1);
      assert.equal((await state.usageLog.logs({}))[0].requestId, "recent");
      assert.equal(await state.usageLog.spentByUser("alice"), spentBefore);
      assert.deepEqual(await state.usageLog.spend("model", {}), byModel);
      await until(() => existsSync(archiveDir) && readdirSync(archiveDir).length === 1);
      const lines = gunzipSync(readFileSync(join(archiveDir, readdirSync(archiveDir)[0]))).toString("utf8").trim().split("\n");
      assert.equal(lines.length, old.length);
      const first = JSON.parse(lines.find((l) => l.includes('"o0"'))!) as { requestId: string; costNano: string };
      assert.equal(first.costNano, "1"); // money as an exact decimal string
    } finally {
      await state.close();
    }
    assert.equal(existsSync(`${path}.sweep-lock`), false);
  });

  test("one process sweeps a SQLite file at a time: a live process's lock makes a sweep skip, a dead one's is taken over", async () => {
    const path = freshFile();
    const log = new StoreUsageLog(openSqliteStore(path));
    try {
      await Promise.all(oldEntries(300, "x").map((e) => log.append(e)));
      await log.flush();
      const sweeper = new RetentionSweeper(log, { retentionMs: 400 * DAY_MS });
      writeFileSync(`${path}.sweep-lock`, String(process.ppid)); // another live process sweeps
      assert.deepEqual(await sweeper.sweep(), { ran: false, removed: 0, batches: 0 });
      assert.equal((await log.logs({ limit: 1000 })).length, 300);
      writeFileSync(`${path}.sweep-lock`, String(spawnSync(process.execPath, ["-e", ""]).pid)); // it died
      const result = await sweeper.sweep();
      assert.deepEqual([result.ran, result.removed], [true, 300]);
      assert.equal(existsSync(`${path}.sweep-lock`), false);
    } finally {
      await log.close();
    }
  });

  test("one gateway sweeps a PostgreSQL ledger at a time (advisory lock)", async () => {
    database ??= await createTestDatabase("rollups");
    const a = await openPostgresUsageLog(database.url);
    const b = await openPostgresUsageLog(database.url);
    try {
      await sql(database.url, "TRUNCATE usage_log, spend, usage_daily");
      await Promise.all(oldEntries(300, "p").map((e) => a.append(e)));
      let inner: boolean | undefined;
      const outer = await a.sweepAlone(async () => {
        inner = (await new RetentionSweeper(b, { retentionMs: 400 * DAY_MS }).sweep()).ran;
      });
      assert.deepEqual([outer, inner], [true, false]);
      const result = await new RetentionSweeper(b, { retentionMs: 400 * DAY_MS }).sweep();
      assert.deepEqual([result.ran, result.removed], [true, 300]);
      assert.equal((await b.spend("user", {}))[0].requests, 300);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("the migrations backfill rollups from the entries already there", () => {
  test("SQLite (migration 9)", async () => {
    const path = freshFile();
    const log = new StoreUsageLog(openSqliteStore(path));
    await Promise.all([1, 2, 3].map((i) => log.append(entry({ requestId: `b${i}`, time: Date.UTC(2026, 0, i), costNano: BigInt(i) }))));
    await log.refund("b2", Date.UTC(2026, 1, 1));
    await log.close();
    const expected = sqliteRollups(path);
    // As a database written before migration 9: no rollups yet.
    const db = new Database(path);
    db.exec("DROP TABLE usage_daily; PRAGMA user_version = 8;");
    db.close();
    const again = new StoreUsageLog(openSqliteStore(path));
    await again.close();
    assert.deepEqual(sqliteRollups(path), expected);
    assert.deepEqual(expected.map((r) => r.costNano), [1n, 0n, 3n]);
  });

  test("PostgreSQL (migration 6)", async () => {
    const written = await createTestDatabase("backfill");
    const old = await createTestDatabase("backfill5");
    try {
      const log = await openPostgresUsageLog(written.url);
      await Promise.all([1, 2, 3].map((i) => log.append(entry({ requestId: `b${i}`, time: Date.UTC(2026, 0, i), costNano: BigInt(i) }))));
      await log.refund("b2", Date.UTC(2026, 1, 1));
      await log.close();
      const read = async (url: string) => (await sql<RollupRow>(url, "SELECT * FROM usage_daily ORDER BY day")).map(rollupOfRow);
      const expected = await read(written.url);
      // The same entries in a ledger of schema 5, which had no rollups.
      await ledgerAtVersion(old.url, 5);
      await copyLedgerTables(written.url, old.url, ["usage_log", "spend"]);
      await (await openPostgresUsageLog(old.url)).close();
      assert.deepEqual(await read(old.url), expected);
      assert.deepEqual(expected.map((r) => r.costNano), [1n, 0n, 3n]);
    } finally {
      await written.drop();
      await old.drop();
    }
  });
});

describe("usage.retention in gateway.yaml", () => {
  const compile = (usage: string) => compileSource(`${minimalConfig}\nusage: ${usage}\n`, { path: join(dir, "gateway.yaml"), env: {} });
  const issues = (usage: string) => {
    try {
      compile(usage);
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.issues.map((i) => `${i.path}: ${i.message}`);
    }
    return [];
  };

  test("compiles to the retention and the archive folder, relative to the config file", () => {
    const { runtime } = compile("{ retention: 400d, archive: ./archive }");
    assert.deepEqual(runtime.usageRetention, { retentionMs: 400 * DAY_MS, archiveDir: join(dir, "archive") });
    assert.equal(compile("{ timezone: UTC }").runtime.usageRetention, undefined);
  });

  test("refuses a retention shorter than budgets need, and an archive without one", () => {
    assert.match(issues("{ retention: 10d }").join("\n"), /usage\.retention: must be at least 35d/);
    assert.match(issues("{ retention: soon }").join("\n"), /usage\.retention/);
    assert.match(issues("{ archive: ./a }").join("\n"), /usage\.archive: an archive needs usage\.retention/);
  });
});
