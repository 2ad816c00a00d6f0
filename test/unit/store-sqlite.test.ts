// SQLite-only behaviour: data survives reopening and a real kill -9 of a writing process
// (read concurrently meanwhile), migrations are versioned and idempotent, a newer database
// is refused, and money never silently overflows into a float.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { migrate, migrations, schemaVersion } from "../../src/state/migrations.js";
import { openState, openUsageLog, parseStoreSpec } from "../../src/state/open.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { journalLine } from "../../src/state/sqlite-journal.js";
import { entry } from "../helpers/usage-entry.js";
import { assertSameOnceIngested, withJournalTail } from "../helpers/sqlite-tail.js";
import { eventually } from "../helpers/gateway.js";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), "gateway-store-sqlite-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function raw(path: string): Database.Database {
  const db = new Database(path);
  db.defaultSafeIntegers(true);
  return db;
}

test("reopening the file keeps entries and spend", () => {
  const path = join(dir, "reopen/a/gateway.db");
  const first = openSqliteStore(path);
  first.record(entry({ requestId: "r1", costNano: 2n ** 60n }));
  first.close();
  const second = openSqliteStore(path);
  assert.equal(second.spentByUser("alice"), 2n ** 60n);
  assert.deepEqual(second.logs({}).map((e) => e.requestId), ["r1"]);
  second.record(entry({ requestId: "r1", costNano: 5n }));
  assert.equal(second.spentByToken("t1"), 2n ** 60n);
  second.close();
});

test("the file is in WAL mode", () => {
  const path = join(dir, "pragmas.db");
  openSqliteStore(path).close();
  const db = raw(path);
  assert.equal(db.pragma("journal_mode", { simple: true }), "wal");
  db.close();
});

test("migrations are numbered 1..n, set user_version and are idempotent", () => {
  assert.deepEqual(migrations.map((m) => m.version), migrations.map((_, i) => i + 1));
  const path = join(dir, "migrate.db");
  openSqliteStore(path).close();
  const db = raw(path);
  assert.equal(Number(db.pragma("user_version", { simple: true })), schemaVersion);
  migrate(db);
  migrate(db);
  assert.equal(Number(db.pragma("user_version", { simple: true })), schemaVersion);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
  assert.deepEqual(tables, [
    "account_changes", "account_tokens", "account_users", "audit_log", "code_batches", "credit_entries", "redemption_codes",
    "spend", "sqlite_sequence", "usage_daily", "usage_log",
  ]);
  db.close();
  openSqliteStore(path).close();
});

test("a spend counter that would overflow 64 bits is refused, not rounded", async () => {
  const store = openSqliteStore(join(dir, "overflow.db"));
  store.record(entry({ requestId: "big1", costNano: 2n ** 62n }));
  store.record(entry({ requestId: "big2", token: "t2", user: "bob", costNano: 2n ** 62n - 1n }));
  const big3 = store.record(entry({ requestId: "big3", token: "t3", costNano: 2n ** 62n }));
  // Group commit: the batch fails, the good entries are committed one by one, and the
  // overflowing one is refused loudly.
  assert.throws(() => store.flush(), (err: unknown) =>
    err instanceof AggregateError && err.errors.length === 1 && /CHECK constraint/.test(String(err.errors[0])));
  assert.equal(store.spentByUser("alice"), 2n ** 62n);
  assert.equal(store.spentByUser("bob"), 2n ** 62n - 1n);
  assert.equal(store.spentByToken("t3"), 0n);
  assert.deepEqual(store.logs({ requestId: "big3" }), []);
  await big3; // durable in the journal; SQLite's refusal is reported by flush() and logged
  store.close();
});

test("a database with a newer schema than the code is refused", () => {
  const path = join(dir, "newer.db");
  openSqliteStore(path).close();
  const db = raw(path);
  db.pragma(`user_version = ${schemaVersion + 1}`);
  db.close();
  assert.throws(() => openSqliteStore(path), /newer than this gateway knows/);
});

test("mustExist refuses a missing file without creating it", () => {
  const path = join(dir, "missing/gateway.db");
  assert.throws(() => openSqliteStore(path, { mustExist: true }), /no store at/);
  assert.equal(existsSync(join(dir, "missing")), false);
});

test("store specs: sqlite paths resolve against the base dir; schemes this build lacks are refused", async () => {
  assert.deepEqual(parseStoreSpec("sqlite:./data/g.db", "/etc/gw"), { kind: "sqlite", path: "/etc/gw/data/g.db" });
  assert.deepEqual(parseStoreSpec("sqlite:/var/g.db", "/etc/gw"), { kind: "sqlite", path: "/var/g.db" });
  assert.deepEqual(parseStoreSpec("sqlite::memory:", "/etc/gw"), { kind: "sqlite", path: ":memory:" });
  assert.deepEqual(parseStoreSpec("memory:", "/etc/gw"), { kind: "memory" });
  assert.deepEqual(parseStoreSpec("postgres://x/y", "/etc/gw"), { kind: "postgres", url: "postgres://x/y" });
  assert.throws(() => parseStoreSpec("mysql://x", dir), /expected memory:, sqlite:<path>, redis:\/\/host:port\/db or postgres:\/\/…/);
  // Redis holds live state only: the usage log must be on a ledger.
  await assert.rejects(openState({ store: "redis://localhost:6379/0" }, { baseDir: dir }), /keeps no usage log: add ledger:/);
  await assert.rejects(openState({ store: "postgres://x/y" }, { baseDir: dir }), /PostgreSQL holds the usage log: write it as ledger:/);
  await assert.rejects(openUsageLog({ store: "redis://localhost:6379/0" }, { baseDir: dir }), /keeps no usage log/);
  const state = await openState({ store: "sqlite:./spec/g.db" }, { baseDir: dir });
  await state.usageLog.append(entry({ requestId: "s" }));
  await state.close();
  assert.equal(existsSync(join(dir, "spec/g.db")), true);
  const log = await openUsageLog({ store: "sqlite:./spec/g.db" }, { baseDir: dir, mustExist: true });
  assert.deepEqual((await log.logs({})).map((e) => e.requestId), ["s"]);
  await assert.rejects(log.append(entry({ requestId: "t" })), /read only/);
  await log.close();
  await assert.rejects(openUsageLog({ store: "sqlite:./spec/none.db" }, { baseDir: dir, mustExist: true }), /no store at/);
});

for (const mode of ["flush", "record"] as const) {
test(`every id a writer printed once ${mode === "flush" ? "flush() returned" : "record() resolved (journaled, not yet in SQLite)"} survives kill -9, and spend matches the log`, { timeout: 30_000 }, async () => {
  const path = join(dir, `killed-${mode}.db`);
  const helper = join(root, "test/helpers/store-writer.ts");
  const child = spawn(process.execPath, ["--import", "tsx", helper, path, mode], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  const printed: string[] = [];
  let buffered = "";
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on("close", (_code, signal) => r(signal)));
  try {
    await new Promise<void>((ready, fail) => {
      child.stdout.on("data", (c: Buffer) => {
        buffered += c.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop()!;
        printed.push(...lines);
        if (printed.length >= 1500) ready();
      });
      exited.then(() => fail(new Error(`writer exited before being killed: ${stderr}`)));
    });
    // A second connection (the CLI) reads while the writer commits.
    const reader = openSqliteStore(path, { mustExist: true });
    assert.equal(reader.logs({ limit: 1 }).length, 1);
    assert.equal(reader.spend("user", {}).length, 2);
    reader.close();
  } finally {
    child.kill("SIGKILL");
  }
  assert.equal(await exited, "SIGKILL");

  const store = openSqliteStore(path); // replays what the journal holds
  const logged = new Set(store.logs({ limit: 10_000_000 }).map((e) => e.requestId));
  store.close();
  const missing = printed.filter((id) => !logged.has(id));
  assert.deepEqual(missing, [], `${missing.length} committed ids lost`);
  assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith(`killed-${mode}.db-charges-`)), [], "replayed and closed: no journal left");
  const db = raw(path);
  const logTotal = db.prepare("SELECT SUM(cost_nano) FROM usage_log").pluck().get() as bigint;
  for (const kind of ["token", "user"]) {
    const spendTotal = db.prepare("SELECT SUM(nano) FROM spend WHERE kind = ?").pluck().get(kind) as bigint;
    assert.equal(spendTotal, logTotal, `${kind} spend equals the usage log`);
  }
  db.close();
});
}

test("commits move to a writer thread once it has started; reads still see every entry at once", async () => {
  const path = join(dir, "thread/gateway.db");
  const threads = () => readdirSync("/proc/self/task").length;
  const store = openSqliteStore(path);
  const before = threads();
  store.record(entry({ requestId: "first", costNano: 3n })); // committed here: the thread is still starting
  assert.equal(store.spentByToken("t1"), 3n);
  await new Promise((r) => setTimeout(r, 500));
  assert.ok(threads() > before, "a writer thread runs");
  for (let i = 0; i < 1200; i++) store.record(entry({ requestId: `r${i}`, costNano: 2n })); // spans several batches
  store.record(entry({ requestId: "r7", costNano: 1000n })); // a duplicate id: ignored, not charged
  assert.equal(store.spentByToken("t1"), 3n + 2400n); // flushes and waits for the thread
  const reader = raw(path); // another connection sees what a kill -9 would leave on disk
  assert.equal(reader.prepare("SELECT COUNT(*) FROM usage_log").pluck().get(), 1201n);
  assert.equal(reader.prepare("SELECT nano FROM spend WHERE kind = 'user' AND name = 'alice'").pluck().get(), 2403n);
  reader.close();
  const bad = store.record(entry({ requestId: "bad", costNano: 2n ** 63n - 1n })); // overflows the spend counter
  assert.throws(() => store.flush(), (err: unknown) => err instanceof AggregateError && /CHECK constraint/.test(String(err.errors[0])));
  await bad;
  store.close();
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(threads() <= before, "close() ends the writer thread");
});

test("journal segments rotate as they fill, SQLite takes them all in, and each is deleted once held", async () => {
  const path = join(dir, "rotate/gateway.db");
  const segments = () => readdirSync(join(dir, "rotate")).filter((f) => f.includes("-charges-")).length;
  const store = openSqliteStore(path, { journalSegmentBytes: 2048 }); // ~6 entries a segment
  const recorded: Promise<void>[] = [];
  for (let i = 0; i < 200; i++) {
    recorded.push(store.record(entry({ requestId: `rot${i}`, costNano: 5n })));
    if (i % 10 === 9) await Promise.all(recorded.splice(0)); // durable: its group was written
  }
  await Promise.all(recorded);
  assert.equal(store.spentByToken("t1"), 1000n); // flushes: SQLite holds every entry
  assert.equal(store.logs({ limit: 1000 }).length, 200);
  await eventually(() => segments() <= 1, 3000, "the closed segments to be deleted");
  store.close();
  assert.equal(segments(), 0, "a clean close leaves no journal");
  const reopened = openSqliteStore(path);
  assert.equal(reopened.spentByUser("alice"), 1000n, "nothing replayed twice");
  reopened.close();
});

test("a journal line written before dropped_fields existed (one value short) is replayed as dropping nothing", () => {
  mkdirSync(join(dir, "legacy"), { recursive: true });
  const path = join(dir, "legacy/old.db");
  const old = ["old-1", 1_700_000_000_000, "t1", "alice", "default", "gpt-4o-mini", null, null, "chat-completions", null,
    10, 0, 0, 5, 0, "1000", 200, null, 12.5, null, 0];
  writeFileSync(`${path}-charges-000001.jsonl`, JSON.stringify(old) + "\n");
  const store = openSqliteStore(path);
  try {
    const [e] = store.logs({ requestId: "old-1" });
    assert.equal(e?.costNano, 1000n);
    assert.equal("droppedFields" in e, false);
    store.record(entry({ requestId: "new-1", droppedFields: ["thinking.display"] }));
    store.flush();
    assert.deepEqual(store.logs({ requestId: "new-1" })[0].droppedFields, ["thinking.display"]);
  } finally {
    store.close();
  }
});

test("a reader in another process sees the journal's entries SQLite does not hold yet, exactly as SQLite will", async () => {
  const path = join(dir, "tail/gateway.db");
  await withJournalTail(path, { journalSegmentBytes: 2048, safeIntegers: true }, async (world) => {
    const { store, reader, locker } = world;
    await store.record(entry({ requestId: "in-sqlite", time: 1000, costNano: 7n, model: "m1" }));
    store.flush();
    // SQLite takes in nothing more until the lock goes (ingest waits it out).
    locker.exec("BEGIN IMMEDIATE");
    const journaled: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      journaled.push(store.record(entry({ requestId: `j${i}`, time: 1000 + i, costNano: 10n, token: i % 2 ? "t1" : "t2", user: i % 4 ? "alice" : "bob", model: "m2" })));
    }
    journaled.push(store.record(entry({ requestId: "j3", time: 5000, costNano: 999n }))); // a duplicate id: ignored
    await Promise.all(journaled);
    assert.equal(locker.prepare("SELECT COUNT(*) FROM usage_log").pluck().get(), 1n, "SQLite holds only the first");

    const seen = () => ({
      logs: reader.logs({ limit: 1000 }).map((e) => e.requestId),
      newest3: reader.logs({ limit: 3 }).map((e) => e.requestId),
      filtered: reader.logs({ token: "t2", since: 1010, until: 1020 }).map((e) => e.requestId),
      spend: { user: reader.spend("user", {}), model: reader.spend("model", { since: 1000, until: 1039 }) },
      alice: reader.spentByUser("alice"),
      t2: reader.spentByToken("t2"),
    });
    const during = seen();
    assert.equal(during.logs.length, 41);
    assert.deepEqual(during.newest3, ["j39", "j38", "j37"]);
    assert.deepEqual(during.filtered, ["j18", "j16", "j14", "j12", "j10"]);
    assert.equal(during.alice, 7n + 30n * 10n);
    assert.equal(during.t2, 20n * 10n);
    assert.deepEqual(during.spend.user.map((r) => [r.key, r.requests, r.costNano]), [["alice", 31, 307n], ["bob", 10, 100n]]);
    assert.deepEqual(during.spend.model.map((r) => [r.key, r.requests, r.costNano, r.usage.output]), [["m2", 39, 390n, 195], ["m1", 1, 7n, 5]]);

    assertSameOnceIngested(world, seen, during);
  });
});

test("backpressure: once SQLite lags the journal by the bound, a charge resolves only when it catches up; the journal stays bounded", async () => {
  const path = join(dir, "backpressure/gateway.db");
  const journalBytes = () => readdirSync(join(dir, "backpressure")).filter((f) => f.includes("-charges-"))
    .reduce((sum, f) => { try { return sum + statSync(join(dir, "backpressure", f)).size; } catch { return sum; } }, 0);
  const bound = 8192;
  const line = journalLine(entry({ requestId: "bp000" })).length;
  await withJournalTail(path, { journalSegmentBytes: 4096, journalBacklogBytes: bound, safeIntegers: true }, async (world) => {
    const { store, reader, locker } = world;
    await store.record(entry({ requestId: "warm" }));
    store.flush();
    locker.exec("BEGIN IMMEDIATE"); // SQLite takes in nothing more for now
    let resolved = 0;
    // One request at a time, as a client loop would: each waits for its charge.
    const loop = (async () => {
      for (let i = 0; i < 200; i++) {
        await store.record(entry({ requestId: `bp${String(i).padStart(3, "0")}` }));
        resolved++;
      }
    })();
    // A charge waits once the lines before it pass the bound; it is durable all the same.
    const stalledAt = Math.floor(bound / line);
    await eventually(() => resolved >= stalledAt - 1 && reader.logs({ limit: 1000 }).length === resolved + 2, 5000, "the charges to stop at the bound");
    assert.ok(resolved <= stalledAt + 1, `${resolved} charges resolved; the bound holds ${stalledAt} lines`);
    // On disk: the backlog, the part of a segment already taken in, the charge waiting.
    assert.ok(journalBytes() <= bound + 4096 + 2 * line, `journal ${journalBytes()} bytes on disk, bound ${bound} + a segment`);
    locker.exec("ROLLBACK");
    await loop;
    assert.equal(resolved, 200);
    assert.equal(store.spentByUser("alice"), 201n * 1000n);
    assert.equal(reader.spentByUser("alice"), 201n * 1000n);
  });
});

test("usageBuckets in a reader in another process: SQLite's buckets with the journal's tail added, refunds left out", async () => {
  const path = join(dir, "tail-buckets/gateway.db");
  await withJournalTail(path, { journalSegmentBytes: 2048, safeIntegers: true }, async (world) => {
    const { store, reader, locker } = world;
    // In SQLite: one entry per bucket of 100 ms, and one refunded.
    await store.record(entry({ requestId: "s1", time: 1050, costNano: 2n ** 53n + 1n }));
    await store.record(entry({ requestId: "s2", time: 1150, costNano: 5n, user: "bob" }));
    await store.record(entry({ requestId: "s3", time: 1160, costNano: 1000n }));
    store.flush();
    assert.equal(store.refund("s3", 2000).kind, "refunded");
    locker.exec("BEGIN IMMEDIATE"); // SQLite takes in nothing more for now
    const journaled: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      // Into s1's bucket, s2's, and one SQLite has nothing in; alice's t1 and t2, and bob's t2.
      journaled.push(store.record(entry({ requestId: `j${i}`, time: 1000 + (i % 3) * 100 + i, costNano: 10n,
        token: i % 2 ? "t1" : "t2", user: i % 5 ? "alice" : "bob" })));
    }
    journaled.push(store.record(entry({ requestId: "s1", time: 1900, costNano: 999n }))); // a duplicate id: ignored
    await Promise.all(journaled);
    assert.equal(locker.prepare("SELECT COUNT(*) FROM usage_log").pluck().get(), 3n, "SQLite holds only the first three");

    const seen = () => ({
      alice: reader.usageBuckets({ kind: "user", name: "alice" }, 0, 100),
      bob: reader.usageBuckets({ kind: "user", name: "bob" }, 0, 100),
      t1: reader.usageBuckets({ kind: "token", name: "t1" }, 1000, 100),
      t1Since: reader.usageBuckets({ kind: "token", name: "t1" }, 1115, 100),
    });
    const during = seen();
    const count = (pred: (i: number) => boolean) => Array.from({ length: 30 }, (_, i) => i).filter(pred).length;
    const alice = (b: number) => count((i) => i % 5 !== 0 && i % 3 === b);
    assert.deepEqual(during.alice, [
      { bucket: 10, costNano: 2n ** 53n + 1n + BigInt(alice(0)) * 10n, tokens: 18 * (1 + alice(0)) },
      { bucket: 11, costNano: BigInt(alice(1)) * 10n, tokens: 18 * alice(1) },
      { bucket: 12, costNano: BigInt(alice(2)) * 10n, tokens: 18 * alice(2) },
    ]);
    const bob = (b: number) => count((i) => i % 5 === 0 && i % 3 === b);
    assert.deepEqual(during.bob.map((b) => [b.bucket, b.costNano]), [[10, BigInt(bob(0)) * 10n], [11, 5n + BigInt(bob(1)) * 10n], [12, BigInt(bob(2)) * 10n]]);
    const t1 = (b: number, since = 0) => count((i) => i % 2 === 1 && i % 3 === b && 1000 + b * 100 + i >= since);
    // s2 is bob's, on t1 too.
    assert.deepEqual(during.t1.map((b) => [b.bucket, b.costNano]), [[10, 2n ** 53n + 1n + BigInt(t1(0)) * 10n], [11, 5n + BigInt(t1(1)) * 10n], [12, BigInt(t1(2)) * 10n]]);
    assert.deepEqual(during.t1Since.map((b) => [b.bucket, b.tokens]), [[11, 18 * (1 + t1(1, 1115))], [12, 18 * t1(2, 1115)]]);

    assertSameOnceIngested(world, seen, during);
    assert.deepEqual(store.usageBuckets({ kind: "user", name: "alice" }, 0, 100), during.alice, "and the writer's own view");
  });
});

test("traffic and keyHealth in a reader in another process: SQLite's aggregates with the journal's tail added", async () => {
  const path = join(dir, "tail-traffic/gateway.db");
  await withJournalTail(path, { journalSegmentBytes: 2048, safeIntegers: true }, async (world) => {
    const { store, reader, locker } = world;
    await store.record(entry({ requestId: "s1", time: 1050, costNano: 2n ** 53n + 1n, channel: "c", key: "k1", durationMs: 10 }));
    await store.record(entry({ requestId: "s2", time: 1150, costNano: 5n, status: 500, channel: "c", key: "k1", durationMs: 20 }));
    store.flush();
    locker.exec("BEGIN IMMEDIATE"); // SQLite takes in nothing more for now
    const journaled: Promise<void>[] = [];
    for (let i = 0; i < 10; i++) {
      journaled.push(store.record(entry({ requestId: `j${i}`, time: 1000 + (i % 2) * 100 + i, costNano: 10n, status: i < 3 ? 429 : 200,
        channel: "c", key: i % 2 ? "k2" : "k1", durationMs: 30 + i })));
    }
    await Promise.all(journaled);
    assert.equal(locker.prepare("SELECT COUNT(*) FROM usage_log").pluck().get(), 2n, "SQLite holds only the first two");
    const seen = () => ({ traffic: reader.traffic({ sinceMs: 0, untilMs: 2000 }, 100), health: reader.keyHealth({ sinceMs: 0, untilMs: 2000 }) });
    const during = seen();
    assert.deepEqual(during.traffic, [
      { bucket: 10, requests: 6, errors: 2, costNano: 2n ** 53n + 1n + 50n },
      { bucket: 11, requests: 6, errors: 2, costNano: 5n + 50n },
    ]);
    assert.deepEqual(during.health, [
      { channel: "c", key: "k1", requests: 7, errors: 3, latencySample: 7, p50Ms: 32, p95Ms: 38 },
      { channel: "c", key: "k2", requests: 5, errors: 1, latencySample: 5, p50Ms: 35, p95Ms: 39 },
    ]);
    assertSameOnceIngested(world, seen, during);
  });
});

test("usage by user rides on the usage_log_user index (user, time), by token on usage_log_token", () => {
  const path = join(dir, "user-index.db");
  openSqliteStore(path).close();
  const db = raw(path);
  try {
    const plan = (column: string) => (db.prepare(`EXPLAIN QUERY PLAN SELECT time / 1000 AS bucket, SUM(cost_nano) FROM usage_log
      WHERE ${column} = ? AND time >= ? AND refunded_at IS NULL GROUP BY bucket`).all("x", 0) as { detail: string }[]).map((r) => r.detail).join("; ");
    assert.match(plan("user"), /USING INDEX usage_log_user \(user=\? AND time>\?\)/);
    assert.match(plan("token"), /USING INDEX usage_log_token \(token=\? AND time>\?\)/);
  } finally {
    db.close();
  }
});
