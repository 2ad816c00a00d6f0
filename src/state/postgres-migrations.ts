// Versioned schema of the PostgreSQL ledger. `schema_migrations` records each migration a
// database has applied; opening applies the rest in order, each in its own transaction,
// under an advisory lock so gateways starting together apply each step exactly once, and
// refuses a database written by a newer gateway than this one.

import type pg from "pg";

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
];

/** The schema version this code writes: the number of known migrations. */
export const postgresSchemaVersion = postgresMigrations.length;

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
          await client.query(migration.sql);
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
