// The usage log on PostgreSQL (node-postgres): the shared, durable system of record.
// Appends are committed in groups, one statement each: entries arriving while a commit is
// in flight share the next, which starts as soon as it ends (no timer), and each append
// resolves only once its commit has returned (settled before acknowledged).

import { formatToolCalls } from "../protocols/usage.js";
import pg from "pg";
import { log } from "../observability/log.js";
import { describePostgresUrl, openMigratedPool, postgresErrorText } from "./postgres-pool.js";
import { dropMonthsBefore, ensureMonthPartition, hasOwnPartition, monthOf, monthStart, type MonthIndex } from "./postgres-partitions.js";
import { entryOfRow, logLimit, SPEND_MONEY_SQL, spendRowOf, type SpendSqlRow, type UsageRow } from "./entry.js";
import type { StateHealth, SpendTotals, UsageLog } from "./interfaces.js";
import { dayText, mergeSpendRows, splitForRollups, type Rollup } from "./rollups.js";
import { daysOfBuckets, dayBucketMs, SERVED_KEY_SQL } from "./spend-keys.js";
import { NO_CHANNEL, type LogFilter, type RefundResult, type SpendDimension, type SpendRange, type SpendRow, type UsageBucket, type UsageEntry, type UsageSubject } from "./store.js";
import { checkTrafficQuery, ERROR_SQL, keyHealthOf, LATENCY_SAMPLE, type KeyHealthRow, type TrafficBucket, type TrafficRange } from "./traffic.js";
import { bucketSql, checkBucketQuery, firstMs } from "./usage-buckets.js";

/** How to open the ledger; the defaults suit a gateway, tests shorten them. */
export interface PostgresLogOptions {
  /** Connections in the pool; default 4. */
  readonly poolSize?: number;
  /** How long opening a connection may take, at start and while serving; default 3000 ms. */
  readonly connectTimeoutMs?: number;
  /** How long a statement may take before it fails (server and client side); default 5000 ms. */
  readonly statementTimeoutMs?: number;
  /** How often an unreachable server is probed, so health recovers without traffic; default 1000 ms. */
  readonly probeIntervalMs?: number;
}

/** The advisory lock a gateway holds while it sweeps entries past the retention (an
 * arbitrary fixed key, not the migration's). */
const RETENTION_LOCK = 7_351_200_913n;

/** Rows one commit carries at most; the rest go in the next commit, at once. */
export const MAX_BATCH = 2000;

/**
 * Connects to the ledger at `url`, checks it answers and migrates its schema. Throws an
 * Error naming postgres and the address (never the password) when it cannot, within
 * about `connectTimeoutMs`.
 */
export async function openPostgresUsageLog(url: string, opts: PostgresLogOptions = {}): Promise<PostgresUsageLog> {
  const pool = await openMigratedPool(url, "ledger", "llm-gateway", opts);
  const usageLog = new PostgresUsageLog(pool, url, opts.probeIntervalMs ?? 1000);
  try {
    await usageLog.makeMonthsAhead();
  } catch (error) {
    await usageLog.close().catch(() => {});
    throw new Error(`ledger: cannot use postgres at ${describePostgresUrl(url)}: ${postgresErrorText(error)}`);
  }
  return usageLog;
}

/** How often the current and the next month's partitions are made sure of. */
const MONTHS_AHEAD_INTERVAL_MS = 3_600_000;

/**
 * Errors that mean the server is gone or not answering (connection refused or lost,
 * timeouts, shutdown) rather than a row it refused: the batch is not retried row by row.
 */
function isUnreachable(error: unknown): boolean {
  if (error instanceof TypeError || error instanceof RangeError) return false; // an entry that is not one
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return true; // a socket error or a client timeout
  // 08: connection exception; 57: operator intervention (shutdown, statement timeout); 53: out of resources.
  return code.startsWith("08") || code.startsWith("57") || code.startsWith("53");
}

/** An append waiting for its commit. */
interface Pending {
  readonly entry: UsageEntry;
  /** Only `importEntries` keeps a refund time; appends never set one. */
  readonly refundedAt: number | null;
  /** Its place in the order of appends (commits settle them in this order). */
  readonly seq: number;
  resolve(): void;
  reject(error: Error): void;
}

/** Column order of the insert statement, and of each row's JSON array. */
const INSERT_COLUMNS = `request_id, time, token, "user", grp, model, upstream_model, channel, inbound_protocol,
  upstream_protocol, input, cache_read, cache_write, output, reasoning, cost_nano, status, error, duration_ms,
  ttfb_ms, estimated, refunded_at, dropped_fields, tool_calls, breakdown, channel_cost_nano, key`;
const INSERT_TYPES = [
  "text", "int8", "text", "text", "text", "text", "text", "text", "text",
  "text", "int8", "int8", "int8", "int8", "int8", "int8", "int4", "text", "float8",
  "float8", "bool", "int8", "text", "text", "text", "int8", "text",
] as const;

/**
 * One commit: inserts the new entries (a request id recorded already is left alone), adds
 * them to their daily rollups, and adds the cost of those inserted, refunds left out, to
 * their tokens' and users' spend, in one statement (one transaction, one round trip).
 * Rollups are upserted in key order too. Spend rows are updated in key order, so
 * two gateways committing at once wait for each other instead of deadlocking.
 */
/** The UTC day (days since 1970-01-01) of an epoch-ms column, in int8 arithmetic. */
function daySql(column: string): string {
  return `((${column} - ((${column} % 86400000) + 86400000) % 86400000) / 86400000)::integer`;
}

const INSERT_SQL = `
  WITH ins AS (
    INSERT INTO usage_log (${INSERT_COLUMNS})
    SELECT ${INSERT_TYPES.map((t, i) => `(e->>${i})::${t}`).join(", ")}
      FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS r(e, ord)
    ORDER BY ord
    ON CONFLICT (request_id, time) DO NOTHING
    RETURNING token, "user", cost_nano, refunded_at, time, model, channel, grp, input, cache_read, cache_write, output,
      reasoning, channel_cost_nano
  ), rolled AS (
    INSERT INTO usage_daily (day, "user", token, model, channel, grp, requests, input, cache_read, cache_write, output,
      reasoning, cost_nano, channel_cost_nano, channel_cost_unknown)
    SELECT ${daySql("time")}, "user", token, model, COALESCE(channel, ''), grp, count(*), sum(input), sum(cache_read),
      sum(cache_write), sum(output), sum(reasoning), ${SPEND_MONEY_SQL.replace(/ AS \w+/g, "")}
      FROM ins GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (day, "user", token, model, channel, grp) DO UPDATE SET
      requests = usage_daily.requests + excluded.requests, input = usage_daily.input + excluded.input,
      cache_read = usage_daily.cache_read + excluded.cache_read, cache_write = usage_daily.cache_write + excluded.cache_write,
      output = usage_daily.output + excluded.output, reasoning = usage_daily.reasoning + excluded.reasoning,
      cost_nano = usage_daily.cost_nano + excluded.cost_nano,
      channel_cost_nano = usage_daily.channel_cost_nano + excluded.channel_cost_nano,
      channel_cost_unknown = usage_daily.channel_cost_unknown + excluded.channel_cost_unknown
  ), charged AS (
    SELECT 'token' AS kind, token AS name, sum(cost_nano) AS nano FROM ins
      WHERE refunded_at IS NULL AND cost_nano <> 0 GROUP BY token
    UNION ALL
    SELECT 'user', "user", sum(cost_nano) FROM ins
      WHERE refunded_at IS NULL AND cost_nano <> 0 GROUP BY "user"
  )
  INSERT INTO spend (kind, name, nano)
  SELECT kind, name, nano::bigint FROM charged ORDER BY kind, name
  ON CONFLICT (kind, name) DO UPDATE SET nano = spend.nano + excluded.nano`;

/**
 * Marks an entry refunded if it is not yet (a concurrent refund waits for the row lock and
 * then finds it refunded) and takes its cost off its token's and user's spend and its money
 * off its daily rollup (which keeps the request and its tokens), in one statement. One row with `refunded` true: refunded now; false: refunded before; none: no
 * such entry.
 */
const REFUND_SQL = `
  WITH r AS (
    UPDATE usage_log SET refunded_at = $2 WHERE request_id = $1 AND refunded_at IS NULL
    RETURNING token, "user", cost_nano, time, model, channel, grp, channel_cost_nano
  ), d AS (
    UPDATE usage_daily SET cost_nano = usage_daily.cost_nano - r.cost_nano,
      channel_cost_nano = usage_daily.channel_cost_nano - COALESCE(r.channel_cost_nano, 0),
      channel_cost_unknown = usage_daily.channel_cost_unknown
        - CASE WHEN r.channel_cost_nano IS NULL AND r.cost_nano <> 0 THEN 1 ELSE 0 END
    FROM r WHERE usage_daily.day = ${daySql("r.time")} AND usage_daily."user" = r."user" AND usage_daily.token = r.token
      AND usage_daily.model = r.model AND usage_daily.channel = COALESCE(r.channel, '') AND usage_daily.grp = r.grp
  ), s AS (
    INSERT INTO spend (kind, name, nano)
    SELECT 'token', token, -cost_nano FROM r WHERE cost_nano <> 0
    UNION ALL
    SELECT 'user', "user", -cost_nano FROM r WHERE cost_nano <> 0
    ON CONFLICT (kind, name) DO UPDATE SET nano = spend.nano + excluded.nano
  )
  SELECT true AS refunded, token, "user", cost_nano FROM r
  UNION ALL
  SELECT false, NULL, NULL, NULL FROM usage_log WHERE request_id = $1 AND NOT EXISTS (SELECT 1 FROM r)`;

const ROLLUP_KEY = `day, "user", token, model, channel, grp`;
const ROLLUP_COUNTS = ["requests", "input", "cache_read", "cache_write", "output", "reasoning", "cost_nano", "channel_cost_nano", "channel_cost_unknown"];

/** carryOver's statement: $1 holds the rollup rows as arrays in usage_daily's column order.
 * A key the ledger holds less of is raised to the row; one it holds more of in any count
 * (entries it had from elsewhere) is left alone and counted apart. */
const CARRY_OVER_SQL = `
  WITH src AS (
    SELECT (e->>0)::int AS day, e->>1 AS "user", e->>2 AS token, e->>3 AS model, e->>4 AS channel, e->>5 AS grp,
      ${ROLLUP_COUNTS.map((c, i) => `(e->>${i + 6})::int8 AS ${c}`).join(", ")}
    FROM jsonb_array_elements($1::jsonb) AS r(e)
  ), delta AS (
    SELECT ${ROLLUP_KEY.split(", ").map((k) => `src.${k}`).join(", ")},
      ${ROLLUP_COUNTS.map((c) => `src.${c} - COALESCE(d.${c}, 0) AS ${c}`).join(", ")}
    FROM src LEFT JOIN usage_daily d USING (${ROLLUP_KEY})
  ), raised AS (
    SELECT * FROM delta WHERE ${ROLLUP_COUNTS.map((c) => `${c} >= 0`).join(" AND ")} AND (${ROLLUP_COUNTS.map((c) => `${c} > 0`).join(" OR ")})
  ), rolled AS (
    INSERT INTO usage_daily SELECT * FROM raised ORDER BY ${ROLLUP_KEY}
    ON CONFLICT (${ROLLUP_KEY}) DO UPDATE SET ${ROLLUP_COUNTS.map((c) => `${c} = usage_daily.${c} + excluded.${c}`).join(", ")}
  ), spent AS (
    INSERT INTO spend (kind, name, nano)
    SELECT kind, name, nano FROM (
      SELECT 'token' AS kind, token AS name, sum(cost_nano)::bigint AS nano FROM raised GROUP BY token
      UNION ALL
      SELECT 'user', "user", sum(cost_nano)::bigint FROM raised GROUP BY "user"
    ) s WHERE nano <> 0 ORDER BY kind, name
    ON CONFLICT (kind, name) DO UPDATE SET nano = spend.nano + excluded.nano
  )
  SELECT (SELECT count(*) FROM raised) AS raised, (SELECT COALESCE(sum(requests), 0) FROM raised) AS requests,
    (SELECT COALESCE(sum(cost_nano), 0) FROM raised) AS nano,
    (SELECT count(*) FROM delta WHERE ${ROLLUP_COUNTS.map((c) => `${c} < 0`).join(" OR ")}) AS conflicting`;

/** The grouping expression of each dimension; days group by buckets (spend-keys.ts). */
function dimensionColumn(by: SpendDimension, range: SpendRange): string {
  switch (by) {
    case "user": return `"user"`;
    case "group": return "grp";
    case "channel": return `COALESCE(channel, '${NO_CHANNEL}')`;
    case "key": return SERVED_KEY_SQL;
    case "day": return `(time / ${dayBucketMs(range.timeZone)})::text`;
    default: return by;
  }
}

/** The condition of a spend range's subject (its name the `at`th parameter), or none. */
function subjectSql(subject: UsageSubject | undefined, at: number): string {
  return subject === undefined ? "" : ` AND ${subject.kind === "user" ? `"user"` : "token"} = $${at}`;
}

/** Equality filters and their columns, in the order conditions are written. */
const equalities = [
  ["requestId", "request_id"],
  ["token", "token"],
  ["user", `"user"`],
  ["model", "model"],
  ["channel", "channel"],
  ["key", "usage_log.key"],
  ["status", "status"],
] as const;



/** The statement's one parameter: the batch as a JSON array of rows, in INSERT_COLUMNS order.
 * One JSON.stringify costs the client ~3 µs less per entry than an array parameter per
 * column (pg escapes every element of those in JavaScript), and the server no more. */
function rowsOf(batch: readonly Pending[]): string {
  return JSON.stringify(batch.map(({ entry: e, refundedAt }) => {
    const u = e.usage;
    return [
      e.requestId, e.time, e.token, e.user, e.group, e.model, e.upstreamModel ?? null, e.channel ?? null,
      e.inboundProtocol, e.upstreamProtocol ?? null, u.input, u.cacheRead, u.cacheWrite, u.output, u.reasoning,
      e.costNano.toString(), e.status, e.error ?? null, e.durationMs, e.ttfbMs ?? null, e.estimated, refundedAt,
      e.droppedFields && e.droppedFields.length > 0 ? e.droppedFields.join(",") : null,
      formatToolCalls(u.toolCalls), e.breakdown ?? null,
      e.channelCostNano === undefined ? null : e.channelCostNano.toString(), e.key ?? null,
    ];
  }));
}

/** What carryOver changed. */
export interface CarryOver {
  /** Rollup rows raised, and the requests and settled money they gained. */
  readonly rows: number;
  readonly requests: number;
  readonly costNano: bigint;
  /** Rows the ledger holds more of than the store in some count, left alone. */
  readonly conflicting: number;
}

export class PostgresUsageLog implements UsageLog {
  readonly #pool: pg.Pool;
  readonly #where: string;
  readonly #probeIntervalMs: number;
  readonly #url: string;
  #queue: Pending[] = [];
  #committing = false;
  #scheduled = false;
  /** Appends numbered so far, and through which number they have all settled: flush,
   * refund and close wait on these. Counters, not a set of the appends: a long-lived Set
   * of per-request objects costs every request (see bench/RESULTS.md). */
  #appended = 0;
  #settledThrough = 0;
  /** Callers waiting for appends through `through` to settle, counting the failures. */
  #waiters: { readonly through: number; failed: number; readonly resolve: (failed: number) => void }[] = [];
  #reachable = true;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;
  #commits = 0;
  /** Times whose month partitions are known to exist (the current and the next month's),
   * so an append checks two numbers; months outside are looked up once each. */
  #coveredFrom = 0;
  #coveredTo = 0;
  readonly #knownMonths = new Set<MonthIndex>();
  #monthsAhead: NodeJS.Timeout | undefined;

  constructor(pool: pg.Pool, url: string, probeIntervalMs: number) {
    this.#pool = pool;
    this.#where = describePostgresUrl(url);
    this.#url = url;
    this.#probeIntervalMs = probeIntervalMs;
    // An idle connection the server dropped: without a listener this would crash the process.
    pool.on("error", (error) => this.#lost(error));
  }

  /** Batch statements run so far (commits grouping many appends count once). */
  get commits(): number {
    return this.#commits;
  }

  /** "postgres" is degraded while the last statement could not reach the server. */
  health(): StateHealth {
    return { degraded: this.#reachable ? [] : ["postgres"] };
  }

  append(entry: UsageEntry): Promise<void> {
    if (typeof entry.costNano !== "bigint") {
      return Promise.reject(new TypeError(`usage entry ${entry.requestId}: costNano must be a bigint of nano-units`));
    }
    return this.#enqueue(entry, null);
  }

  /**
   * Copies entries from another store as they are, refund times included (`gateway
   * migrate`): entries already present are left alone; the spend of those added, refunds
   * left out, is added. Resolves once all are committed.
   */
  async importEntries(entries: readonly UsageEntry[]): Promise<void> {
    await Promise.all(entries.map((e) => this.#enqueue(e, e.refundedAt ?? null)));
  }

  #enqueue(entry: UsageEntry, refundedAt: number | null): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the usage log is closed"));
    const seq = ++this.#appended;
    const done = new Promise<void>((resolve, reject) => this.#queue.push({ entry, refundedAt, seq, resolve, reject }));
    this.#kick();
    return done;
  }

  /** Starts a commit unless one is in flight (it picks the queue up when it ends). A
   * microtask, not a timer: appends made in the same turn share the first commit. */
  #kick(): void {
    if (this.#committing || this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    if (this.#committing) return;
    this.#committing = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.length <= MAX_BATCH ? this.#queue : this.#queue.slice(0, MAX_BATCH);
        this.#queue = this.#queue.length <= MAX_BATCH ? [] : this.#queue.slice(MAX_BATCH);
        await this.#commit(batch);
      }
    } finally {
      this.#committing = false;
    }
  }

  /** Commits a batch and settles each append in it; never throws. */
  async #commit(batch: readonly Pending[]): Promise<void> {
    try {
      await this.#insert(batch);
      for (const p of batch) p.resolve();
      this.#settled(batch, true);
      return;
    } catch (error) {
      if (batch.length === 1 || isUnreachable(error)) {
        const failure = this.#failure(error, batch.length);
        for (const p of batch) p.reject(failure);
        this.#settled(batch, false);
        return;
      }
    }
    // The server refused the batch for one of its rows: one bad row must not take the
    // others with it, so each is committed alone.
    for (const p of batch) await this.#commit([p]);
  }

  /** Appends settle in order: moves the mark past `batch` and answers the waiters it reached. */
  #settled(batch: readonly Pending[], written: boolean): void {
    this.#settledThrough = batch[batch.length - 1].seq;
    if (this.#waiters.length === 0) return;
    if (!written) {
      for (const w of this.#waiters) for (const p of batch) if (p.seq <= w.through) w.failed++;
    }
    const done = this.#waiters.filter((w) => w.through <= this.#settledThrough);
    if (done.length === 0) return;
    this.#waiters = this.#waiters.filter((w) => w.through > this.#settledThrough);
    for (const w of done) w.resolve(w.failed);
  }

  /** Resolves once every append made so far has settled, to how many of those failed. */
  #allSettled(): Promise<number> {
    const through = this.#appended;
    if (through <= this.#settledThrough) return Promise.resolve(0);
    return new Promise((resolve) => this.#waiters.push({ through, failed: 0, resolve }));
  }

  /** Makes sure this month and the next have partitions (at open, then hourly). */
  async makeMonthsAhead(): Promise<void> {
    const current = monthOf(Date.now());
    for (const month of [current, current + 1]) await this.#ensureMonth(month);
    this.#coveredFrom = monthStart(current);
    this.#coveredTo = monthStart(current + 2);
    if (this.#monthsAhead || this.#closed) return;
    this.#monthsAhead = setInterval(() => {
      this.makeMonthsAhead().catch((error: unknown) =>
        log.warn("ledger: could not make the usage log's next month partition; appends go to its default partition until one is made", { error: postgresErrorText(error) }));
    }, MONTHS_AHEAD_INTERVAL_MS);
    this.#monthsAhead.unref();
  }

  async #ensureMonth(month: MonthIndex): Promise<void> {
    if (this.#knownMonths.has(month) || !hasOwnPartition(month)) return;
    await ensureMonthPartition(this.#pool, month);
    this.#knownMonths.add(month);
  }

  /** Entries of months outside the covered ones (an import of an old log, a clock set far
   * off) get their months' partitions first. A month that cannot be made is no reason to
   * refuse the entries: they go to the default partition, and move when it is made. */
  async #ensureMonthsOf(batch: readonly Pending[]): Promise<void> {
    let outside: Set<MonthIndex> | undefined;
    for (const { entry } of batch) {
      if (entry.time >= this.#coveredFrom && entry.time < this.#coveredTo) continue;
      (outside ??= new Set()).add(monthOf(entry.time));
    }
    if (!outside) return;
    for (const month of outside) {
      await this.#ensureMonth(month).catch((error: unknown) =>
        log.warn("ledger: could not make a usage log month partition; its entries go to the default partition", { month: new Date(monthStart(month)).toISOString().slice(0, 7), error: postgresErrorText(error) }));
    }
  }

  async #insert(batch: readonly Pending[]): Promise<void> {
    await this.#ensureMonthsOf(batch);
    this.#commits++;
    await this.#query({ name: "usage_log_append", text: INSERT_SQL, values: [rowsOf(batch)] });
  }

  #failure(error: unknown, entries: number): Error {
    const what = entries === 1 ? "a usage entry" : `${entries} usage entries`;
    if (isUnreachable(error)) {
      return new Error(`${what} could not be written: postgres at ${this.#where} is unreachable (${postgresErrorText(error)})`);
    }
    log.error("usage entry refused by postgres", { error: postgresErrorText(error) });
    return new Error(`${what} could not be written to postgres: ${postgresErrorText(error)}`);
  }

  /** Runs a statement on the pool, keeping health up to date. */
  async #query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
    try {
      const result = await this.#pool.query<R>(config);
      this.#reachable = true;
      return result;
    } catch (error) {
      if (isUnreachable(error)) this.#lost(error);
      throw error;
    }
  }

  /** The server is gone: report it, and probe until it answers again. */
  #lost(error: unknown): void {
    if (this.#reachable) log.error("ledger: postgres unreachable", { where: this.#where, error: postgresErrorText(error) });
    this.#reachable = false;
    if (this.#probe || this.#closed) return;
    this.#probe = setInterval(() => {
      this.#pool.query("SELECT 1").then(
        () => {
          this.#reachable = true;
          clearInterval(this.#probe);
          this.#probe = undefined;
          log.info("ledger: postgres reachable again", { where: this.#where });
        },
        () => {},
      );
    }, this.#probeIntervalMs);
    this.#probe.unref();
  }

  /** Waits for every append made so far to settle; rejects when any of them failed. */
  async flush(): Promise<void> {
    const failed = await this.#allSettled();
    if (failed > 0) throw new Error(`${failed} usage entries could not be written to postgres at ${this.#where}`);
  }

  async refund(requestId: string, at: number): Promise<RefundResult> {
    // An append this process made and has not yet committed is waited for, so it is found.
    await this.#allSettled();
    const { rows } = await this.#query<{ refunded: boolean; token: string | null; user: string | null; cost_nano: string | null }>({
      name: "usage_log_refund",
      text: REFUND_SQL,
      values: [requestId, at],
    });
    const row = rows[0];
    if (!row) return { kind: "not-recorded" };
    if (!row.refunded) return { kind: "already-refunded" };
    return { kind: "refunded", token: row.token!, user: row.user!, costNano: BigInt(row.cost_nano!) };
  }

  async logs(filter: LogFilter): Promise<UsageEntry[]> {
    const conditions: string[] = [];
    const values: unknown[] = [];
    for (const [name, column] of equalities) {
      const value = filter[name];
      if (value === undefined) continue;
      values.push(value);
      conditions.push(`${column} = $${values.length}`);
    }
    if (filter.statusClass !== undefined) {
      values.push(filter.statusClass * 100);
      conditions.push(`status >= $${values.length} AND status < $${values.length} + 100`);
    }
    if (filter.since !== undefined) (values.push(filter.since), conditions.push(`time >= $${values.length}`));
    if (filter.until !== undefined) (values.push(filter.until), conditions.push(`time < $${values.length}`));
    values.push(logLimit(filter.limit));
    const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
    const { rows } = await this.#query<UsageRow>({
      text: `SELECT * FROM usage_log ${where} ORDER BY time DESC, seq DESC LIMIT $${values.length}`,
      values,
    });
    return rows.map(entryOfRow);
  }

  /** Whole UTC days from the rollups, the range's partial days from the entries (rollups.ts). */
  async spend(by: SpendDimension, range: SpendRange): Promise<SpendRow[]> {
    const split = splitForRollups(by, range);
    if (!split || by === "key") return this.#spendOfEntries(by, range);
    const column = by === "user" ? `"user"` : by === "group" ? "grp" : by === "day" ? "day::text" : by;
    const subject = range.subject;
    const rolled = this.#query<SpendSqlRow>({
      name: `usage_daily_spend_${by}${subject === undefined ? "" : `_${subject.kind}`}`,
      text: `SELECT ${column} AS key, sum(requests) AS requests,
          sum(input) AS input, sum(cache_read) AS cache_read, sum(cache_write) AS cache_write,
          sum(output) AS output, sum(reasoning) AS reasoning, sum(cost_nano) AS cost,
          sum(channel_cost_nano) AS channel_cost, sum(channel_cost_unknown) AS channel_cost_unknown
        FROM usage_daily WHERE day >= $1 AND day < $2${subjectSql(subject, 3)} GROUP BY ${column}`,
      values: [split.firstDay, split.endDay, ...(subject === undefined ? [] : [subject.name])],
    });
    const parts = await Promise.all([rolled, ...split.edges.map((edge) => this.#spendOfEntries(by, edge))]);
    const rows = parts[0].rows.map(spendRowOf);
    return mergeSpendRows(by, [by === "day" ? rows.map((r) => ({ ...r, key: dayText(Number(r.key)) })) : rows, ...parts.slice(1) as SpendRow[][]]);
  }

  async #spendOfEntries(by: SpendDimension, range: SpendRange): Promise<SpendRow[]> {
    const column = dimensionColumn(by, range);
    const subject = range.subject;
    const { rows } = await this.#query<SpendSqlRow>({
      name: `${by === "day" ? `usage_log_spend_day_${dayBucketMs(range.timeZone)}` : `usage_log_spend_${by}`}${subject === undefined ? "" : `_${subject.kind}`}`,
      // Sums of int8 are numeric (exact); keys sort bytewise, as SQLite does.
      text: `SELECT ${column} AS key, count(*) AS requests,
          sum(input) AS input, sum(cache_read) AS cache_read, sum(cache_write) AS cache_write,
          sum(output) AS output, sum(reasoning) AS reasoning,
          ${SPEND_MONEY_SQL}
        FROM usage_log WHERE time >= $1 AND time < $2${subjectSql(subject, 3)}
        GROUP BY ${column} ORDER BY cost DESC, ${column} COLLATE "C" ASC`,
      values: [range.since ?? Number.MIN_SAFE_INTEGER, range.until ?? Number.MAX_SAFE_INTEGER, ...(subject === undefined ? [] : [subject.name])],
    });
    return by === "day" ? daysOfBuckets(rows.map(spendRowOf), range) : rows.map(spendRowOf);
  }

  /** Rides on usage_log_token / usage_log_user ((column, time)); sums of int8 are numeric,
   * read back exactly. */
  async usageBuckets(subject: UsageSubject, sinceMs: number, bucketMs: number): Promise<UsageBucket[]> {
    checkBucketQuery(subject, sinceMs, bucketMs);
    const column = subject.kind === "token" ? "token" : `"user"`;
    const { rows } = await this.#query<{ bucket: string; cost: string; tokens: string }>({
      name: `usage_log_buckets_${subject.kind}`,
      text: `SELECT ${bucketSql("$3::int8")} AS bucket, sum(cost_nano) AS cost,
          sum(input + cache_read + cache_write + output) AS tokens
        FROM usage_log WHERE ${column} = $1 AND time >= $2 AND refunded_at IS NULL
        GROUP BY 1 HAVING sum(cost_nano) <> 0 OR sum(input + cache_read + cache_write + output) <> 0
        ORDER BY 1`,
      values: [subject.name, firstMs(sinceMs), bucketMs],
    });
    return rows.map((r) => ({ bucket: Number(r.bucket), costNano: BigInt(r.cost), tokens: Number(r.tokens) }));
  }

  /** Rides on usage_log_time; sums of int8 are numeric, read back exactly. */
  async traffic(range: TrafficRange, bucketMs: number): Promise<TrafficBucket[]> {
    checkTrafficQuery(range, bucketMs);
    const { rows } = await this.#query<{ bucket: string; requests: string; errors: string; cost: string }>({
      name: "usage_log_traffic",
      text: `SELECT ${bucketSql("$3::int8")} AS bucket, count(*) AS requests,
          sum(CASE WHEN ${ERROR_SQL} THEN 1 ELSE 0 END) AS errors,
          sum(CASE WHEN refunded_at IS NULL THEN cost_nano ELSE 0 END) AS cost
        FROM usage_log WHERE time >= $1 AND time < $2 GROUP BY 1 ORDER BY 1`,
      values: [range.sinceMs, range.untilMs, bucketMs],
    });
    return rows.map((r) => ({ bucket: Number(r.bucket), requests: Number(r.requests), errors: Number(r.errors), costNano: BigInt(r.cost) }));
  }

  /** Exact counts per key; latencies from the newest LATENCY_SAMPLE rows of the range, as
   * the other stores read them (the same answer everywhere, at a bounded cost). */
  async keyHealth(range: TrafficRange): Promise<KeyHealthRow[]> {
    checkTrafficQuery(range);
    const values = [range.sinceMs, range.untilMs];
    const [counts, sample] = await Promise.all([
      this.#query<{ channel: string; key: string | null; requests: string; errors: string }>({
        name: "usage_log_key_counts",
        text: `SELECT channel, key, count(*) AS requests, sum(CASE WHEN ${ERROR_SQL} THEN 1 ELSE 0 END) AS errors
          FROM usage_log WHERE time >= $1 AND time < $2 AND channel IS NOT NULL GROUP BY channel, key`,
        values,
      }),
      this.#query<{ channel: string; key: string | null; duration_ms: number }>({
        name: "usage_log_latency_sample",
        text: `SELECT channel, key, duration_ms FROM usage_log WHERE time >= $1 AND time < $2 AND channel IS NOT NULL
          ORDER BY time DESC, seq DESC LIMIT ${LATENCY_SAMPLE}`,
        values,
      }),
    ]);
    const keyOf = (key: string | null) => (key === null ? {} : { key });
    return keyHealthOf(
      counts.rows.map((r) => ({ channel: r.channel, ...keyOf(r.key), requests: Number(r.requests), errors: Number(r.errors) })),
      sample.rows.map((r) => ({ channel: r.channel, ...keyOf(r.key), durationMs: Number(r.duration_ms) })),
    );
  }

  spentByToken(token: string): Promise<bigint> {
    return this.#spent("token", token);
  }

  spentByUser(user: string): Promise<bigint> {
    return this.#spent("user", user);
  }

  async #spent(kind: "token" | "user", name: string): Promise<bigint> {
    const { rows } = await this.#query<{ nano: string }>({
      name: "spend_one",
      text: "SELECT nano FROM spend WHERE kind = $1 AND name = $2",
      values: [kind, name],
    });
    return rows[0] ? BigInt(rows[0].nano) : 0n;
  }

  async spendTotals(): Promise<SpendTotals> {
    const { rows } = await this.#query<{ kind: "token" | "user"; name: string; nano: string }>({
      text: "SELECT kind, name, nano FROM spend",
    });
    const tokens = new Map<string, bigint>();
    const users = new Map<string, bigint>();
    for (const r of rows) (r.kind === "token" ? tokens : users).set(r.name, BigInt(r.nano));
    return { tokens, users };
  }

  /**
   * Whole months past the retention go first, a partition dropped at a time (with an
   * archive, only once emptied into it); then the month the cutoff falls in (and the
   * default partition), one statement a batch: the batch picked on usage_log_time, deleted
   * on the primary key (ctids repeat across partitions).
   */
  async removeBefore(beforeMs: number, limit: number, archive?: (entries: readonly UsageEntry[]) => Promise<void>): Promise<number> {
    const dropped = await dropMonthsBefore(this.#pool, beforeMs, archive !== undefined);
    for (const month of this.#knownMonths) if (monthStart(month + 1) <= beforeMs) this.#knownMonths.delete(month);
    if (dropped.entries > 0) return dropped.entries;
    if (!archive) {
      const { rowCount } = await this.#query({
        name: "usage_log_remove_before",
        text: `DELETE FROM usage_log u USING (SELECT request_id, time FROM usage_log WHERE time < $1 ORDER BY time, seq LIMIT $2) old
          WHERE u.request_id = old.request_id AND u.time = old.time AND u.time < $1`,
        values: [beforeMs, limit],
      });
      return rowCount ?? 0;
    }
    const { rows } = await this.#query<UsageRow>({
      text: "SELECT * FROM usage_log WHERE time < $1 ORDER BY time, seq LIMIT $2",
      values: [beforeMs, limit],
    });
    if (rows.length === 0) return 0;
    await archive(rows.map(entryOfRow));
    const { rowCount } = await this.#query({
      text: "DELETE FROM usage_log WHERE request_id = ANY($1::text[]) AND time < $2",
      values: [rows.map((r) => r.request_id), beforeMs],
    });
    return rowCount ?? 0;
  }

  /** One sweeper at a time over every gateway on this database: a session advisory lock,
   * held on a connection of its own (not the pool's) for the sweep. */
  async sweepAlone(sweep: () => Promise<void>): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: 3000, application_name: "llm-gateway-retention" });
    client.on("error", () => {}); // a dropped lock connection ends the sweep's lock; the next run takes it again
    await client.connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [RETENTION_LOCK.toString()]);
      if (!rows[0].locked) return false;
      await sweep();
      return true;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /**
   * Raises the ledger's rollups of the given keys to `rows` (rollups of a store whose
   * retention removed entries, thinned-rollups.ts), adding what each gains to its token's
   * and user's spend, in one transaction. A key the ledger already holds as much of is
   * left as it is, so carrying the same rows twice changes nothing; one it holds more of
   * in some count is left alone and counted in `conflicting`.
   */
  async carryOver(rows: readonly Rollup[]): Promise<CarryOver> {
    const json = JSON.stringify(rows.map((r) => [
      r.day, r.user, r.token, r.model, r.channel, r.group, r.requests, r.usage.input, r.usage.cacheRead, r.usage.cacheWrite,
      r.usage.output, r.usage.reasoning, r.costNano.toString(), r.channelCostNano.toString(), r.channelCostUnknown,
    ]));
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      try {
        // Appends add to the same rows: they wait, so each delta is taken against a row that holds still.
        await client.query("LOCK TABLE usage_daily IN EXCLUSIVE MODE");
        const { rows: [r] } = await client.query<{ raised: string; requests: string; nano: string; conflicting: string }>({ text: CARRY_OVER_SQL, values: [json] });
        await client.query("COMMIT");
        return { rows: Number(r.raised), requests: Number(r.requests), costNano: BigInt(r.nano), conflicting: Number(r.conflicting) };
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
    } finally {
      client.release();
    }
  }

  /** How many entries the log holds, and how many of them are refunded. */
  async counts(): Promise<{ entries: number; refunded: number }> {
    const { rows } = await this.#query<{ entries: string; refunded: string }>({
      text: "SELECT count(*) AS entries, count(refunded_at) AS refunded FROM usage_log",
    });
    return { entries: Number(rows[0].entries), refunded: Number(rows[0].refunded) };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#probe);
    clearInterval(this.#monthsAhead);
    this.#probe = undefined;
    await this.#allSettled();
    await this.#pool.end();
  }
}
