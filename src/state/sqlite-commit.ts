// One group commit: a batch of usage entries and the spend they add, in one transaction.
// Shared by the writer thread and the in-thread writer (an in-memory database).

import type Database from "better-sqlite3";
import type { SqliteQueries } from "./sqlite-queries.js";
import type { UsageEntry } from "./store.js";

/**
 * Returns a function that commits a batch and answers the errors of entries that could
 * not be written. One bad entry must not take the batch with it: when the batch fails,
 * its entries are committed one by one.
 */
export function batchCommitter(db: Database.Database, q: SqliteQueries): (entries: readonly UsageEntry[]) => unknown[] {
  const commit = db.transaction((entries: readonly UsageEntry[]) => {
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
  return (entries) => {
    try {
      // IMMEDIATE takes the write lock up front (waiting up to busy_timeout), so the
      // transaction never has to upgrade a read snapshot another writer made stale.
      commit.immediate(entries);
      return [];
    } catch {
      const failed: unknown[] = [];
      for (const entry of entries) {
        try {
          commit.immediate([entry]);
        } catch (error) {
          failed.push(error);
        }
      }
      return failed;
    }
  };
}
