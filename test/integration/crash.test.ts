// kill -9 under load: a spawned `gateway` on a SQLite store serves a burst of requests,
// then is SIGKILLed with more requests in flight, and restarted on the same store. Every
// request the client saw answered before the kill is in the usage log after the restart
// with its exact cost (a charge is durable before its answer's last bytes go: replayed from
// the journal if SQLite had not caught up), the log sums to the spend counters, nothing is
// charged twice, no reservation survives, and `gateway logs` / `gateway usage` read the
// store while it runs.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { eventually } from "../helpers/gateway.js";
import { alive, exited, runGateway, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { formatNano } from "../../src/billing/cost.js";
import { GROUP_COMMIT_MS, openSqliteStore } from "../../src/state/sqlite.js";
import type { Store } from "../../src/state/store.js";
import {
  TOKEN, channel, completionAnswer, config, rawRequest, startRawUpstream, streamAnswer, token,
  type RawResponse, type RawUpstream,
} from "./support.js";

/** The fake usage (prompt 12 incl. 2 cached, completion 5) at input 0.15, output 0.6,
 * cache_read_ratio 0.5, multiplier 0.7: (1.5 + 0.15 + 3) / 1e6 × 0.7 = 3255 nano. */
const COST = 3255n;
const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 2 } };
const CREDIT_NANO = 1_000_000_000n; // credit 1
/** Nano per output token at 0.6 per 1M × 0.7. */
const NANO_PER_OUTPUT_TOKEN = 420n;

/** The gateway command in `cwd`, logging warnings only. */
const run = (args: string[], cwd: string): Child => runGateway(args, cwd, "warn");

/** Runs `n` requests, at most `concurrency` at once; resolves when all have settled. */
async function load(n: number, concurrency: number, send: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await send(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

describe("crash recovery (kill -9 under load)", () => {
  let dir: string;
  let dbPath: string;
  let file: string;
  let upstream: RawUpstream;
  let delayMs = () => 0;
  const answered = { count: 0, inflight: 0 };
  const children: Child[] = [];
  let reader: Store | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-crash-"));
    dbPath = join(dir, "g.db");
    file = join(dir, "gateway.yaml");
    upstream = await startRawUpstream((body, res) => {
      answered.inflight++;
      const timer = setTimeout(() => {
        answered.inflight--;
        if (res.destroyed) return;
        answered.count++;
        if (body.stream === true) streamAnswer(res, body.model, ["crash ", "test ", "answer"], usage);
        else completionAnswer(res, body.model, "crash test answer", usage);
      }, delayMs());
      res.on("close", () => { if (!res.writableFinished) { clearTimeout(timer); answered.inflight--; } });
    });
  });
  after(async () => {
    reader?.close();
    for (const c of children) if (alive(c)) c.proc.kill("SIGKILL");
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const yaml = (port: number) => config({
    server: { listen: `127.0.0.1:${port}`, upstream_timeout: "10s", drain_timeout: "1s" },
    store: `sqlite:${dbPath}`,
    users: { alice: { credit: 1, groups: ["default"] } },
    tokens: [token("alice-main", TOKEN)],
    channels: [channel("main", upstream.url)],
    models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6, cache_read_ratio: 0.5 } } },
  });

  async function startServer(): Promise<{ child: Child; base: string }> {
    const { child, base } = await serveGateway({ file, cwd: dir, yaml, logLevel: "warn", readyMs: 15_000 });
    children.push(child);
    return { child, base };
  }

  const chat = (base: string, extra: Record<string, unknown> = {}) => rawRequest(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "crash me" }], ...extra }),
  });

  const idOf = (r: RawResponse) => String(r.headers["x-gateway-request-id"]);

  test("every committed charge survives, the log sums to the spend, nothing is charged twice", async (t) => {
    const first = await startServer();

    // Phase A: ~100 requests, a quarter of them streamed, 10 at a time.
    delayMs = () => Math.floor(Math.random() * 15);
    const counted: string[] = [];
    await load(100, 10, async (i) => {
      const r = await chat(first.base, i % 4 === 0 ? { stream: true } : {});
      assert.equal(r.status, 200, r.text);
      if (i % 4 === 0) assert.match(r.text, /data: \[DONE\]\n\n$/);
      counted.push(idOf(r));
    });
    assert.equal(counted.length, 100);

    // Every answer the client has is durable already (the journal) and a reader shows it
    // (it reads the journal's tail too); SQLite itself catches up within the group-commit
    // bound, which a plain connection sees.
    const pausedAt = Date.now();
    reader = openSqliteStore(dbPath, { mustExist: true });
    const store = reader;
    assert.ok(counted.every((id) => store.logs({ requestId: id }).length === 1), "phase A visible to a reader at once");
    const plain = new Database(dbPath, { readonly: true });
    const inSqlite = plain.prepare("SELECT 1 FROM usage_log WHERE request_id = ?").pluck();
    try {
      await eventually(() => counted.every((id) => inSqlite.get(id) !== undefined), 3000, "phase A in SQLite");
    } finally {
      plain.close();
    }
    const committedAfterMs = Date.now() - pausedAt;
    assert.ok(committedAfterMs < 50 * GROUP_COMMIT_MS, `SQLite caught up after ${committedAfterMs} ms`);

    // Phase B, three times: more load with a slower upstream, a third of it streamed;
    // SIGKILL while requests are in flight, restart on the same store, again.
    delayMs = () => 20 + Math.floor(Math.random() * 120);
    const phaseB = { ok: [] as string[], failed: 0 };
    let current = first;
    for (let round = 0; round < 3; round++) {
      const answeredNow: string[] = [];
      let killed = false;
      const target = current;
      const loadB = load(60, 20, async (i) => {
        if (killed) return;
        const stream = i % 3 === 0;
        try {
          const r = await chat(target.base, stream ? { stream: true } : {});
          // A whole answer: the client has it, so its charge must survive the kill.
          if (r.status === 200 && (!stream || r.text.endsWith("data: [DONE]\n\n"))) answeredNow.push(idOf(r));
          else phaseB.failed++;
        } catch {
          phaseB.failed++; // cut off by the kill
        }
      });
      await eventually(() => answeredNow.length >= 5 && answered.inflight >= 5, 5000, `phase B round ${round + 1} under way`);
      target.child.proc.kill("SIGKILL");
      killed = true;
      const { signal } = await exited(target.child, 5000);
      assert.equal(signal, "SIGKILL");
      await loadB;
      phaseB.ok.push(...answeredNow);
      current = await startServer();
    }
    assert.ok(phaseB.failed >= 3, "some requests were in flight at each kill");

    // The last restart, on the same store.
    const second = current;
    const entries = store.logs({ limit: 1_000_000 });
    const byId = new Map(entries.map((e) => [e.requestId, e]));
    assert.equal(byId.size, entries.length, "one entry per request id");
    for (const id of counted) {
      const e = byId.get(id);
      assert.ok(e, `committed request ${id} is missing after the crash`);
      assert.equal(e.status, 200);
      assert.equal(e.costNano, COST, `cost of ${id}`);
      assert.equal(e.estimated, false);
    }
    // whatever else survived was charged exactly, or (a failure) not at all
    for (const e of entries) assert.ok(e.costNano === COST || (e.costNano === 0n && e.status !== 200), JSON.stringify(e, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v)));
    const charged = entries.filter((e) => e.costNano > 0n);
    assert.ok(charged.length <= answered.count, `${charged.length} charges for ${answered.count} upstream answers`);
    const sum = entries.reduce((s, e) => s + e.costNano, 0n);
    assert.equal(sum, COST * BigInt(charged.length));
    assert.equal(store.spentByUser("alice"), sum, "user spend = Σ cost of the usage log");
    assert.equal(store.spentByToken("alice-main"), sum, "token spend = Σ cost of the usage log");
    assert.deepEqual(store.spend("user", {}).map((r) => [r.key, r.costNano]), [["alice", sum]]);

    // Every 200 the client saw before the kill has its entry, with its exact cost.
    for (const id of phaseB.ok) {
      const e = byId.get(id);
      assert.ok(e, `request ${id} was answered before the kill but its charge is missing`);
      assert.equal(e.costNano, COST, `cost of ${id}`);
    }

    t.diagnostic(`phase A in SQLite ${committedAfterMs} ms after the pause; phase B (3 kills): ${phaseB.ok.length} answered, ` +
      `${phaseB.failed} cut off by the kill; ${entries.length} entries survived, ${charged.length} charged`);

    // the CLI reads the store while the restarted server runs
    const logs = run(["logs", "--json", "--request-id", counted[0], "--config", file], dir);
    assert.equal((await exited(logs, 20_000)).code, 0, logs.stderr);
    const lines = logs.stdout.trim().split("\n");
    assert.equal(lines.length, 1, logs.stdout);
    const line = JSON.parse(lines[0]);
    assert.equal(line.requestId, counted[0]);
    assert.equal(typeof line.cost, "number");
    assert.equal(line.cost, 0.000003255);
    assert.equal(line.status, 200);
    assert.equal(line.model, "gpt-4o-mini");
    const usageCli = run(["usage", "--json", "--by", "user", "--config", file], dir);
    assert.equal((await exited(usageCli, 20_000)).code, 0, usageCli.stderr);
    const row = JSON.parse(usageCli.stdout.trim());
    assert.equal(row.key, "alice");
    assert.equal(row.requests, entries.length);
    assert.equal(row.cost, Number(formatNano(sum)));

    // No reservation survived: the restarted gateway sees credit − spend, all of it usable.
    const remaining = CREDIT_NANO - sum;
    const refused = await chat(second.base, { max_tokens: 10_000_000 });
    assert.equal(refused.status, 402, refused.text);
    assert.equal(refused.json.error.code, "pre_deduction_failed");
    assert.match(refused.json.error.message, new RegExp(`remaining balance is ${formatNano(remaining).replace(".", "\\.")},`));
    const required = BigInt(Math.round(Number(/pre-deduction of (\d+(?:\.\d+)?)/.exec(refused.json.error.message)![1]) * 1e9));
    const inputPart = required - 10_000_000n * NANO_PER_OUTPUT_TOKEN;
    const maxTokens = (remaining - inputPart) / NANO_PER_OUTPUT_TOKEN;
    assert.ok(maxTokens * NANO_PER_OUTPUT_TOKEN >= (remaining * 9n) / 10n, "the request needs most of the balance");
    delayMs = () => 0;
    const big = await chat(second.base, { max_tokens: Number(maxTokens) });
    assert.equal(big.status, 200, big.text);
    await eventually(() => store.spentByUser("alice") === sum + COST, 3000, "the request after restart to be charged");
    assert.equal(store.logs({ requestId: idOf(big) })[0]?.costNano, COST);

    second.child.proc.kill("SIGTERM");
    assert.equal((await exited(second.child, 10_000)).code, 0, second.child.stderr);
  });
});
