// Versioned schema of the SQLite store. `PRAGMA user_version` records how many migrations
// a database has applied; opening applies the rest in order, each in its own transaction,
// and refuses a database written by a newer gateway than this one.

import type Database from "better-sqlite3";

/** One schema step; `version` is its position in the list, counted from 1. */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

/** Every migration, oldest first. Append only: never edit one that has shipped. */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    description: "usage log and spend counters",
    sql: `
      CREATE TABLE usage_log (
        request_id        TEXT PRIMARY KEY,
        time              INTEGER NOT NULL,
        token             TEXT NOT NULL,
        user              TEXT NOT NULL,
        grp               TEXT NOT NULL,
        model             TEXT NOT NULL,
        upstream_model    TEXT,
        channel           TEXT,
        inbound_protocol  TEXT NOT NULL,
        upstream_protocol TEXT,
        input             INTEGER NOT NULL,
        cache_read        INTEGER NOT NULL,
        cache_write       INTEGER NOT NULL,
        output            INTEGER NOT NULL,
        reasoning         INTEGER NOT NULL,
        cost_nano         INTEGER NOT NULL,
        status            INTEGER NOT NULL,
        error             TEXT,
        duration_ms       REAL NOT NULL,
        ttfb_ms           REAL,
        estimated         INTEGER NOT NULL
      );
      -- Every index is paid on every request; user and model filters scan by time range.
      -- Request ids are time-ordered, so the primary key index grows at its end.
      CREATE INDEX usage_log_time  ON usage_log (time);
      CREATE INDEX usage_log_token ON usage_log (token, time);
      CREATE TABLE spend (
        kind TEXT NOT NULL CHECK (kind IN ('token', 'user')),
        name TEXT NOT NULL,
        -- SQLite turns an overflowing integer sum into a REAL; refuse that instead of
        -- silently rounding money (the recording transaction then rolls back).
        nano INTEGER NOT NULL CHECK (typeof(nano) = 'integer'),
        PRIMARY KEY (kind, name)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    description: "refunds of failed asynchronous jobs",
    // NULL until the charge is refunded; cost_nano keeps what was charged. No index:
    // refunds look entries up by request id (the primary key).
    sql: `ALTER TABLE usage_log ADD COLUMN refunded_at INTEGER;`,
  },
  {
    version: 3,
    description: "fields a converted request left out",
    // NULL when none were; else their names as the client sent them, comma-separated.
    sql: `ALTER TABLE usage_log ADD COLUMN dropped_fields TEXT;`,
  },
  {
    version: 4,
    description: "hosted tool calls billed per call",
    // NULL when the answer ran none; else "web_search:2,web_fetch:1" (see formatToolCalls).
    sql: `ALTER TABLE usage_log ADD COLUMN tool_calls TEXT;`,
  },
  {
    version: 5,
    description: "cost breakdowns and the cost to the operator",
    // NULL in rows written before (their cost is then unknown, not 0); else the text of
    // billing/breakdown.ts and the channel's cost in nano-units. No index: `--channel`
    // rides on the time range, and every index is paid on every request.
    sql: `
      ALTER TABLE usage_log ADD COLUMN breakdown TEXT;
      ALTER TABLE usage_log ADD COLUMN channel_cost_nano INTEGER;
    `,
  },
  {
    version: 6,
    description: "the channel key that served each request",
    // NULL in rows written before, and when no key served; else the key's fingerprint
    // (never the key). No index: `--key` rides on the time range.
    sql: `ALTER TABLE usage_log ADD COLUMN key TEXT;`,
  },
  {
    version: 7,
    description: "accounts: users, tokens, credit ledger, redemption codes, audit log, change feed",
    // The tables of src/accounts/sqlite-store.ts; PostgreSQL uses the same names. Money
    // is INTEGER nano-units (read back as bigint), lists are JSON text, times epoch ms.
    // Names compare bytewise (BINARY), so lists page in one order on every store.
    sql: `
      CREATE TABLE account_users (
        name       TEXT PRIMARY KEY,
        status     TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
        groups     TEXT NOT NULL,
        note       TEXT,
        settings   TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        version    INTEGER NOT NULL
      );
      CREATE TABLE account_tokens (
        name       TEXT PRIMARY KEY,
        key_hash   TEXT NOT NULL UNIQUE,
        key_hint   TEXT,
        user       TEXT NOT NULL,
        grp        TEXT NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'revoked')),
        expires_at INTEGER,
        quota_nano INTEGER CHECK (quota_nano IS NULL OR typeof(quota_nano) = 'integer'),
        allow_ips  TEXT,
        models     TEXT,
        settings   TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        version    INTEGER NOT NULL
      );
      CREATE INDEX account_tokens_user ON account_tokens (user, name);
      CREATE TABLE credit_entries (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        user            TEXT NOT NULL,
        amount_nano     INTEGER NOT NULL CHECK (typeof(amount_nano) = 'integer'),
        kind            TEXT NOT NULL CHECK (kind IN ('grant', 'adjustment', 'redeem')),
        reason          TEXT NOT NULL,
        actor           TEXT NOT NULL,
        -- NULL for most entries; UNIQUE lets any number of NULLs in.
        idempotency_key TEXT UNIQUE,
        at              INTEGER NOT NULL
      );
      CREATE INDEX credit_entries_user ON credit_entries (user, id);
      CREATE TABLE code_batches (
        batch       TEXT PRIMARY KEY,
        count       INTEGER NOT NULL,
        amount_nano INTEGER NOT NULL CHECK (typeof(amount_nano) = 'integer'),
        expires_at  INTEGER NOT NULL,
        redeemed    INTEGER NOT NULL DEFAULT 0,
        created_at  INTEGER NOT NULL,
        actor       TEXT NOT NULL
      );
      CREATE TABLE redemption_codes (
        code_hash   TEXT PRIMARY KEY,
        batch       TEXT NOT NULL REFERENCES code_batches (batch),
        -- NULL until redeemed: the conditional UPDATE on it is what makes a code single-use.
        redeemed_at INTEGER,
        redeemed_by TEXT
      ) WITHOUT ROWID;
      CREATE TABLE audit_log (
        id     INTEGER PRIMARY KEY AUTOINCREMENT,
        at     INTEGER NOT NULL,
        actor  TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        before TEXT,
        after  TEXT
      );
      CREATE INDEX audit_log_target ON audit_log (target, id);
      CREATE INDEX audit_log_actor  ON audit_log (actor, id);
      -- Kept for an hour: long enough for any follower to catch up, or to reload instead.
      CREATE TABLE account_changes (
        seq      INTEGER PRIMARY KEY AUTOINCREMENT,
        kind     TEXT NOT NULL CHECK (kind IN ('user', 'token')),
        name     TEXT NOT NULL,
        key_hash TEXT,
        at       INTEGER NOT NULL
      );
      CREATE INDEX account_changes_at ON account_changes (at);
    `,
  },
  {
    version: 8,
    description: "usage by user over time",
    // What a user's budget that resets is seeded from (Store.usageBuckets) reads a user's
    // entries from a time on; tokens have had usage_log_token since version 1.
    sql: `CREATE INDEX usage_log_user ON usage_log (user, time);`,
  },
  {
    version: 9,
    description: "daily rollups of the usage log",
    // Per UTC day (days since 1970-01-01), user, token, model, channel ('' when none
    // answered) and group: what spend reports read for whole days (state/rollups.ts).
    // Written in the transaction that inserts or refunds the entries; retention removes
    // entries and keeps these. Money as in spend rows: refunded entries count requests and
    // tokens, not money. Backfilled from the entries already here.
    sql: `
      CREATE TABLE usage_daily (
        day                  INTEGER NOT NULL,
        user                 TEXT NOT NULL,
        token                TEXT NOT NULL,
        model                TEXT NOT NULL,
        channel              TEXT NOT NULL,
        grp                  TEXT NOT NULL,
        requests             INTEGER NOT NULL,
        input                INTEGER NOT NULL,
        cache_read           INTEGER NOT NULL,
        cache_write          INTEGER NOT NULL,
        output               INTEGER NOT NULL,
        reasoning            INTEGER NOT NULL,
        cost_nano            INTEGER NOT NULL CHECK (typeof(cost_nano) = 'integer'),
        channel_cost_nano    INTEGER NOT NULL CHECK (typeof(channel_cost_nano) = 'integer'),
        channel_cost_unknown INTEGER NOT NULL,
        PRIMARY KEY (day, user, token, model, channel, grp)
      ) WITHOUT ROWID;
      INSERT INTO usage_daily
      SELECT (time - ((time % 86400000) + 86400000) % 86400000) / 86400000, user, token, model, COALESCE(channel, ''), grp,
        COUNT(*), SUM(input), SUM(cache_read), SUM(cache_write), SUM(output), SUM(reasoning),
        SUM(CASE WHEN refunded_at IS NULL THEN cost_nano ELSE 0 END),
        SUM(CASE WHEN refunded_at IS NULL THEN COALESCE(channel_cost_nano, 0) ELSE 0 END),
        SUM(CASE WHEN refunded_at IS NULL AND channel_cost_nano IS NULL AND cost_nano <> 0 THEN 1 ELSE 0 END)
      FROM usage_log GROUP BY 1, 2, 3, 4, 5, 6;
    `,
  },
  {
    version: 10,
    description: "daily rollups by user and by token",
    // One customer's spend report (the console's, gateway usage --user) reads their user's or
    // token's rollups over a range of days without reading every other account's.
    sql: `
      CREATE INDEX usage_daily_user  ON usage_daily (user, day);
      CREATE INDEX usage_daily_token ON usage_daily (token, day);
    `,
  },
];

/** The schema version this code writes: the number of known migrations. */
export const schemaVersion = migrations.length;

function userVersion(db: Database.Database): number {
  return Number(db.pragma("user_version", { simple: true }));
}

/**
 * Brings `db` to `schemaVersion`. Each pending migration runs in an IMMEDIATE transaction
 * that re-reads the version first, so two processes opening a fresh file at once apply
 * each step exactly once. Throws when the database is newer than this code.
 */
export function migrate(db: Database.Database): void {
  const found = userVersion(db);
  if (found > schemaVersion) {
    throw new Error(
      `the store's schema is version ${found}, newer than this gateway knows (${schemaVersion}); ` +
        "upgrade the gateway or point it at another store",
    );
  }
  for (const migration of migrations) {
    if (migration.version <= found) continue;
    const step = db.transaction(() => {
      if (userVersion(db) >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    });
    step.immediate();
  }
}
