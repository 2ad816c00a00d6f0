// The PostgreSQL usage log on the machine's real server (a fresh database per file): the
// usage-log behaviours, group commit, exactly-once refunds across pools, int8 exactness,
// migrations racing, an unreachable or vanishing server, kill -9 of an appending process,
// and `gateway migrate` from a SQLite store.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { runMigrate } from "../../src/cli/migrate.js";
import { openUsageLog } from "../../src/state/open.js";
import { openPostgresUsageLog, PostgresUsageLog, type PostgresLogOptions } from "../../src/state/postgres-log.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import type { UsageEntry } from "../../src/state/store.js";
import { usageLogContract } from "../contracts/usage-log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { entry } from "../helpers/usage-entry.js";
import { tcpProxy } from "../helpers/tcp-proxy.js";

let db: TestDatabase;
const opened: PostgresUsageLog[] = [];
const dir = mkdtempSync(join(tmpdir(), "gateway-pg-"));

before(async () => (db = await createTestDatabase("pglog")));
after(async () => {
  await Promise.all(opened.map((l) => l.close().catch(() => {})));
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a log on the test database (or `url`), closed after the file. */
async function open(opts: PostgresLogOptions = {}, url = db.url): Promise<PostgresUsageLog> {
  const log = await openPostgresUsageLog(url, opts);
  opened.push(log);
  return log;
}

/** A direct query on the test database (or `url`). */
async function sql<R extends pg.QueryResultRow>(text: string, values: unknown[] = [], url = db.url): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The shared contract, on a database of its own emptied before each test.
let contractDb: TestDatabase | undefined;
after(() => contractDb?.drop());
usageLogContract("postgres", async () => {
  contractDb ??= await createTestDatabase("pgcontract");
  const url = contractDb.url;
  const usageLog = await openPostgresUsageLog(url);
  await sql("TRUNCATE usage_log, spend, usage_daily", [], url);
  return { usageLog, reopen: () => openPostgresUsageLog(url), close: () => usageLog.close() };
}, { reopens: true });

const turn = () => new Promise((r) => setImmediate(r));
let unique = 0;
/** Request ids, tokens and users unique to one test: the database is shared by the file. */
function scope(): (s: string) => string {
  const p = `s${++unique}-`;
  return (s) => p + s;
}

describe("PostgreSQL usage log: the usage-log behaviours", () => {
  let log: PostgresUsageLog;
  before(async () => (log = await open()));

  test("append adds the cost to the token's and the user's spend; totals list them", async () => {
    const $ = scope();
    await Promise.all([
      log.append(entry({ requestId: $("a"), token: $("t1"), user: $("alice"), costNano: 300n })),
      log.append(entry({ requestId: $("b"), token: $("t2"), user: $("alice"), costNano: 200n })),
      log.append(entry({ requestId: $("c"), token: $("t3"), user: $("bob"), costNano: 7n })),
    ]);
    assert.equal(await log.spentByToken($("t1")), 300n);
    assert.equal(await log.spentByToken($("t2")), 200n);
    assert.equal(await log.spentByUser($("alice")), 500n);
    assert.equal(await log.spentByUser($("bob")), 7n);
    assert.equal(await log.spentByUser($("nobody")), 0n);
    const totals = await log.spendTotals();
    assert.equal(totals.users.get($("alice")), 500n);
    assert.equal(totals.tokens.get($("t3")), 7n);
  });

  test("a request id appended twice, even in one commit, is logged and charged once", async () => {
    const $ = scope();
    const first = entry({ requestId: $("dup"), user: $("u"), costNano: 100n });
    await Promise.all([log.append(first), log.append({ ...first, status: 502 })]);
    await log.append({ ...first, costNano: 999n });
    assert.equal(await log.spentByUser($("u")), 100n);
    const logs = await log.logs({ user: $("u") });
    assert.equal(logs.length, 1);
    assert.equal(logs[0].status, 200);
  });

  test("an entry round-trips, optional fields absent or present", async () => {
    const $ = scope();
    const full = entry({
      requestId: $("full"), user: $("u"), upstreamModel: "gpt-4o-mini-2024-07-18", channel: "openai-main",
      upstreamProtocol: "openai", error: "upstream_timeout", ttfbMs: 3.25, estimated: true, status: 504,
      droppedFields: ["context_management", "tools[].defer_loading"], durationMs: 0.125,
      usage: { input: 2 ** 40, cacheRead: 1, cacheWrite: 2, output: 3, reasoning: 4 },
    });
    const bare = entry({ requestId: $("bare"), user: $("u"), time: full.time - 1 });
    await log.append(full);
    await log.append(bare);
    assert.deepEqual(await log.logs({ user: $("u") }), [full, bare]);
    assert.equal("channel" in (await log.logs({ requestId: $("bare") }))[0], false);
  });

  test("logs filter by each field, newest first (then latest appended), with a limit", async () => {
    const $ = scope();
    const t0 = 1_600_000_000_000 + unique * 1000;
    const g = $("grp");
    for (const e of [
      { requestId: $("r1"), time: t0 + 1, token: $("t1"), user: $("alice"), model: $("m1"), status: 200 },
      { requestId: $("r2"), time: t0 + 3, token: $("t2"), user: $("alice"), model: $("m2"), status: 429 },
      { requestId: $("r3"), time: t0 + 2, token: $("t3"), user: $("bob"), model: $("m1"), status: 200 },
      { requestId: $("r4"), time: t0 + 3, token: $("t3"), user: $("bob"), model: $("m2"), status: 502 },
    ]) await log.append(entry({ ...e, group: g }));
    const ids = async (f: Parameters<PostgresUsageLog["logs"]>[0]) =>
      (await log.logs({ since: t0, until: t0 + 1000, ...f })).map((e) => e.requestId);
    assert.deepEqual(await ids({}), [$("r4"), $("r2"), $("r3"), $("r1")]);
    assert.deepEqual(await ids({ requestId: $("r3") }), [$("r3")]);
    assert.deepEqual(await ids({ token: $("t3") }), [$("r4"), $("r3")]);
    assert.deepEqual(await ids({ user: $("alice") }), [$("r2"), $("r1")]);
    assert.deepEqual(await ids({ model: $("m1") }), [$("r3"), $("r1")]);
    assert.deepEqual(await ids({ status: 200 }), [$("r3"), $("r1")]);
    assert.deepEqual(await ids({ since: t0 + 2 }), [$("r4"), $("r2"), $("r3")]);
    assert.deepEqual(await ids({ until: t0 + 3 }), [$("r3"), $("r1")]);
    assert.deepEqual(await ids({ since: t0 + 2, until: t0 + 3, user: $("bob") }), [$("r3")]);
    assert.deepEqual(await ids({ limit: 2 }), [$("r4"), $("r2")]);
    assert.deepEqual(await ids({ model: $("m2"), limit: 1 }), [$("r4")]);
    assert.deepEqual(await ids({ user: $("carol") }), []);
  });

  test("logs default to the newest 100 entries", async () => {
    const $ = scope();
    await Promise.all(Array.from({ length: 105 }, (_, i) => log.append(entry({ requestId: $(`n${i}`), user: $("u"), time: i }))));
    const logs = await log.logs({ user: $("u") });
    assert.equal(logs.length, 100);
    assert.equal(logs[0].requestId, $("n104"));
  });

  test("spend aggregates per dimension over [since, until), refunds left out, keys bytewise", async () => {
    const $ = scope();
    const t = 1_500_000_000_000 + unique * 1000;
    const u = (input: number) => ({ input, cacheRead: 1, cacheWrite: 2, output: 3, reasoning: 1 });
    await log.append(entry({ requestId: $("s1"), time: t + 10, token: $("k1"), user: $("alice"), model: $("m1"), group: $("g1"), usage: u(1), costNano: 5n }));
    await log.append(entry({ requestId: $("s2"), time: t + 20, token: $("k2"), user: $("alice"), model: $("m2"), group: $("g1"), usage: u(2), costNano: 7n }));
    await log.append(entry({ requestId: $("s3"), time: t + 30, token: $("k3"), user: $("bob"), model: $("m1"), group: $("g2"), usage: u(4), costNano: 20n }));
    await log.append(entry({ requestId: $("s4"), time: t + 31, token: $("k3"), user: $("Bob"), model: $("m1"), group: $("g2"), usage: u(0), costNano: 0n }));
    const r = { since: t, until: t + 1000 };
    const usage = (input: number, n: number) => ({ input, cacheRead: n, cacheWrite: 2 * n, output: 3 * n, reasoning: n });
    assert.deepEqual(await log.spend("user", { since: t, until: t + 31 }), [
      { key: $("bob"), requests: 1, usage: usage(4, 1), costNano: 20n, channelCostNano: 0n, channelCostUnknown: 1 },
      { key: $("alice"), requests: 2, usage: usage(3, 2), costNano: 12n, channelCostNano: 0n, channelCostUnknown: 2 },
    ]);
    assert.deepEqual((await log.spend("model", r)).map((x) => [x.key, x.requests, x.costNano]), [[$("m1"), 3, 25n], [$("m2"), 1, 7n]]);
    assert.deepEqual((await log.spend("group", r)).map((x) => [x.key, x.costNano]), [[$("g2"), 20n], [$("g1"), 12n]]);
    assert.deepEqual((await log.spend("token", r)).map((x) => x.key), [$("k3"), $("k2"), $("k1")]);
    assert.deepEqual((await log.spend("user", { since: t + 20, until: t + 31 })).map((x) => [x.key, x.costNano]), [[$("bob"), 20n], [$("alice"), 7n]]);
    assert.deepEqual((await log.spend("model", { since: t + 11, until: t + 30 })).map((x) => x.key), [$("m2")]);
    assert.deepEqual(await log.spend("token", { since: t + 32, until: t + 1000 }), []);
    // "Bob" sorts before "alice" bytewise (as SQLite does), whatever the database's collation.
    await log.refund($("s1"), t + 40);
    await log.refund($("s2"), t + 40);
    assert.deepEqual((await log.spend("user", r)).map((x) => [x.key, x.requests, x.costNano]), [[$("bob"), 1, 20n], [$("Bob"), 1, 0n], [$("alice"), 2, 0n]]);
  });

  test("refund marks the entry once and takes its cost off the spend once; unknown ids are not-recorded", async () => {
    const $ = scope();
    await log.append(entry({ requestId: $("job"), token: $("t"), user: $("u"), costNano: 800n }));
    await log.append(entry({ requestId: $("other"), token: $("t"), user: $("u"), costNano: 5n }));
    assert.deepEqual(await log.refund($("job"), 1_700_000_000_123), { kind: "refunded", token: $("t"), user: $("u"), costNano: 800n });
    assert.deepEqual(await log.refund($("job"), 20), { kind: "already-refunded" });
    assert.deepEqual(await log.refund($("nope"), 30), { kind: "not-recorded" });
    assert.equal(await log.spentByToken($("t")), 5n);
    assert.equal(await log.spentByUser($("u")), 5n);
    const [refunded] = await log.logs({ requestId: $("job") });
    assert.equal(refunded.refundedAt, 1_700_000_000_123);
    assert.equal(refunded.costNano, 800n, "the entry keeps what was charged");
    assert.equal("refundedAt" in (await log.logs({ requestId: $("other") }))[0], false);
    // A late duplicate of the refunded request charges nothing either.
    await log.append(entry({ requestId: $("job"), token: $("t"), user: $("u"), costNano: 7n }));
    assert.equal(await log.spentByUser($("u")), 5n);
  });

  test("refund finds an append this process has not seen committed yet", async () => {
    const $ = scope();
    void log.append(entry({ requestId: $("late"), user: $("u"), costNano: 3n }));
    assert.equal((await log.refund($("late"), 1)).kind, "refunded");
    assert.equal(await log.spentByUser($("u")), 0n);
  });

  test("append ignores a refundedAt it is given; a cost that is not a bigint is refused", async () => {
    const $ = scope();
    await log.append(entry({ requestId: $("r"), user: $("u"), costNano: 9n, refundedAt: 5 }));
    assert.equal("refundedAt" in (await log.logs({ user: $("u") }))[0], false);
    assert.equal(await log.spentByUser($("u")), 9n);
    await assert.rejects(log.append(entry({ requestId: $("x"), costNano: 5 as unknown as bigint })), TypeError);
    assert.deepEqual(await log.logs({ requestId: $("x") }), []);
  });

  test("flush waits for every append made so far", async () => {
    const $ = scope();
    for (let i = 0; i < 50; i++) void log.append(entry({ requestId: $(`f${i}`), user: $("u"), costNano: 1n }));
    await log.flush();
    assert.equal(await log.spentByUser($("u")), 50n);
  });
});

describe("PostgreSQL usage log: group commit", () => {
  test("appends in flight together share a few commits; awaited one by one, one commit each", async () => {
    const log = await open();
    const $ = scope();
    for (let i = 0; i < 5; i++) await log.append(entry({ requestId: $(`seq${i}`), user: $("seq") }));
    assert.equal(log.commits, 5, "each awaited append is its own commit");

    const before = log.commits;
    const acks: Promise<void>[] = [log.append(entry({ requestId: $("first"), user: $("u"), costNano: 1n }))];
    await turn(); // the first commit is in flight now: what follows waits for the next
    for (let burst = 0; burst < 10; burst++) {
      for (let i = 0; i < 50; i++) acks.push(log.append(entry({ requestId: $(`g${burst}-${i}`), user: $("u"), costNano: 1n })));
      await turn();
    }
    await Promise.all(acks);
    const commits = log.commits - before;
    assert.ok(commits >= 2 && commits <= 6, `501 appends took ${commits} commits`);
    assert.equal(await log.spentByUser($("u")), 501n);
    assert.equal((await sql<{ n: string }>(`SELECT count(*) AS n FROM usage_log WHERE "user" = $1`, [$("u")]))[0].n, "501");
  });

  test("a row the server refuses fails alone; the rest of its commit is written", async () => {
    const log = await open();
    const $ = scope();
    const max = 2n ** 63n - 1n;
    await log.append(entry({ requestId: $("max"), token: $("t"), user: $("u"), costNano: max }));
    const results = await Promise.allSettled([
      log.append(entry({ requestId: $("over"), token: $("t"), user: $("u"), costNano: 1n })), // spend would pass 2^63 − 1
      log.append(entry({ requestId: $("fine"), token: $("t2"), user: $("u2"), costNano: 2n })),
    ]);
    assert.equal(results[0].status, "rejected");
    assert.match(String((results[0] as PromiseRejectedResult).reason), /out of range/);
    assert.equal(results[1].status, "fulfilled");
    assert.equal(await log.spentByUser($("u2")), 2n);
    assert.equal(await log.spentByUser($("u")), max);
    assert.deepEqual(await log.logs({ requestId: $("over") }), []);
  });
});

describe("PostgreSQL usage log: money and concurrency", () => {
  test("int8 money is exact near 2^63 (never a float)", async () => {
    const log = await open();
    const $ = scope();
    const costs = [2n ** 62n, 2n ** 62n - 2n ** 53n - 3n, 2n ** 53n + 1n, 1n]; // sums to 2^63 − 1
    await Promise.all(costs.map((costNano, i) => log.append(entry({ requestId: $(`m${i}`), token: $("t"), user: $("u"), costNano }))));
    const total = 2n ** 63n - 1n;
    assert.equal(await log.spentByToken($("t")), total);
    assert.equal(await log.spentByUser($("u")), total);
    assert.equal((await log.spend("user", {})).find((r) => r.key === $("u"))?.costNano, total);
    assert.equal((await log.logs({ requestId: $("m2") }))[0].costNano, 2n ** 53n + 1n);
    assert.equal((await log.spendTotals()).tokens.get($("t")), total);
  });

  test("a refund raced from two pools (two gateways) happens exactly once", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const $ = scope();
    const ids = Array.from({ length: 20 }, (_, i) => $(`job${i}`));
    await Promise.all(ids.map((requestId) => a.append(entry({ requestId, token: $("t"), user: $("u"), costNano: 1000n }))));
    const results = await Promise.all(ids.flatMap((id) => [a, b, a, b].map((log, i) => log.refund(id, i))));
    assert.equal(results.filter((r) => r.kind === "refunded").length, ids.length);
    assert.equal(results.filter((r) => r.kind === "already-refunded").length, ids.length * 3);
    assert.equal(await a.spentByUser($("u")), 0n);
    assert.equal(await b.spentByToken($("t")), 0n);
  });

  test("two gateways appending at once keep spend equal to the log", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const $ = scope();
    const users = ["x", "y", "z"].map($);
    await Promise.all(Array.from({ length: 300 }, (_, i) =>
      (i % 2 ? a : b).append(entry({ requestId: $(`c${i}`), token: users[(i * 7) % 3], user: users[i % 3], costNano: BigInt(i) })),
    ));
    for (const u of users) {
      const [{ sum }] = await sql<{ sum: string }>(`SELECT sum(cost_nano) AS sum FROM usage_log WHERE "user" = $1`, [u]);
      assert.equal(await a.spentByUser(u), BigInt(sum));
    }
  });
});

describe("PostgreSQL ledger: opened from gateway.yaml's ledger key", () => {
  test("ledger: postgres://… opens the PostgreSQL usage log, whatever the store", async () => {
    const log = await openUsageLog({ store: "memory:", ledger: db.url }, { baseDir: dir });
    assert.ok(log instanceof PostgresUsageLog);
    opened.push(log);
    assert.deepEqual(log.health?.(), { degraded: [] });
  });
});

describe("PostgreSQL ledger: migrations", () => {
  test("gateways migrating one fresh database at once apply each migration once; reopening is harmless", async () => {
    const fresh = await createTestDatabase("pgmig");
    try {
      const logs = await Promise.all(Array.from({ length: 4 }, () => openPostgresUsageLog(fresh.url)));
      await Promise.all(logs.map((l) => l.close()));
      const again = await openPostgresUsageLog(fresh.url);
      await again.append(entry({ requestId: "after-reopen" }));
      await again.close();
      const client = new pg.Client({ connectionString: fresh.url });
      await client.connect();
      const { rows } = await client.query("SELECT version, description FROM schema_migrations ORDER BY version");
      assert.deepEqual(rows, [
        { version: 1, description: "usage log and settled spend" },
        { version: 2, description: "hosted tool calls billed per call" },
        { version: 3, description: "cost breakdowns and the cost to the operator" },
        { version: 4, description: "the channel key that served each request" },
        { version: 5, description: "accounts: users, tokens, credit ledger, redemption codes, audit log, change feed" },
        { version: 6, description: "daily rollups of the usage log" },
        { version: 7, description: "the usage log partitioned by month" },
        { version: 8, description: "daily rollups by user and by token" },
      ]);
      await client.query("INSERT INTO schema_migrations (version, description) VALUES (99, 'from the future')");
      await client.end();
      await assert.rejects(openPostgresUsageLog(fresh.url), /schema is version 99, newer than this gateway knows \(8\)/);
    } finally {
      await fresh.drop();
    }
  });
});

describe("PostgreSQL ledger: an unreachable server", () => {
  test("at start: a clear error naming postgres and the address, without the password, at once", async () => {
    const started = Date.now();
    await assert.rejects(openPostgresUsageLog("postgres://gw:s3cret@127.0.0.1:1/ledger"), (error: Error) => {
      assert.match(error.message, /postgres at postgres:\/\/gw@127\.0\.0\.1:1\/ledger/);
      assert.match(error.message, /ECONNREFUSED/);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
    assert.ok(Date.now() - started < 2000);
  });

  test("at start, a server that accepts and never answers: fails within the connect timeout", async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as net.AddressInfo).port;
    const started = Date.now();
    try {
      await assert.rejects(openPostgresUsageLog(`postgres://postgres@127.0.0.1:${port}/x`, { connectTimeoutMs: 500 }), /postgres at .*127\.0\.0\.1:\d+\/x.*timeout/i);
      assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    } finally {
      silent.close();
    }
  });

  test("while serving: appends fail promptly, health says postgres, and both recover when it returns", async () => {
    const proxy = await tcpProxy(5432);
    const url = new URL(db.url);
    url.port = String(proxy.port);
    const log = await open({ statementTimeoutMs: 1000, probeIntervalMs: 50 }, url.toString());
    const $ = scope();
    await log.append(entry({ requestId: $("before"), user: $("u") }));
    assert.deepEqual(log.health().degraded, []);

    await proxy.stop(); // the server is gone: connections reset, new ones refused
    let started = Date.now();
    await assert.rejects(log.append(entry({ requestId: $("lost"), user: $("u") })), /postgres at .* is unreachable/);
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    assert.deepEqual(log.health().degraded, ["postgres"]);

    await proxy.start();
    await eventually(() => log.health().degraded.length === 0, 5000, "health to recover");
    await log.append(entry({ requestId: $("after"), user: $("u") }));

    proxy.freeze(); // the server stops answering without closing anything
    started = Date.now();
    await assert.rejects(log.append(entry({ requestId: $("frozen"), user: $("u") })), /unreachable/);
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    await proxy.stop();
    await proxy.start();
    await eventually(async () => log.append(entry({ requestId: $("again"), user: $("u") })).then(() => true, () => false), 8000, "appends to work again");
    assert.deepEqual((await log.logs({ user: $("u") })).map((e) => e.requestId).sort(), [$("after"), $("again"), $("before")].sort());
    await proxy.stop();
  });
});

describe("PostgreSQL usage log: kill -9", () => {
  test("every append acknowledged before SIGKILL is in the table", async () => {
    const child = join(dir, "append-forever.mjs");
    const module = new URL("../../src/state/postgres-log.ts", import.meta.url).href;
    writeFileSync(child, `
      import { openPostgresUsageLog } from ${JSON.stringify(module)};
      const log = await openPostgresUsageLog(process.argv[2]);
      let n = 0;
      const entry = (requestId) => ({ requestId, time: Date.now(), token: "kt", user: "ku", group: "g", model: "m",
        inboundProtocol: "chat-completions", usage: { input: 1, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 },
        costNano: 1000n, status: 200, durationMs: 1, estimated: false });
      async function worker() {
        for (;;) {
          const id = "kill-" + n++;
          await log.append(entry(id));
          process.stdout.write(id + "\\n");
        }
      }
      for (let i = 0; i < 32; i++) void worker();
    `);
    const proc = spawn(process.execPath, ["--import", "tsx", child, db.url], { stdio: ["ignore", "pipe", "inherit"] });
    const acked: string[] = [];
    let partial = "";
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      acked.push(...lines);
    });
    // "close", not "exit": every line the child wrote before it died is read.
    const exited = new Promise<NodeJS.Signals | null>((r) => proc.on("close", (_code, signal) => r(signal)));
    await eventually(() => acked.length >= 2000, 30_000, "2000 acknowledged appends");
    proc.kill("SIGKILL");
    assert.equal(await exited, "SIGKILL");
    const rows = await sql<{ request_id: string }>("SELECT request_id FROM usage_log WHERE request_id = ANY($1)", [acked]);
    const missing = acked.filter((id) => !rows.some((r) => r.request_id === id));
    assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged appends were lost`);
    // Spend always equals the log, whatever the kill interrupted.
    const [{ n, sum }] = await sql<{ n: string; sum: string }>(`SELECT count(*) AS n, sum(cost_nano) AS sum FROM usage_log WHERE "user" = 'ku'`);
    const [{ nano }] = await sql<{ nano: string }>(`SELECT nano FROM spend WHERE kind = 'user' AND name = 'ku'`);
    assert.equal(BigInt(nano), BigInt(sum));
    assert.ok(Number(n) >= acked.length);
  });
});

describe("gateway migrate --from sqlite: --to postgres://", () => {
  test("copies entries and refunds once, prints both sides' totals, and is idempotent", async () => {
    const target = await createTestDatabase("pgmigrate");
    const file = join(dir, "data", "gateway.db");
    try {
      const store = openSqliteStore(file);
      const entries: UsageEntry[] = [
        entry({ requestId: "m1", costNano: 2n ** 53n + 1n, droppedFields: ["a", "b"], channel: "east", key: "1a2b3c4d",
          breakdown: "input=10@3/1M output=5@15/1M multiplier=1", channelCostNano: 2n ** 53n + 7n }),
        entry({ requestId: "m2", costNano: 700n, token: "t2", time: 1_700_000_000_001 }),
        entry({ requestId: "m3", costNano: 50n, user: "bob", token: "t3", status: 502, error: "upstream_error" }),
      ];
      for (const e of entries) await store.record(e);
      store.refund("m2", 1_700_000_000_500);
      store.close();

      const run = async () => {
        let out = "";
        let err = "";
        const code = await runMigrate(["--from", `sqlite:${file}`, "--to", target.url], { out: (t) => void (out += t), err: (t) => void (err += t) });
        return { code, out, err };
      };
      const first = await run();
      assert.equal(first.code, 0, first.err);
      assert.match(first.out, /copied 3 new entries/);
      assert.match(first.out, /sqlite .*: 3 entries \(1 refunded\), settled spend 9007199254741043 nano over 2 users and 2 tokens/);
      assert.match(first.out, /postgres .*: 3 entries \(1 refunded\), settled spend 9007199254741043 nano/);
      assert.match(first.out, /identical/);

      const second = await run();
      assert.equal(second.code, 0, second.err);
      assert.match(second.out, /copied 0 new entries .* \(3 were there already\)/);

      const ledger = await openPostgresUsageLog(target.url);
      try {
        const copied = await ledger.logs({});
        assert.deepEqual(copied.map((e) => e.requestId), ["m2", "m3", "m1"]);
        assert.equal(copied[0].refundedAt, 1_700_000_000_500);
        assert.deepEqual(copied[2], entries[0]); // the serving key's fingerprint included
        assert.deepEqual((await ledger.spend("key", {})).map((r) => [r.key, r.requests]), [["east/1a2b3c4d", 1], ["", 2]]);
        assert.equal(await ledger.spentByToken("t2"), 0n);
        assert.equal(await ledger.spentByUser("alice"), 2n ** 53n + 1n);
        assert.equal(await ledger.spentByUser("bob"), 50n);
        assert.deepEqual(await ledger.refund("m2", 1), { kind: "already-refunded" });
      } finally {
        await ledger.close();
      }
    } finally {
      await target.drop();
    }
  });

  test("after retention on the store: the removed entries' rollups and spend come across, once", async () => {
    const target = await createTestDatabase("pgcarry");
    const file = join(dir, "carry", "gateway.db");
    const DAY = 86_400_000;
    const t0 = Date.UTC(2026, 3, 1);
    try {
      const store = openSqliteStore(file);
      for (let i = 0; i < 30; i++) {
        await store.record(entry({ requestId: `c${i}`, time: t0 + i * (DAY / 3), user: i % 2 ? "alice" : "bob", token: i % 2 ? "a1" : "b1",
          costNano: BigInt(1000 * (i + 1)), ...(i % 4 ? { channel: "east", channelCostNano: BigInt(400 * i) } : {}) }));
      }
      store.refund("c4", t0 + 5 * DAY);
      const removeThrough = (before: number) => { while (store.removeBefore!(before, 7) > 0); };
      removeThrough(t0 + 4 * DAY); // the first four days' entries go; their rollups and spend stay
      store.close();

      const run = async () => {
        let out = "";
        let err = "";
        const code = await runMigrate(["--from", `sqlite:${file}`, "--to", target.url], { out: (t) => void (out += t), err: (t) => void (err += t) });
        return { code, out, err };
      };
      const rollupsOf = async () => {
        const sqlite = new Database(file, { readonly: true });
        sqlite.defaultSafeIntegers(true);
        const mine = (sqlite.prepare("SELECT * FROM usage_daily ORDER BY day, user, token, model, channel, grp").all() as Record<string, unknown>[])
          .map((r) => JSON.stringify(Object.values(r), (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)));
        sqlite.close();
        const theirs = (await sql<Record<string, unknown>>(`SELECT * FROM usage_daily ORDER BY day, "user", token, model, channel COLLATE "C", grp`, [], target.url))
          .map((r) => JSON.stringify(Object.values(r).map(String)));
        return { mine, theirs };
      };
      const first = await run();
      assert.equal(first.code, 0, first.out + first.err);
      assert.match(first.out, /copied 18 new entries/);
      assert.match(first.out, /carried over the rollups and spend of 12 entries retention removed \(73000 nano settled\)/);
      assert.match(first.out, /identical/);
      let r = await rollupsOf();
      assert.deepEqual(r.theirs, r.mine);

      const second = await run();
      assert.equal(second.code, 0, second.out + second.err);
      assert.match(second.out, /retention removed: carried over already/);
      assert.match(second.out, /identical/);
      r = await rollupsOf();
      assert.deepEqual(r.theirs, r.mine);

      // More retention on the store, then a third run: the ledger holds those entries from
      // the first run, so nothing more is carried over.
      const again = openSqliteStore(file);
      while (again.removeBefore!(t0 + 7 * DAY, 7) > 0);
      again.close();
      const third = await run();
      assert.equal(third.code, 0, third.out + third.err);
      assert.match(third.out, /retention removed: carried over already/);
      assert.match(third.out, /identical/);
      r = await rollupsOf();
      assert.deepEqual(r.theirs, r.mine);
    } finally {
      await target.drop();
    }
  });

  test("a bad command line exits 2; a missing file 1", async () => {
    let err = "";
    const io = { out: () => {}, err: (t: string) => void (err += t) };
    assert.equal(await runMigrate(["--from", "sqlite:x.db"], io), 2);
    assert.match(err, /both --from and --to/);
    assert.equal(await runMigrate(["--from", "redis://h/0", "--to", db.url], io), 2);
    assert.equal(await runMigrate(["--from", `sqlite:${join(dir, "none.db")}`, "--to", db.url], io), 1);
    assert.match(err, /no store at/);
  });
});

