// The SQLite store seen from another process while entries are only in the writer's
// journal: a writer, a reader (another process's view of the same file) and a third
// connection that holds SQLite's write lock, so SQLite takes in nothing the writer records
// meanwhile. The store tests use it to hold a reader's view of the journal's tail to the
// view it has once SQLite holds everything.

import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { openSqliteStore, type SqliteStoreOptions } from "../../src/state/sqlite.js";
import type { Store } from "../../src/state/store.js";

export interface TailWorld {
  /** The writer: records go to its journal, and into SQLite when the lock allows. */
  readonly store: Store;
  /** Another process's view of the same file. */
  readonly reader: Store;
  /** A plain connection; `locker.exec("BEGIN IMMEDIATE")` holds SQLite's write lock. */
  readonly locker: Database.Database;
}

/** Runs `body` with a writer, a reader and a locker on `path`; all three are closed after,
 * the lock let go first. `safeIntegers`: the locker reads integers as bigints. */
export async function withJournalTail(
  path: string, options: SqliteStoreOptions & { readonly safeIntegers?: boolean }, body: (world: TailWorld) => Promise<void>,
): Promise<void> {
  const { safeIntegers, ...storeOptions } = options;
  const store = openSqliteStore(path, storeOptions);
  const reader = openSqliteStore(path, { mustExist: true });
  const locker = new Database(path);
  if (safeIntegers) locker.defaultSafeIntegers(true);
  try {
    await body({ store, reader, locker });
  } finally {
    if (locker.inTransaction) locker.exec("ROLLBACK");
    locker.close();
    reader.close();
    store.close();
  }
}

/** Lets SQLite take in the journal (the lock goes, the writer flushes) and asserts that
 * `seen` then gives what it gave while the entries were only journaled. */
export function assertSameOnceIngested<T>(world: TailWorld, seen: () => T, during: T): void {
  world.locker.exec("ROLLBACK");
  world.store.flush();
  assert.deepEqual(seen(), during, "the same view once SQLite holds it all");
}
