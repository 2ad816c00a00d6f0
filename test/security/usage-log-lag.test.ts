// The usage log keeps up (issue 18, item 11): on the default SQLite store, a spawned
// `gateway` serves a sustained burst while SQLite cannot take in what the journal holds
// (another connection holds the write lock, as an operator's shell or a backup may, and as
// a starved or slow ingest would look to a reader). Throughout, `gateway logs` and
// `gateway usage` must show every answer the client has already received: by design, not by
// timing, since a charge is durable in the journal before its answer's last bytes leave,
// and the readers read what SQLite does not hold yet from the journal. Once the burst ends,
// the log, `gateway usage` and the billing endpoint agree to the nano-unit while the lock is
// still held; once it is released, SQLite takes in every entry, none lost or doubled.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { runLogs } from "../../src/cli/logs.js";
import { runUsage } from "../../src/cli/usage.js";
import { eventually } from "../helpers/gateway.js";
import { alive, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { TOKEN, channel, completionAnswer, config, rawRequest, startRawUpstream, token, type RawUpstream } from "../integration/support.js";

/** prompt 12 (2 cached), completion 5 at input 0.15, output 0.6, cache_read_ratio 0.5,
 * multiplier 0.7: 3255 nano an answer. */
const COST = 3255n;
const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 2 } };
/** The burst: this long, or this many requests, whichever comes first; this many at once. */
const BURST_MS = 6000;
const MAX_REQUESTS = 8000;
const CONCURRENCY = 16;
/** Item 11's bound: an answer's entry is visible to the readers within this. */
const LAG_BOUND_MS = 2000;

/** "0.000003255" → 3255n. */
function nanoOf(decimal: string): bigint {
  const [int, frac = ""] = decimal.split(".");
  return BigInt(int + frac.padEnd(9, "0"));
}

/** Runs a CLI read command in this process; its stdout. */
async function cli(run: (args: string[], io: { out(t: string): void; err(t: string): void }) => Promise<number>, args: string[]): Promise<string> {
  let out = "";
  let err = "";
  const code = await run(args, { out: (t) => (out += t), err: (t) => (err += t) });
  assert.equal(code, 0, err);
  return out;
}

describe("the usage log keeps up with the hot path (default SQLite store)", () => {
  let dir: string;
  let dbPath: string;
  let upstream: RawUpstream;
  let child: Child | undefined;
  let locker: Database.Database | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-lag-"));
    dbPath = join(dir, "g.db");
    upstream = await startRawUpstream((body, res) => completionAnswer(res, body.model, "lag test answer", usage));
  });
  after(async () => {
    locker?.close();
    if (alive(child)) child!.proc.kill("SIGKILL");
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("every answer is in `gateway logs` and `gateway usage` while SQLite lags, exactly", { timeout: 60_000 }, async (t) => {
    const served = await serveGateway({
      file: join(dir, "gateway.yaml"), cwd: dir, logLevel: "warn", readyMs: 20_000,
      yaml: (port) => config({
        server: { listen: `127.0.0.1:${port}`, upstream_timeout: "10s", drain_timeout: "1s" },
        store: `sqlite:${dbPath}`,
        users: { alice: { credit: 1000, groups: ["default"] } },
        tokens: [token("alice-main", TOKEN)],
        channels: [channel("main", upstream.url)],
        models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6, cache_read_ratio: 0.5 } } },
      }),
    });
    child = served.child;
    const base = served.base;
    const store = ["--store", `sqlite:${dbPath}`];

    /** Request id → when the client had the whole answer. */
    const answered = new Map<string, number>();
    let sent = 0;
    const burstEnds = Date.now() + BURST_MS;
    const loop = async () => {
      while (Date.now() < burstEnds && sent < MAX_REQUESTS) {
        sent++;
        const r = await rawRequest(`${base}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "lag" }] }),
        });
        assert.equal(r.status, 200, r.text);
        answered.set(String(r.headers["x-gateway-request-id"]), Date.now());
      }
    };
    const burst = Promise.all(Array.from({ length: CONCURRENCY }, loop));

    // Once traffic flows, SQLite stops taking anything in: another connection holds its
    // write lock (past the writer's busy timeout) until the end of the checks.
    await eventually(() => answered.size >= 200, 20_000, "the burst to start");
    locker = new Database(dbPath);
    locker.exec("BEGIN IMMEDIATE");

    // Readers, back to back for the whole burst: no answer older than the bound may be
    // missing from a read; and by design none answered before the read began is.
    let reads = 0;
    let missedUnderBound = 0;
    let burstDone = false;
    void burst.finally(() => (burstDone = true));
    while (!burstDone) {
      const began = Date.now();
      const before = [...answered].filter(([, at]) => at < began);
      const out = await cli(runLogs, [...store, "--json", "--limit", "1000000"]);
      const visible = new Set(out.split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { requestId: string }).requestId));
      const missing = before.filter(([id]) => !visible.has(id));
      const late = missing.filter(([, at]) => began - at > LAG_BOUND_MS);
      assert.deepEqual(late.map(([id]) => id), [], `read ${reads}: ${late.length} of ${before.length} answers older than ${LAG_BOUND_MS} ms not in \`gateway logs\``);
      missedUnderBound += missing.length;
      reads++;
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(missedUnderBound, 0, "answers received before a read began but missing from it");
    await burst;
    const inSqlite = () => {
      const db = new Database(dbPath, { readonly: true });
      try {
        return Number(db.prepare("SELECT COUNT(*) FROM usage_log WHERE cost_nano > 0").pluck().get());
      } finally {
        db.close();
      }
    };
    t.diagnostic(`${answered.size} answers, ${reads} reads during the burst; SQLite held ${inSqlite()} entries at its end`);
    assert.ok(reads >= 2, `${reads} reads during the burst`);

    // At rest, lock still held: every reader agrees with what the clients were answered.
    const lines = (await cli(runLogs, [...store, "--json", "--limit", "1000000"])).split("\n").filter(Boolean);
    const ids = lines.map((l) => (JSON.parse(l) as { requestId: string }).requestId);
    assert.equal(new Set(ids).size, ids.length, "no entry twice");
    assert.deepEqual(new Set(ids), new Set(answered.keys()), "`gateway logs` holds exactly the answered requests");
    const logSum = lines.reduce((s, l) => s + nanoOf(/"cost":([0-9.]+)/.exec(l)![1]), 0n);
    assert.equal(logSum, COST * BigInt(answered.size));
    for (const by of ["user", "token", "model", "group"]) {
      const rows = (await cli(runUsage, [...store, "--json", "--by", by])).split("\n").filter(Boolean);
      const total = rows.reduce((s, l) => s + nanoOf(/"cost":([0-9.]+)/.exec(l)![1]), 0n);
      const requests = rows.reduce((s, l) => s + (JSON.parse(l) as { requests: number }).requests, 0);
      assert.equal(total, logSum, `gateway usage --by ${by}`);
      assert.equal(requests, answered.size, `gateway usage --by ${by}: requests`);
    }
    const billing = await rawRequest(`${base}/v1/dashboard/billing/usage`, { headers: { authorization: `Bearer ${TOKEN}` } });
    // In cents, as the exact decimal text of the sum (never a float's product).
    const cents = /"total_usage":([0-9.]+)/.exec(billing.text)![1];
    assert.equal(nanoOf(cents), logSum * 100n, `billing endpoint: ${billing.text}`);

    // The lock goes: SQLite takes in every entry, none lost or doubled, and no error.
    locker.exec("ROLLBACK");
    locker.close();
    locker = undefined;
    await eventually(() => inSqlite() === answered.size, 20_000, "SQLite to take in every entry")
      .catch((err: Error) => assert.fail(`${err.message}: ${inSqlite()} of ${answered.size}; gateway log:\n${child!.stderr.slice(0, 3000)}`));
    const db = new Database(dbPath, { readonly: true });
    db.defaultSafeIntegers(true);
    assert.equal(db.prepare("SELECT SUM(cost_nano) FROM usage_log").pluck().get(), logSum);
    assert.equal(db.prepare("SELECT nano FROM spend WHERE kind = 'user' AND name = 'alice'").pluck().get(), logSum);
    db.close();
    assert.doesNotMatch(child.stderr, /"level":"error"/, child.stderr.slice(0, 2000));
    t.diagnostic(`gateway log: ${child.stderr.split("\n").filter(Boolean).length} lines: ${child.stderr.slice(0, 600)}`);
  });
});
