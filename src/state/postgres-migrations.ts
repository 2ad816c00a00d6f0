// Versioned schema of the PostgreSQL ledger. `schema_migrations` records each migration a
// database has applied; opening applies the rest in order, each in its own transaction,
// under an advisory lock so gateways starting together apply each step exactly once, and
// refuses a database written by a newer gateway than this one.

import type pg from "pg";
import { PARTITION_MIGRATION_SQL } from "./postgres-partitions.js";

/** One schema step; `version` is its position in the list, counted from 1. */
export interface PostgresMigration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

/** Every migration, oldest first. Append only: never edit one that has shipped. */
export const postgresMigrations: readonly PostgresMigration[] = [
  {
    version: 1,
    description: "usage log and settled spend",
    // The columns of SQLite's usage_log (migrations.ts), so `gateway migrate` copies rows as
    // they are. Money is bigint (int8), never numeric or float; `seq` keeps insertion order
    // for entries that arrived in the same millisecond.
    sql: `
      CREATE TABLE usage_log (
        seq               bigint GENERATED ALWAYS AS IDENTITY,
        request_id        text PRIMARY KEY,
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
        dropped_fields    text
      );
      -- Every index is paid on every request: one per CLI filter that would otherwise scan
      -- the whole log (time ranges, --token, --user, --model; status filters ride on time).
      CREATE INDEX usage_log_time  ON usage_log (time, seq);
      CREATE INDEX usage_log_token ON usage_log (token, time);
      CREATE INDEX usage_log_user  ON usage_log ("user", time);
      CREATE INDEX usage_log_model ON usage_log (model, time);
      -- Settled spend (charged minus refunded) per token and user, updated in the statement
      -- that inserts or refunds entries, so it always equals what the log says.
      CREATE TABLE spend (
        kind text NOT NULL CHECK (kind IN ('token', 'user')),
        name text NOT NULL,
        nano bigint NOT NULL,
        PRIMARY KEY (kind, name)
      );
    `,
  },
  {
    version: 2,
    description: "hosted tool calls billed per call",
    // As SQLite's usage_log.tool_calls: NULL, or "web_search:2,web_fetch:1".
    sql: `ALTER TABLE usage_log ADD COLUMN tool_calls text;`,
  },
  {
    version: 3,
    description: "cost breakdowns and the cost to the operator",
    // As SQLite's (migration 5): NULL in rows written before, whose cost is then unknown.
    sql: `ALTER TABLE usage_log ADD COLUMN breakdown text, ADD COLUMN channel_cost_nano bigint;`,
  },
  {
    version: 4,
    description: "the channel key that served each request",
    // As SQLite's (migration 6): NULL in rows written before and when no key served; else
    // the key's fingerprint, never the key.
    sql: `ALTER TABLE usage_log ADD COLUMN key text;`,
  },
  {
    version: 5,
    description: "accounts: users, tokens, credit ledger, redemption codes, audit log, change feed",
    // The tables of src/accounts/postgres-store.ts, named as SQLite's (its migration 7).
    // Money is bigint nano-units, times epoch ms, lists text[] (NULL: absent, '{}': empty).
    // Names are COLLATE "C": bytewise, so lists page in one order on every store and
    // whatever the database's locale. `audit_log.before/after` hold the records' JSON views.
    sql: `
      CREATE TABLE account_users (
        name       text COLLATE "C" CONSTRAINT account_users_pkey PRIMARY KEY,
        status     text NOT NULL CHECK (status IN ('active', 'disabled')),
        groups     text[] NOT NULL,
        note       text,
        settings   jsonb,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        version    integer NOT NULL
      );
      CREATE TABLE account_tokens (
        name       text COLLATE "C" CONSTRAINT account_tokens_pkey PRIMARY KEY,
        key_hash   text NOT NULL CONSTRAINT account_tokens_key_hash_key UNIQUE,
        key_hint   text,
        "user"     text COLLATE "C" NOT NULL,
        grp        text NOT NULL,
        status     text NOT NULL CHECK (status IN ('active', 'disabled', 'revoked')),
        expires_at bigint,
        quota_nano bigint,
        allow_ips  text[],
        models     text[],
        settings   jsonb,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        version    integer NOT NULL
      );
      CREATE INDEX account_tokens_user ON account_tokens ("user", name);
      CREATE TABLE credit_entries (
        id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        "user"          text NOT NULL,
        amount_nano     bigint NOT NULL,
        kind            text NOT NULL CHECK (kind IN ('grant', 'adjustment', 'redeem')),
        reason          text NOT NULL,
        actor           text NOT NULL,
        -- NULL for most entries; a unique constraint lets any number of NULLs in.
        idempotency_key text CONSTRAINT credit_entries_idempotency_key_key UNIQUE,
        at              bigint NOT NULL
      );
      CREATE INDEX credit_entries_user ON credit_entries ("user", id);
      CREATE TABLE code_batches (
        batch       text CONSTRAINT code_batches_pkey PRIMARY KEY,
        count       integer NOT NULL,
        amount_nano bigint NOT NULL,
        expires_at  bigint NOT NULL,
        redeemed    integer NOT NULL DEFAULT 0,
        created_at  bigint NOT NULL,
        actor       text NOT NULL
      );
      CREATE TABLE redemption_codes (
        code_hash   text CONSTRAINT redemption_codes_pkey PRIMARY KEY,
        batch       text NOT NULL REFERENCES code_batches (batch),
        -- NULL until redeemed: the conditional UPDATE on it is what makes a code single-use.
        redeemed_at bigint,
        redeemed_by text
      );
      CREATE TABLE audit_log (
        id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at     bigint NOT NULL,
        actor  text NOT NULL,
        action text NOT NULL,
        target text NOT NULL,
        before jsonb,
        after  jsonb
      );
      CREATE INDEX audit_log_target ON audit_log (target, id);
      CREATE INDEX audit_log_actor  ON audit_log (actor, id);
      -- Kept for an hour: long enough for any follower to catch up, or to reload instead.
      CREATE TABLE account_changes (
        seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind     text NOT NULL CHECK (kind IN ('user', 'token')),
        name     text NOT NULL,
        key_hash text,
        at       bigint NOT NULL
      );
      CREATE INDEX account_changes_at ON account_changes (at);
    `,
  },
  {
    version: 6,
    description: "daily rollups of the usage log",
    // As SQLite's usage_daily (its migration 9): per UTC day (days since 1970-01-01), user,
    // token, model, channel ('' when none answered) and group, written in the statement that
    // inserts or refunds the entries; retention removes entries and keeps these (rollups.ts).
    // Backfilled from the entries already here, in this migration's transaction: on a
    // large log that takes longer than a statement may (statement_timeout), so not here.
    sql: `
      SET LOCAL statement_timeout = 0;
      CREATE TABLE usage_daily (
        day                  integer NOT NULL,
        "user"               text NOT NULL,
        token                text NOT NULL,
        model                text NOT NULL,
        channel              text NOT NULL,
        grp                  text NOT NULL,
        requests             bigint NOT NULL,
        input                bigint NOT NULL,
        cache_read           bigint NOT NULL,
        cache_write          bigint NOT NULL,
        output               bigint NOT NULL,
        reasoning            bigint NOT NULL,
        cost_nano            bigint NOT NULL,
        channel_cost_nano    bigint NOT NULL,
        channel_cost_unknown bigint NOT NULL,
        PRIMARY KEY (day, "user", token, model, channel, grp)
      );
      INSERT INTO usage_daily
      SELECT ((time - ((time % 86400000) + 86400000) % 86400000) / 86400000)::integer, "user", token, model,
        COALESCE(channel, ''), grp, count(*), sum(input), sum(cache_read), sum(cache_write), sum(output), sum(reasoning),
        sum(CASE WHEN refunded_at IS NULL THEN cost_nano ELSE 0 END),
        sum(CASE WHEN refunded_at IS NULL THEN COALESCE(channel_cost_nano, 0) ELSE 0 END),
        sum(CASE WHEN refunded_at IS NULL AND channel_cost_nano IS NULL AND cost_nano <> 0 THEN 1 ELSE 0 END)
      FROM usage_log GROUP BY 1, 2, 3, 4, 5, 6;
    `,
  },
  {
    version: 7,
    description: "the usage log partitioned by month",
    // The log becomes one table per UTC month (postgres-partitions.ts), so retention drops
    // whole months and a month's reports read one table. The entries are copied once, in
    // this migration's transaction: on a large log, start one gateway first (the README).
    sql: PARTITION_MIGRATION_SQL,
  },
  {
    version: 8,
    description: "daily rollups by user and by token",
    // One customer's spend report (the console's, gateway usage --user) reads their user's or
    // token's rollups over a range of days without reading every other account's.
    sql: `
      SET LOCAL statement_timeout = 0;
      CREATE INDEX usage_daily_user  ON usage_daily ("user", day);
      CREATE INDEX usage_daily_token ON usage_daily (token, day);
    `,
  },
];

/** The schema version this code writes: the number of known migrations. */
export const postgresSchemaVersion = postgresMigrations.length;

/** How long one migration may run before the client gives up (setTimeout's largest). */
const MIGRATION_QUERY_TIMEOUT_MS = 2 ** 31 - 1;

/** The advisory lock every gateway takes while migrating (an arbitrary fixed key). */
const MIGRATION_LOCK = 7_351_200_912n;

/**
 * Brings the database to `postgresSchemaVersion`: takes the migration lock, applies each
 * pending migration and its `schema_migrations` row in one transaction, and unlocks.
 * Throws when the database is newer than this code.
 */
export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK.toString()]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version     integer PRIMARY KEY,
        description text NOT NULL,
        applied_at  timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM schema_migrations");
      const found = rows[0]?.version ?? 0;
      if (found > postgresSchemaVersion) {
        throw new Error(
          `the ledger's schema is version ${found}, newer than this gateway knows (${postgresSchemaVersion}); ` +
            "upgrade the gateway or point it at another database",
        );
      }
      for (const migration of postgresMigrations) {
        if (migration.version <= found) continue;
        await client.query("BEGIN");
        try {
          // A migration that backfills may run long: the pool's client-side bound is lifted.
          await client.query({ text: migration.sql, query_timeout: MIGRATION_QUERY_TIMEOUT_MS } as pg.QueryConfig);
          await client.query("INSERT INTO schema_migrations (version, description) VALUES ($1, $2)", [
            migration.version,
            migration.description,
          ]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => {});
          throw new Error(`ledger migration ${migration.version} (${migration.description}) failed: ${(error as Error).message}`);
        }
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK.toString()]).catch(() => {});
    }
  } finally {
    client.release();
  }
}
