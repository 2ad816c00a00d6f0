// The embedded default store: one SQLite file (better-sqlite3) holding the usage log and
// the spend counters. Money columns are 64-bit integers read back as bigint, never floats.

import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { normalizeEntry } from "./entry.js";
import { migrate } from "./migrations.js";
import { SqliteQueries } from "./sqlite-queries.js";
import type { LogFilter, SpendDimension, SpendRow, Store, UsageEntry } from "./store.js";

/** How to open a SQLite store. */
export interface SqliteStoreOptions {
  /** Refuse a missing file instead of creating it (the read-only CLI commands). */
  readonly mustExist?: boolean;
  /** How long a statement waits for another process's write lock; default 5000 ms. */
  readonly busyTimeoutMs?: number;
}

/**
 * Opens (creating it and its parent folders unless `mustExist`) the SQLite store at
 * `path`, or a private in-memory database for ":memory:", and migrates its schema.
 * Throws when the file is missing (with `mustExist`), unreadable, or newer than this code.
 */
export function openSqliteStore(path: string, opts: SqliteStoreOptions = {}): Store {
  const memory = path === ":memory:";
  if (!memory) {
    if (opts.mustExist && !existsSync(path)) throw new Error(`no store at ${path} (has the gateway run yet?)`);
    mkdirSync(dirname(path), { recursive: true });
  }
  const db = new Database(path, { fileMustExist: opts.mustExist ?? false });
  try {
    // Wait for a lock held by another process (the server writing while the CLI reads)
    // instead of failing at once with SQLITE_BUSY.
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
    // WAL: readers never block the writer and the writer never blocks readers.
    db.pragma("journal_mode = WAL");
    // NORMAL in WAL mode: a commit appends its frames to the -wal file with write(2)
    // before returning, so the data is in the OS page cache and survives kill -9 of the
    // process; fsync happens only at checkpoints. FULL would also fsync the WAL on every
    // commit, which adds durability against power loss or an OS crash at the cost of one
    // disk flush per request.
    db.pragma("synchronous = NORMAL");
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  db.defaultSafeIntegers(true);
  return new SqliteStore(db);
}

class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #queries: SqliteQueries;
  readonly #record: Database.Transaction<(entry: UsageEntry) => void>;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#queries = new SqliteQueries(db);
    const q = this.#queries;
    this.#record = db.transaction((entry: UsageEntry) => {
      if (!q.insertEntry(entry)) return;
      q.addSpend("token", entry.token, entry.costNano);
      q.addSpend("user", entry.user, entry.costNano);
    });
  }

  spentByToken(token: string): bigint {
    return this.#queries.spent("token", token);
  }

  spentByUser(user: string): bigint {
    return this.#queries.spent("user", user);
  }

  record(entry: UsageEntry): void {
    // IMMEDIATE takes the write lock up front (waiting up to busy_timeout), so the
    // transaction never has to upgrade a read snapshot that another writer made stale.
    this.#record.immediate(normalizeEntry(entry));
  }

  logs(filter: LogFilter): UsageEntry[] {
    return this.#queries.logs(filter);
  }

  spend(by: SpendDimension, range: { since?: number; until?: number }): SpendRow[] {
    return this.#queries.spend(by, range);
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
