// The usage log over an in-process Store (memory, or SQLite with its journal): the Store
// does the work synchronously, so each call answers with a promise already settled,
// except `append`, which resolves once the entry is durable (the journal's group commit).

import type { SpendTotals, UsageLog } from "./interfaces.js";
import type { KeyHealthRow, TrafficBucket, TrafficRange } from "./traffic.js";
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

  traffic(range: TrafficRange, bucketMs: number): Promise<TrafficBucket[]> {
    return now(() => this.store.traffic(range, bucketMs));
  }

  keyHealth(range: TrafficRange): Promise<KeyHealthRow[]> {
    return now(() => this.store.keyHealth(range));
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

  /** With an archive: the batch is read, archived, then removed by request id. A store
   * another connection is writing throws a locked error at once (the sweep tries later). */
  async removeBefore(beforeMs: number, limit: number, archive?: (entries: readonly UsageEntry[]) => Promise<void>): Promise<number> {
    const store = this.store;
    if (!store.removeBefore || !store.oldestBefore) throw new Error("this usage log cannot remove entries");
    if (!archive) return store.removeBefore(beforeMs, limit);
    // A batch archived whose removal found the store locked is removed first, not archived twice.
    if (this.#archived?.beforeMs === beforeMs) {
      const ids = this.#archived.ids;
      const removed = store.removeBefore(beforeMs, ids.length, ids);
      this.#archived = undefined;
      return removed;
    }
    const entries = store.oldestBefore(beforeMs, limit);
    if (entries.length === 0) return 0;
    await archive(entries);
    const ids = entries.map((e) => e.requestId);
    this.#archived = { beforeMs, ids };
    const removed = store.removeBefore(beforeMs, limit, ids);
    this.#archived = undefined;
    return removed;
  }

  /** The batch archived last, until it is removed. */
  #archived: { readonly beforeMs: number; readonly ids: readonly string[] } | undefined;

  async sweepAlone(sweep: () => Promise<void>): Promise<boolean> {
    const release = this.store.lockSweep ? this.store.lockSweep() : () => {};
    if (!release) return false;
    try {
      await sweep();
      return true;
    } finally {
      release();
    }
  }

  flush(): Promise<void> {
    return now(() => this.store.flush());
  }

  close(): Promise<void> {
    return now(() => this.store.close());
  }
}
