// The PostgreSQL usage log's monthly partitions (migration 7): one table per UTC calendar
// month, named usage_log_yYYYYmMM and holding [first ms of the month, first ms of the
// next), plus usage_log_default for whatever arrives before its month exists. Months are
// made ahead (the current and the next, at open and hourly) and on demand for entries of
// any other month (`gateway migrate` of an old log); retention drops whole months at once
// instead of deleting their rows one batch at a time.

import type pg from "pg";

/** Held (per transaction) by whoever changes partitions, so gateways do it one at a time
 * (an arbitrary fixed key, not the migration's nor the retention's). */
const PARTITION_LOCK = 7_351_200_914n;

/** A month as a count: year × 12 + month (0-based), in UTC. */
export type MonthIndex = number;

/** Months a partition is made for: years 1970 to 9999. Entries outside go to the default
 * partition (no real request has such a time; a name with a five-digit year would not sort). */
const FIRST_MONTH = 1970 * 12;
const LAST_MONTH = 9999 * 12 + 11;

/** Every column of usage_log in table order, for moving rows between partitions. */
const COLUMNS = `seq, request_id, time, token, "user", grp, model, upstream_model, channel, inbound_protocol,
  upstream_protocol, input, cache_read, cache_write, output, reasoning, cost_nano, status, error, duration_ms,
  ttfb_ms, estimated, refunded_at, dropped_fields, tool_calls, breakdown, channel_cost_nano, key`;

/** The partitioning statements of migration 7 (postgres-migrations.ts), in the same terms
 * as the code here: the months that have entries get a partition each, as named here. */
export const PARTITION_MIGRATION_SQL = `
  SET LOCAL statement_timeout = 0;
  ALTER TABLE usage_log RENAME TO usage_log_unpartitioned;
  ALTER INDEX usage_log_pkey RENAME TO usage_log_unpartitioned_pkey;
  DROP INDEX usage_log_time, usage_log_token, usage_log_user, usage_log_model;
  -- PostgreSQL 15 allows no identity column on a partitioned table: a sequence instead,
  -- continuing where the identity left off.
  CREATE SEQUENCE usage_log_seq AS bigint;
  SELECT setval('usage_log_seq', COALESCE(max(seq), 0) + 1, false) FROM usage_log_unpartitioned;
  CREATE TABLE usage_log (
    seq               bigint NOT NULL DEFAULT nextval('usage_log_seq'),
    request_id        text NOT NULL,
    time              bigint NOT NULL,
    token             text NOT NULL,
    "user"            text NOT NULL,
    grp               text NOT NULL,
    model             text NOT NULL,
    upstream_model    text,
    channel           text,
    inbound_protocol  text NOT NULL,
    upstream_protocol text,
    input             bigint NOT NULL,
    cache_read        bigint NOT NULL,
    cache_write       bigint NOT NULL,
    output            bigint NOT NULL,
    reasoning         bigint NOT NULL,
    cost_nano         bigint NOT NULL,
    status            integer NOT NULL,
    error             text,
    duration_ms       double precision NOT NULL,
    ttfb_ms           double precision,
    estimated         boolean NOT NULL,
    refunded_at       bigint,
    dropped_fields    text,
    tool_calls        text,
    breakdown         text,
    channel_cost_nano bigint,
    key               text
  ) PARTITION BY RANGE (time);
  ALTER SEQUENCE usage_log_seq OWNED BY usage_log.seq;
  CREATE TABLE usage_log_default PARTITION OF usage_log DEFAULT;
  DO $$
  DECLARE first timestamp;
  BEGIN
    FOR first IN
      SELECT DISTINCT date_trunc('month', to_timestamp(time / 1000.0) AT TIME ZONE 'UTC') FROM usage_log_unpartitioned
      WHERE time >= 0 AND time < 253402300800000
    LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF usage_log FOR VALUES FROM (%s) TO (%s)',
        to_char(first, '"usage_log_y"YYYY"m"MM'),
        (extract(epoch FROM first) * 1000)::bigint,
        (extract(epoch FROM first + interval '1 month') * 1000)::bigint);
    END LOOP;
  END $$;
  INSERT INTO usage_log (${COLUMNS}) SELECT ${COLUMNS} FROM usage_log_unpartitioned;
  DROP TABLE usage_log_unpartitioned;
  -- The primary key must hold the partition key: a retried append carries its first time,
  -- so (request_id, time) still keeps one row per request. Refunds and --request-id look
  -- up by its leading column.
  ALTER TABLE usage_log ADD CONSTRAINT usage_log_pkey PRIMARY KEY (request_id, time);
  CREATE INDEX usage_log_time  ON usage_log (time, seq);
  CREATE INDEX usage_log_token ON usage_log (token, time);
  CREATE INDEX usage_log_user  ON usage_log ("user", time);
  CREATE INDEX usage_log_model ON usage_log (model, time);
`;

/** The month an epoch-ms time falls in (UTC). */
export function monthOf(ms: number): MonthIndex {
  const d = new Date(ms);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

/** The first ms of a month. */
export function monthStart(month: MonthIndex): number {
  return Date.UTC(Math.floor(month / 12), month % 12, 1);
}

/** A month's partition: usage_log_y2026m03. */
export function partitionName(month: MonthIndex): string {
  return `usage_log_y${Math.floor(month / 12)}m${String((month % 12) + 1).padStart(2, "0")}`;
}

/** Whether a month gets a partition of its own (else its entries stay in the default). */
export function hasOwnPartition(month: MonthIndex): boolean {
  return Number.isInteger(month) && month >= FIRST_MONTH && month <= LAST_MONTH;
}

const PARTITION_NAME = /^usage_log_y(\d{4})m(\d{2})$/;

/** The month of a partition named by partitionName, or undefined for any other table. */
export function monthOfPartition(name: string): MonthIndex | undefined {
  const m = PARTITION_NAME.exec(name);
  return m ? Number(m[1]) * 12 + Number(m[2]) - 1 : undefined;
}

async function inTransaction<T>(pool: pg.Pool, run: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1)", [PARTITION_LOCK.toString()]);
      const result = await run(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  } finally {
    client.release();
  }
}

/**
 * Makes sure `month` has its partition: when it has none, a table is made, the month's
 * rows the default partition holds are moved into it, and it is attached, in one
 * transaction. Attaching, unlike CREATE TABLE … PARTITION OF, takes no lock that stops
 * appends to the other months; appends to the default wait the moment it takes.
 * True when it made one.
 */
export async function ensureMonthPartition(pool: pg.Pool, month: MonthIndex): Promise<boolean> {
  if (!hasOwnPartition(month)) throw new RangeError(`no partition is made for month ${month}`);
  const name = partitionName(month);
  const from = monthStart(month);
  const to = monthStart(month + 1);
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [name]);
    if (rows[0].present) return false;
    await client.query("LOCK TABLE usage_log_default IN SHARE ROW EXCLUSIVE MODE");
    await client.query(`CREATE TABLE ${name} (LIKE usage_log INCLUDING DEFAULTS)`);
    await client.query({
      text: `WITH moved AS (DELETE FROM usage_log_default WHERE time >= $1 AND time < $2 RETURNING ${COLUMNS})
        INSERT INTO ${name} (${COLUMNS}) SELECT ${COLUMNS} FROM moved`,
      values: [from, to],
    });
    await client.query(`ALTER TABLE usage_log ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${to})`);
    return true;
  });
}

/** The months that have a partition, oldest first. */
export async function partitionMonths(pool: pg.Pool): Promise<MonthIndex[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'usage_log'::regclass`,
  );
  return rows.flatMap((r) => {
    const month = monthOfPartition(r.name);
    return month === undefined ? [] : [month];
  }).sort((a, b) => a - b);
}

/** What dropping whole months found. */
export interface DroppedMonths {
  /** Entries the dropped partitions held. */
  readonly entries: number;
  readonly months: number;
}

/**
 * Drops the partitions of months that end at or before `beforeMs` (with `onlyEmpty`, only
 * those holding no entry: their entries are to be archived one batch at a time first).
 * Dropping a partition waits for no more than `lockWaitMs` for the appends and reports
 * under way: when it cannot have the table by then, it is left for the next sweep.
 */
export async function dropMonthsBefore(pool: pg.Pool, beforeMs: number, onlyEmpty: boolean, lockWaitMs = 2000): Promise<DroppedMonths> {
  let entries = 0;
  let months = 0;
  for (const month of await partitionMonths(pool)) {
    if (monthStart(month + 1) > beforeMs) break;
    const name = partitionName(month);
    // Counted before the lock, which is held only for the drop: a month past the retention
    // takes no appends but those of a `gateway migrate` of old entries running at once.
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`);
    const n = Number(rows[0].n);
    if (onlyEmpty && n > 0) continue;
    const dropped = await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockWaitMs))}`);
      // The parent first, as appends take it, so the two never wait on each other in a circle.
      await client.query("LOCK TABLE ONLY usage_log IN ACCESS EXCLUSIVE MODE");
      if (onlyEmpty) {
        const { rows: any } = await client.query<{ some: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${name}) AS some`);
        if (any[0].some) return false;
      }
      await client.query(`DROP TABLE ${name}`);
      return true;
    }).catch((error: { code?: string }) => {
      if (error.code === "55P03") return false; // lock_not_available: the next sweep tries again
      throw error;
    });
    if (!dropped) continue;
    entries += n;
    months++;
  }
  return { entries, months };
}
