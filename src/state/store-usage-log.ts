// The usage log over an in-process Store (memory, or SQLite with its journal): the Store
// does the work synchronously, so each call answers with a promise already settled,
// except `append`, which resolves once the entry is durable (the journal's group commit).

import type { SpendTotals, UsageLog } from "./interfaces.js";
import type { LogFilter, RefundResult, SpendDimension, SpendRange, SpendRow, Store, UsageBucket, UsageEntry, UsageSubject } from "./store.js";

/** Runs a synchronous read as a settled promise. */
function now<T>(read: () => T): Promise<T> {
  try {
    return Promise.resolve(read());
  } catch (err) {
    return Promise.reject(err);
  }
}

export class StoreUsageLog implements UsageLog {
  /** The synchronous store underneath (tests read it directly). */
  readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  append(entry: UsageEntry): Promise<void> {
    return this.store.record(entry);
  }

  refund(requestId: string, at: number): Promise<RefundResult> {
    return now(() => this.store.refund(requestId, at));
  }

  logs(filter: LogFilter): Promise<UsageEntry[]> {
    return now(() => this.store.logs(filter));
  }

  spend(by: SpendDimension, range: SpendRange): Promise<SpendRow[]> {
    return now(() => this.store.spend(by, range));
  }

  spentByToken(token: string): Promise<bigint> {
    return now(() => this.store.spentByToken(token));
  }

  spentByUser(user: string): Promise<bigint> {
    return now(() => this.store.spentByUser(user));
  }

  usageBuckets(subject: UsageSubject, sinceMs: number, bucketMs: number): Promise<UsageBucket[]> {
    return now(() => this.store.usageBuckets(subject, sinceMs, bucketMs));
  }

  spendTotals(): Promise<SpendTotals> {
    return now(() => {
      const tokens = new Map<string, bigint>();
      const users = new Map<string, bigint>();
      for (const row of this.store.spend("token", {})) tokens.set(row.key, row.costNano);
      for (const row of this.store.spend("user", {})) users.set(row.key, row.costNano);
      return { tokens, users };
    });
  }

  flush(): Promise<void> {
    return now(() => this.store.flush());
  }

  close(): Promise<void> {
    return now(() => this.store.close());
  }
}
