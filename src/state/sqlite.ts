// The embedded default store: one SQLite file (better-sqlite3) holding the usage log and
// the spend counters. Money columns are 64-bit integers read back as bigint, never floats.

import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { log } from "../observability/log.js";
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

/**
 * Group commit: entries recorded within this many milliseconds share one transaction.
 * A commit costs ~45 µs whatever its size, which per request would halve the gateway's
 * throughput; batched it costs a few µs. The price: a kill -9 can lose the charges
 * recorded in the last GROUP_COMMIT_MS (never half of one: each entry and its spend
 * move together).
 */
export const GROUP_COMMIT_MS = 10;
/** A batch this large commits at once rather than waiting for the timer. */
const MAX_BATCH = 512;

class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #queries: SqliteQueries;
  readonly #commit: Database.Transaction<(entries: readonly UsageEntry[]) => void>;
  #pending: UsageEntry[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#queries = new SqliteQueries(db);
    const q = this.#queries;
    this.#commit = db.transaction((entries: readonly UsageEntry[]) => {
      // One counter update per token and user per batch, not per entry.
      const tokens = new Map<string, bigint>();
      const users = new Map<string, bigint>();
      // Only newly inserted entries come back: a request id already recorded is not charged twice.
      for (const c of q.insertEntries(entries)) {
        if (c.costNano === 0n) continue;
        tokens.set(c.token, (tokens.get(c.token) ?? 0n) + c.costNano);
        users.set(c.user, (users.get(c.user) ?? 0n) + c.costNano);
      }
      for (const [name, nano] of tokens) q.addSpend("token", name, nano);
      for (const [name, nano] of users) q.addSpend("user", name, nano);
    });
  }

  spentByToken(token: string): bigint {
    this.flush();
    return this.#queries.spent("token", token);
  }

  spentByUser(user: string): bigint {
    this.flush();
    return this.#queries.spent("user", user);
  }

  record(entry: UsageEntry): void {
    // Entries are immutable by contract, so the batch keeps the caller's object; only the
    // money type is checked here (normalizeEntry shapes rows on the way out).
    if (typeof entry.costNano !== "bigint") {
      throw new TypeError(`usage entry ${entry.requestId}: costNano must be a bigint of nano-units`);
    }
    this.#pending.push(entry);
    if (this.#pending.length >= MAX_BATCH) this.flush();
    else this.#timer ??= setTimeout(() => this.#flushInBackground(), GROUP_COMMIT_MS);
  }

  flush(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    try {
      // IMMEDIATE takes the write lock up front (waiting up to busy_timeout), so the
      // transaction never has to upgrade a read snapshot another writer made stale.
      this.#commit.immediate(batch);
    } catch {
      // One bad entry must not take the batch with it: commit them one by one, and let
      // the caller hear about the ones that still fail.
      const failed: unknown[] = [];
      for (const entry of batch) {
        try {
          this.#commit.immediate([entry]);
        } catch (error) {
          failed.push(error);
        }
      }
      if (failed.length > 0) throw new AggregateError(failed, `${failed.length} usage entries could not be recorded`);
    }
  }

  /** The timer's flush: nobody is there to catch, so a failure is logged, loudly. */
  #flushInBackground(): void {
    try {
      this.flush();
    } catch (error) {
      const errors = error instanceof AggregateError ? error.errors.map(String) : [String(error)];
      log.error("usage entries could not be recorded; their charges are lost from the store", { errors });
    }
  }

  logs(filter: LogFilter): UsageEntry[] {
    this.flush();
    return this.#queries.logs(filter);
  }

  spend(by: SpendDimension, range: { since?: number; until?: number }): SpendRow[] {
    this.flush();
    return this.#queries.spend(by, range);
  }

  close(): void {
    if (!this.#db.open) return;
    try {
      this.flush();
    } finally {
      this.#db.close();
    }
  }
}
