// The SQL of the SQLite store: every statement prepared once (log queries once per filter
// shape, so each shape can use its index), and the mapping between rows and entries.

import type Database from "better-sqlite3";
import { formatToolCalls } from "../protocols/usage.js";
import { entryOfRow, logLimit, SPEND_MONEY_SQL, spendRowOf, type SpendSqlRow, type UsageRow } from "./entry.js";
import { dayText, epochDay, mergeSpendRows, splitForRollups } from "./rollups.js";
import { daysOfBuckets, dayBucketMs, SERVED_KEY_SQL } from "./spend-keys.js";
import { NO_CHANNEL, type LogFilter, type RefundResult, type SpendDimension, type SpendRange, type SpendRow, type UsageBucket, type UsageEntry, type UsageSubject } from "./store.js";
import { ERROR_SQL, LATENCY_SAMPLE, type KeyCount, type LatencyPoint, type TrafficBucket, type TrafficRange } from "./traffic.js";
import { bucketSql, firstMs } from "./usage-buckets.js";

/** A usage_log row as better-sqlite3 returns it (safe integers: bigints). */
interface LogRow extends UsageRow {
  cost_nano: bigint;
  refunded_at: bigint | null;
}

/** The grouping expression of each dimension; days group by buckets (spend-keys.ts) the
 * statement is prepared for when first asked. */
const dimensionColumn: Record<Exclude<SpendDimension, "day">, string> = {
  user: "user", token: "token", model: "model", group: "grp", channel: `COALESCE(channel, '${NO_CHANNEL}')`,
  key: SERVED_KEY_SQL,
};

/** Equality filters and their columns, in the order conditions are written. */
const equalities = [
  ["requestId", "request_id"],
  ["token", "token"],
  ["user", "user"],
  ["model", "model"],
  ["channel", "channel"],
  ["key", "usage_log.key"],
  ["status", "status"],
] as const;


/** Prepared statements over one open database. */
const COLUMNS = `request_id, time, token, user, grp, model, upstream_model, channel, inbound_protocol,
  upstream_protocol, input, cache_read, cache_write, output, reasoning, cost_nano, status, error, duration_ms,
  ttfb_ms, estimated, dropped_fields, tool_calls, breakdown, channel_cost_nano, key`;
/** Values a usage_log row has, in COLUMNS order. */
export const ROW_WIDTH = 26;
/** The column names, in COLUMNS order (a journal line holds their values). */
const COLUMN_NAMES = COLUMNS.split(",").map((c) => c.trim());
const ROW_PLACEHOLDERS = `(${Array.from({ length: ROW_WIDTH }, () => "?").join(", ")})`;
/** Statement sizes a batch is cut into, largest first (26 parameters a row). */
const ROWS_PER_INSERT = [32, 8, 1] as const;
/** Positions in a row of the values spend counters (and failure reports) need. */
export const ID_AT = 0;
export const TOKEN_AT = 2;
export const USER_AT = 3;
export const COST_AT = 15;
/** Position of channel_cost_nano, the other money value (a journal line holds it as text). */
export const CHANNEL_COST_AT = 24;
/** Positions of the other values a rollup (usage_daily) adds up. */
const TIME_AT = 1;
const GROUP_AT = 4;
const MODEL_AT = 5;
const CHANNEL_AT = 7;
const INPUT_AT = 10;

/** The rollup grouping column of each dimension it answers (rollups.ts). */
const rollupColumn: Record<Exclude<SpendDimension, "key">, string> = {
  user: "user", token: "token", model: "model", group: "grp", channel: "channel", day: "CAST(day AS TEXT)",
};

/** A usage_daily row while a batch's entries are summed into it: key columns, then
 * requests, the five token counts, cost, channel cost and how many lack one. */
type RollupValues = [number, string, string, string, string, string, number, number, number, number, number, number, bigint, bigint, number];

/** One entry's column values, in COLUMNS order (money as bigint). */
export function rowOf(e: UsageEntry): unknown[] {
  const u = e.usage;
  return [
    e.requestId, e.time, e.token, e.user, e.group, e.model, e.upstreamModel ?? null, e.channel ?? null,
    e.inboundProtocol, e.upstreamProtocol ?? null, u.input, u.cacheRead, u.cacheWrite, u.output, u.reasoning,
    e.costNano, e.status, e.error ?? null, e.durationMs, e.ttfbMs ?? null, e.estimated ? 1 : 0,
    e.droppedFields && e.droppedFields.length > 0 ? e.droppedFields.join(",") : null,
    formatToolCalls(u.toolCalls), e.breakdown ?? null, e.channelCostNano ?? null, e.key ?? null,
  ];
}

/** The entry a journal row (column values in COLUMNS order, money as bigint) holds; it was
 * never refunded (refunds mark rows already in SQLite). */
export function entryOfJournalRow(values: readonly unknown[]): UsageEntry {
  const row: Record<string, unknown> = { refunded_at: null };
  for (let i = 0; i < COLUMN_NAMES.length; i++) row[COLUMN_NAMES[i]] = values[i];
  return entryOfRow(row as unknown as LogRow);
}

/** Appends one entry's column values: a batch is one flat array of primitives. */
export function pushRow(rows: unknown[], e: UsageEntry): void {
  for (const v of rowOf(e)) rows.push(v);
}

export class SqliteQueries {
  readonly #db: Database.Database;
  readonly #inserts = new Map<number, Database.Statement>();
  readonly #insertOrIgnore: Database.Statement;
  readonly #addSpend: Database.Statement;
  readonly #spent: Database.Statement;
  readonly #has: Database.Statement;
  readonly #addRollup: Database.Statement;
  readonly #rollupBy = new Map<string, Database.Statement>();
  readonly #spendBy = new Map<string, Database.Statement>();
  readonly #logsByShape = new Map<string, Database.Statement>();
  /** Made on the first ask, one per subject kind (each rides on its (column, time) index). */
  readonly #buckets = new Map<UsageSubject["kind"], Database.Statement>();
  /** The traffic and key-health reads, made on the first ask. */
  #traffic: Database.Statement | undefined;
  #keyCounts: Database.Statement | undefined;
  #latency: Database.Statement | undefined;
  /** Made on the first refund (the writer thread's copy never refunds). */
  #refund: Database.Transaction<(id: string, time: number) => RefundResult> | undefined;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#insertOrIgnore = db.prepare(`INSERT OR IGNORE INTO usage_log (${COLUMNS}) VALUES ${ROW_PLACEHOLDERS}`);
    this.#addSpend = db.prepare(`INSERT INTO spend (kind, name, nano) VALUES (?, ?, ?)
      ON CONFLICT (kind, name) DO UPDATE SET nano = nano + excluded.nano`);
    this.#spent = db.prepare("SELECT nano FROM spend WHERE kind = ? AND name = ?").pluck();
    this.#has = db.prepare("SELECT 1 FROM usage_log WHERE request_id = ?").pluck();
    this.#addRollup = db.prepare(`INSERT INTO usage_daily (day, user, token, model, channel, grp, requests, input, cache_read,
        cache_write, output, reasoning, cost_nano, channel_cost_nano, channel_cost_unknown)
      VALUES (${Array.from({ length: 15 }, () => "?").join(", ")})
      ON CONFLICT (day, user, token, model, channel, grp) DO UPDATE SET requests = requests + excluded.requests,
        input = input + excluded.input, cache_read = cache_read + excluded.cache_read,
        cache_write = cache_write + excluded.cache_write, output = output + excluded.output,
        reasoning = reasoning + excluded.reasoning, cost_nano = cost_nano + excluded.cost_nano,
        channel_cost_nano = channel_cost_nano + excluded.channel_cost_nano,
        channel_cost_unknown = channel_cost_unknown + excluded.channel_cost_unknown`);
    for (const [by, column] of Object.entries(dimensionColumn)) this.#spendBy.set(by, this.#spendStatement(column));
  }

  /** The statement of a spend over the entries by `by` (a dimension or day:<bucket ms>),
   * of every subject or one kind's, prepared when first asked. */
  #spendOver(by: string, column: string, subject: UsageSubject["kind"] | undefined): Database.Statement {
    const name = subject === undefined ? by : `${by}@${subject}`;
    let statement = this.#spendBy.get(name);
    if (!statement) this.#spendBy.set(name, (statement = this.#spendStatement(column, subject)));
    return statement;
  }

  #spendStatement(column: string, subject?: UsageSubject["kind"]): Database.Statement {
    return this.#db.prepare(`SELECT ${column} AS key, COUNT(*) AS requests,
        SUM(input) AS input, SUM(cache_read) AS cache_read, SUM(cache_write) AS cache_write,
        SUM(output) AS output, SUM(reasoning) AS reasoning,
        ${SPEND_MONEY_SQL}
      FROM usage_log WHERE ${subject === undefined ? "" : `${subject} = @subject AND `}time >= @since AND time < @until
      GROUP BY ${column} ORDER BY cost DESC, key ASC`);
  }

  /**
   * Inserts the rows (flat, ROW_WIDTH values each; see pushRow) whose request ids are new,
   * many rows per statement (a statement's fixed cost dominates a small row), and returns
   * the indexes of the rows inserted. Ids are unique by construction, so a plain INSERT is
   * tried first; only a chunk that hits a duplicate is redone row by row with INSERT OR IGNORE.
   */
  insertRows(rows: readonly unknown[]): number[] {
    const count = rows.length / ROW_WIDTH;
    const inserted: number[] = [];
    let i = 0;
    for (const size of ROWS_PER_INSERT) {
      for (; count - i >= size; i += size) {
        const chunk = rows.slice(i * ROW_WIDTH, (i + size) * ROW_WIDTH);
        try {
          this.#insertRows(size).run(chunk);
          for (let j = i; j < i + size; j++) inserted.push(j);
        } catch (error) {
          if ((error as { code?: string }).code !== "SQLITE_CONSTRAINT_PRIMARYKEY") throw error;
          for (let j = i; j < i + size; j++) {
            if (this.#insertOrIgnore.run(rows.slice(j * ROW_WIDTH, (j + 1) * ROW_WIDTH)).changes === 1) inserted.push(j);
          }
        }
      }
    }
    return inserted;
  }

  #insertRows(rows: number): Database.Statement {
    let stmt = this.#inserts.get(rows);
    if (!stmt) {
      const values = Array.from({ length: rows }, () => ROW_PLACEHOLDERS).join(", ");
      stmt = this.#db.prepare(`INSERT INTO usage_log (${COLUMNS}) VALUES ${values}`);
      this.#inserts.set(rows, stmt);
    }
    return stmt;
  }

  /** Adds the rows at `inserted` (flat rows, see pushRow) to their daily rollups: one
   * upsert per rollup the batch touches, in the caller's transaction. */
  addRollups(rows: readonly unknown[], inserted: readonly number[]): void {
    const sums = new Map<string, RollupValues>();
    for (const i of inserted) {
      const at = i * ROW_WIDTH;
      const key: [number, string, string, string, string, string] = [
        epochDay(Number(rows[at + TIME_AT])), rows[at + USER_AT] as string, rows[at + TOKEN_AT] as string,
        rows[at + MODEL_AT] as string, (rows[at + CHANNEL_AT] as string | null) ?? NO_CHANNEL, rows[at + GROUP_AT] as string,
      ];
      const id = JSON.stringify(key);
      let sum = sums.get(id);
      if (!sum) sums.set(id, (sum = [...key, 0, 0, 0, 0, 0, 0, 0n, 0n, 0]));
      sum[6]++;
      for (let t = 0; t < 5; t++) sum[7 + t] = (sum[7 + t] as number) + Number(rows[at + INPUT_AT + t]);
      const cost = rows[at + COST_AT] as bigint;
      const channelCost = rows[at + CHANNEL_COST_AT] as bigint | null;
      sum[12] += cost;
      if (channelCost !== null) sum[13] += BigInt(channelCost);
      else if (cost !== 0n) sum[14]++;
    }
    for (const values of sums.values()) this.#addRollup.run(values);
  }

  /** Adds `nano` to a spend counter, creating it at zero first. */
  addSpend(kind: "token" | "user", name: string, nano: bigint): void {
    this.#addSpend.run(kind, name, nano);
  }

  /**
   * Marks an entry refunded and takes its cost off its token's and user's spend, in one
   * IMMEDIATE transaction (so two processes cannot both refund it); see Store.refund.
   */
  refund(requestId: string, at: number): RefundResult {
    this.#refund ??= this.#db.transaction((id: string, time: number): RefundResult => {
      const row = this.#db.prepare(`SELECT token, user, cost_nano, refunded_at, time, model, channel, grp, channel_cost_nano
          FROM usage_log WHERE request_id = ?`)
        .get(id) as Pick<LogRow, "token" | "user" | "cost_nano" | "refunded_at" | "time" | "model" | "channel" | "grp" | "channel_cost_nano"> | undefined;
      if (!row) return { kind: "not-recorded" };
      if (row.refunded_at !== null) return { kind: "already-refunded" };
      this.#db.prepare("UPDATE usage_log SET refunded_at = ? WHERE request_id = ?").run(time, id);
      // Its rollup keeps the request and its tokens, and loses its money (as spend rows do).
      const channelCost = row.channel_cost_nano == null ? null : BigInt(row.channel_cost_nano);
      this.#db.prepare(`UPDATE usage_daily SET cost_nano = cost_nano - ?, channel_cost_nano = channel_cost_nano - ?,
          channel_cost_unknown = channel_cost_unknown - ?
        WHERE day = ? AND user = ? AND token = ? AND model = ? AND channel = ? AND grp = ?`)
        .run(row.cost_nano, channelCost ?? 0n, channelCost === null && row.cost_nano !== 0n ? 1 : 0,
          epochDay(Number(row.time)), row.user, row.token, row.model, row.channel ?? NO_CHANNEL, row.grp);
      if (row.cost_nano !== 0n) {
        this.addSpend("token", row.token, -row.cost_nano);
        this.addSpend("user", row.user, -row.cost_nano);
      }
      return { kind: "refunded", token: row.token, user: row.user, costNano: row.cost_nano };
    });
    return this.#refund.immediate(requestId, at);
  }

  /** Whether an entry with this request id is recorded. */
  has(requestId: string): boolean {
    return this.#has.get(requestId) !== undefined;
  }

  /** A spend counter's value; 0n when it was never charged. */
  spent(kind: "token" | "user", name: string): bigint {
    const nano = this.#spent.get(kind, name) as bigint | undefined;
    return nano ?? 0n;
  }

  /** Entries matching `filter`, newest first (arrival time, then insertion order). */
  logs(filter: LogFilter): UsageEntry[] {
    const conditions: string[] = [];
    const params: Record<string, string | number> = { limit: logLimit(filter.limit) };
    for (const [name, column] of equalities) {
      const value = filter[name];
      if (value === undefined) continue;
      conditions.push(`${column} = @${name}`);
      params[name] = value;
    }
    if (filter.statusClass !== undefined) {
      conditions.push("status >= @statusFrom AND status < @statusTo");
      params.statusFrom = filter.statusClass * 100;
      params.statusTo = filter.statusClass * 100 + 100;
    }
    if (filter.since !== undefined) (conditions.push("time >= @since"), (params.since = filter.since));
    if (filter.until !== undefined) (conditions.push("time < @until"), (params.until = filter.until));
    const shape = conditions.join(" AND ");
    let statement = this.#logsByShape.get(shape);
    if (!statement) {
      const where = shape ? `WHERE ${shape}` : "";
      statement = this.#db.prepare(`SELECT * FROM usage_log ${where} ORDER BY time DESC, rowid DESC LIMIT @limit`);
      this.#logsByShape.set(shape, statement);
    }
    return (statement.all(params) as LogRow[]).map(entryOfRow);
  }

  /** Spend over [since, until) grouped by `by`, highest cost first, then by key: whole UTC
   * days from the rollups, the range's partial days from the entries (rollups.ts). */
  spend(by: SpendDimension, range: SpendRange): SpendRow[] {
    const split = by === "key" ? undefined : splitForRollups(by, range);
    if (!split || by === "key") return this.#spendOfEntries(by, range);
    const subject = range.subject;
    const name = subject === undefined ? by : `${by}@${subject.kind}`;
    let statement = this.#rollupBy.get(name);
    if (!statement) {
      const column = rollupColumn[by];
      const only = subject === undefined ? "" : ` AND ${subject.kind} = @subject`;
      this.#rollupBy.set(name, (statement = this.#db.prepare(`SELECT ${column} AS key, SUM(requests) AS requests,
          SUM(input) AS input, SUM(cache_read) AS cache_read, SUM(cache_write) AS cache_write,
          SUM(output) AS output, SUM(reasoning) AS reasoning, SUM(cost_nano) AS cost,
          SUM(channel_cost_nano) AS channel_cost, SUM(channel_cost_unknown) AS channel_cost_unknown
        FROM usage_daily WHERE day >= @first AND day < @end${only} GROUP BY ${column}`)));
    }
    const params = { first: split.firstDay, end: split.endDay, ...(subject === undefined ? {} : { subject: subject.name }) };
    let rolled = (statement.all(params) as SpendSqlRow[]).map(spendRowOf);
    if (by === "day") rolled = rolled.map((r) => ({ ...r, key: dayText(Number(r.key)) }));
    return mergeSpendRows(by, [rolled, ...split.edges.map((edge) => this.#spendOfEntries(by, edge))]);
  }

  /** Up to `limit` of the oldest entries before `beforeMs`, oldest first. */
  oldestBefore(beforeMs: number, limit: number): UsageEntry[] {
    return (this.#db.prepare("SELECT * FROM usage_log WHERE time < ? ORDER BY time, rowid LIMIT ?").all(beforeMs, limit) as LogRow[]).map(entryOfRow);
  }

  /** Removes up to `limit` of the oldest entries before `beforeMs` (or those of them with
   * these ids) in one IMMEDIATE transaction that never waits for a lock (Store.removeBefore). */
  removeBefore(beforeMs: number, limit: number, ids?: readonly string[]): number {
    const busyTimeout = String(this.#db.pragma("busy_timeout", { simple: true }));
    this.#db.pragma("busy_timeout = 0"); // the event loop's thread: fail at once, try later
    try {
      return this.#db.transaction(() => {
        if (!ids) {
          return this.#db.prepare(`DELETE FROM usage_log WHERE rowid IN
            (SELECT rowid FROM usage_log WHERE time < ? ORDER BY time LIMIT ?)`).run(beforeMs, limit).changes;
        }
        const one = this.#db.prepare("DELETE FROM usage_log WHERE request_id = ? AND time < ?");
        let removed = 0;
        for (const id of ids.slice(0, limit)) removed += one.run(id, beforeMs).changes;
        return removed;
      }).immediate();
    } finally {
      this.#db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }

  #spendOfEntries(by: SpendDimension, range: SpendRange): SpendRow[] {
    const subject = range.subject;
    const params = {
      since: range.since ?? Number.MIN_SAFE_INTEGER, until: range.until ?? Number.MAX_SAFE_INTEGER,
      ...(subject === undefined ? {} : { subject: subject.name }),
    };
    if (by !== "day") return (this.#spendOver(by, dimensionColumn[by], subject?.kind).all(params) as SpendSqlRow[]).map(spendRowOf);
    const bucketMs = dayBucketMs(range.timeZone);
    const statement = this.#spendOver(`day:${bucketMs}`, `CAST(time / ${bucketMs} AS TEXT)`, subject?.kind);
    return daysOfBuckets((statement.all(params) as SpendSqlRow[]).map(spendRowOf), range);
  }

  /** Requests, errors and unrefunded cost per bucket over the range, oldest first (on
   * usage_log_time). */
  traffic(range: TrafficRange, bucketMs: number): TrafficBucket[] {
    this.#traffic ??= this.#db.prepare(`SELECT ${bucketSql("@bucketMs")} AS bucket, COUNT(*) AS requests,
        SUM(CASE WHEN ${ERROR_SQL} THEN 1 ELSE 0 END) AS errors,
        SUM(CASE WHEN refunded_at IS NULL THEN cost_nano ELSE 0 END) AS cost
      FROM usage_log WHERE time >= @since AND time < @until GROUP BY bucket ORDER BY bucket`);
    const rows = this.#traffic.all({ since: range.sinceMs, until: range.untilMs, bucketMs: BigInt(bucketMs) }) as { bucket: bigint; requests: bigint; errors: bigint; cost: bigint }[];
    return rows.map((r) => ({ bucket: Number(r.bucket), requests: Number(r.requests), errors: Number(r.errors), costNano: BigInt(r.cost) }));
  }

  /** Requests and errors per channel key over the range (requests a channel answered). */
  keyCounts(range: TrafficRange): KeyCount[] {
    this.#keyCounts ??= this.#db.prepare(`SELECT channel, usage_log.key AS key, COUNT(*) AS requests,
        SUM(CASE WHEN ${ERROR_SQL} THEN 1 ELSE 0 END) AS errors
      FROM usage_log WHERE time >= @since AND time < @until AND channel IS NOT NULL GROUP BY channel, usage_log.key`);
    const rows = this.#keyCounts.all({ since: range.sinceMs, until: range.untilMs }) as { channel: string; key: string | null; requests: bigint; errors: bigint }[];
    return rows.map((r) => ({ channel: r.channel, ...(r.key === null ? {} : { key: r.key }), requests: Number(r.requests), errors: Number(r.errors) }));
  }

  /** The latency of the newest LATENCY_SAMPLE requests a channel answered in the range. */
  latencySample(range: TrafficRange): LatencyPoint[] {
    this.#latency ??= this.#db.prepare(`SELECT channel, usage_log.key AS key, duration_ms FROM usage_log
      WHERE time >= @since AND time < @until AND channel IS NOT NULL ORDER BY time DESC, rowid DESC LIMIT ${LATENCY_SAMPLE}`);
    const rows = this.#latency.all({ since: range.sinceMs, until: range.untilMs }) as { channel: string; key: string | null; duration_ms: number }[];
    return rows.map((r) => ({ channel: r.channel, ...(r.key === null ? {} : { key: r.key }), durationMs: Number(r.duration_ms) }));
  }

  /** What `subject` used from `sinceMs` on per bucket, refunds left out, oldest first;
   * buckets where nothing was used left out. */
  usageBuckets(subject: UsageSubject, sinceMs: number, bucketMs: number): UsageBucket[] {
    let statement = this.#buckets.get(subject.kind);
    if (!statement) {
      // The bucket size is bound as a bigint: an INTEGER, so `/` divides as integers.
      statement = this.#db.prepare(`SELECT ${bucketSql("@bucketMs")} AS bucket, SUM(cost_nano) AS cost,
          SUM(input + cache_read + cache_write + output) AS tokens
        FROM usage_log WHERE ${subject.kind === "user" ? "user" : "token"} = @name AND time >= @since AND refunded_at IS NULL
        GROUP BY bucket HAVING cost <> 0 OR tokens <> 0 ORDER BY bucket`);
      this.#buckets.set(subject.kind, statement);
    }
    const rows = statement.all({ name: subject.name, since: firstMs(sinceMs), bucketMs: BigInt(bucketMs) }) as { bucket: bigint; cost: bigint; tokens: bigint }[];
    return rows.map((r) => ({ bucket: Number(r.bucket), costNano: r.cost, tokens: Number(r.tokens) }));
  }
}
