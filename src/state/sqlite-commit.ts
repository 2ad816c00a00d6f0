// What every connection to the store shares, whichever thread holds it: its settings, and
// one group commit (a batch of usage entries, the spend and the daily rollups they add, in
// one transaction).

import type Database from "better-sqlite3";
import { COST_AT, ID_AT, ROW_WIDTH, TOKEN_AT, USER_AT, type SqliteQueries } from "./sqlite-queries.js";

/** Per-connection settings; `journal_mode = WAL` belongs to the file and is set once, when
 * the store is opened. */
export function configureConnection(db: Database.Database, busyTimeoutMs: number): void {
  // Wait for a lock held by another connection (the writer thread, or the CLI reading
  // while the server writes) instead of failing at once with SQLITE_BUSY.
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // NORMAL in WAL mode: a commit appends its frames to the -wal file with write(2)
  // before returning, so the data is in the OS page cache and survives kill -9 of the
  // process; fsync happens only at checkpoints. FULL would also fsync the WAL on every
  // commit, which adds durability against power loss or an OS crash at the cost of one
  // disk flush per request.
  db.pragma("synchronous = NORMAL");
  // Money columns come back as bigint, never as a float.
  db.defaultSafeIntegers(true);
}

/** A row of a batch that could not be written, by request id. */
export interface FailedRow {
  readonly requestId: string;
  readonly error: string;
}

/** The database is locked by another connection (past busy_timeout): nothing is wrong
 * with the rows, and the same commit succeeds once the lock is gone. */
export function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

/**
 * Returns a function that commits a batch of rows (flat, see pushRow) and answers the
 * rows that could not be written. One bad row must not take the batch with it: when the
 * batch fails, its rows are committed one by one. A locked database throws (isLocked):
 * the caller waits and commits the batch again, since its rows are not at fault.
 */
export function batchCommitter(db: Database.Database, q: SqliteQueries): (rows: readonly unknown[]) => FailedRow[] {
  const commit = db.transaction((rows: readonly unknown[]) => {
    // One counter update per token and user per batch, not per entry.
    const tokens = new Map<string, bigint>();
    const users = new Map<string, bigint>();
    // Only newly inserted rows come back: a request id already recorded is not charged twice.
    const inserted = q.insertRows(rows);
    q.addRollups(rows, inserted);
    for (const i of inserted) {
      const at = i * ROW_WIDTH;
      const cost = rows[at + COST_AT] as bigint;
      if (cost === 0n) continue;
      const token = rows[at + TOKEN_AT] as string;
      const user = rows[at + USER_AT] as string;
      tokens.set(token, (tokens.get(token) ?? 0n) + cost);
      users.set(user, (users.get(user) ?? 0n) + cost);
    }
    for (const [name, nano] of tokens) q.addSpend("token", name, nano);
    for (const [name, nano] of users) q.addSpend("user", name, nano);
  });
  return (rows) => {
    try {
      // IMMEDIATE takes the write lock up front (waiting up to busy_timeout), so the
      // transaction never has to upgrade a read snapshot another writer made stale.
      commit.immediate(rows);
      return [];
    } catch (error) {
      if (isLocked(error)) throw error;
      const failed: FailedRow[] = [];
      for (let at = 0; at < rows.length; at += ROW_WIDTH) {
        try {
          commit.immediate(rows.slice(at, at + ROW_WIDTH));
        } catch (error) {
          if (isLocked(error)) throw error;
          failed.push({ requestId: String(rows[at + ID_AT]), error: String(error) });
        }
      }
      return failed;
    }
  };
}

/** Runs `step`, again every 20 ms while it fails with SQLITE_BUSY, for at most `limitMs`
 * (opening only: the wait blocks the thread). */
export function whileBusy<T>(limitMs: number, step: () => T): T {
  const deadline = Date.now() + limitMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return step();
    } catch (err) {
      if ((err as { code?: string }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw err;
      Atomics.wait(pause, 0, 0, 20);
    }
  }
}
