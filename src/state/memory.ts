// An in-process Store with the same semantics as the SQLite one and no durability: the
// usage log of `store: memory:` and of tests that should not touch the disk.

import { emptyUsage, type Usage } from "../protocols/usage.js";
import { addSpendMoney, addUsage, logLimit, normalizeEntry, type SpendMoney } from "./entry.js";
import { mergeSpendRows, RollupMap, splitForRollups } from "./rollups.js";
import { newestDayFirst, ofSubject, spendKeyer } from "./spend-keys.js";
import type { LogFilter, RefundResult, SpendDimension, SpendRange, SpendRow, Store, UsageBucket, UsageEntry, UsageSubject } from "./store.js";
import { checkTrafficQuery, keyHealthOf, latencySampleOf, sumKeyCounts, sumTraffic, type KeyHealthRow, type TrafficBucket, type TrafficRange } from "./traffic.js";
import { checkBucketQuery, sumBuckets } from "./usage-buckets.js";

function matches(e: UsageEntry, f: LogFilter): boolean {
  return (
    (f.requestId === undefined || e.requestId === f.requestId) &&
    (f.token === undefined || e.token === f.token) &&
    (f.user === undefined || e.user === f.user) &&
    (f.model === undefined || e.model === f.model) &&
    (f.channel === undefined || e.channel === f.channel) &&
    (f.key === undefined || e.key === f.key) &&
    (f.status === undefined || e.status === f.status) &&
    (f.statusClass === undefined || Math.floor(e.status / 100) === f.statusClass) &&
    (f.since === undefined || e.time >= f.since) &&
    (f.until === undefined || e.time < f.until)
  );
}

/** SQLite's BINARY collation: compares UTF-8 bytes, not UTF-16 code units. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

const done = Promise.resolve();

class MemoryStore implements Store {
  /** Entries in insertion order; index breaks ties of equal time, like SQLite's rowid. */
  readonly #entries: UsageEntry[] = [];
  readonly #ids = new Set<string>();
  readonly #spent = { token: new Map<string, bigint>(), user: new Map<string, bigint>() };
  /** Daily rollups: kept when retention removes entries. */
  readonly rollups = new RollupMap();

  spentByToken(token: string): bigint {
    return this.#spent.token.get(token) ?? 0n;
  }

  spentByUser(user: string): bigint {
    return this.#spent.user.get(user) ?? 0n;
  }

  record(entry: UsageEntry): Promise<void> {
    try {
      this.#append(entry);
    } catch (err) {
      return Promise.reject(err);
    }
    return done; // memory is all there is: durable at once
  }

  #append(entry: UsageEntry): void {
    const e = normalizeEntry({ ...entry, refundedAt: undefined }); // only refund() sets it
    if (this.#ids.has(e.requestId)) return;
    this.#ids.add(e.requestId);
    this.#entries.push(e);
    this.rollups.add(e);
    this.#spent.token.set(e.token, this.spentByToken(e.token) + e.costNano);
    this.#spent.user.set(e.user, this.spentByUser(e.user) + e.costNano);
  }

  /** Nothing to make durable: memory is all there is. */
  flush(): void {}

  refund(requestId: string, at: number): RefundResult {
    const i = this.#entries.findIndex((e) => e.requestId === requestId); // rare: a scan will do
    if (i === -1) return { kind: "not-recorded" };
    const e = this.#entries[i];
    if (e.refundedAt !== undefined) return { kind: "already-refunded" };
    this.#entries[i] = normalizeEntry({ ...e, refundedAt: at });
    this.rollups.refund(e);
    this.#spent.token.set(e.token, this.spentByToken(e.token) - e.costNano);
    this.#spent.user.set(e.user, this.spentByUser(e.user) - e.costNano);
    return { kind: "refunded", token: e.token, user: e.user, costNano: e.costNano };
  }

  logs(filter: LogFilter): UsageEntry[] {
    const found: UsageEntry[] = [];
    const limit = logLimit(filter.limit);
    const newestFirst = this.#entries.map((e, index) => ({ e, index })).sort((a, b) => b.e.time - a.e.time || b.index - a.index);
    for (const { e } of newestFirst) {
      if (found.length >= limit) break;
      if (matches(e, filter)) found.push(e);
    }
    return found;
  }

  /** Whole UTC days from the rollups, the range's partial days from the entries (rollups.ts). */
  spend(by: SpendDimension, range: SpendRange): SpendRow[] {
    const split = splitForRollups(by, range);
    if (!split) return this.#spendOfEntries(by, range);
    const parts = [this.rollups.spend(by, split.firstDay, split.endDay, range.subject), ...split.edges.map((edge) => this.#spendOfEntries(by, edge))];
    return mergeSpendRows(by, parts);
  }

  #spendOfEntries(by: SpendDimension, range: SpendRange): SpendRow[] {
    const keyOf = spendKeyer(by, range);
    const groups = new Map<string, SpendMoney & { requests: number; usage: Usage }>();
    for (const e of this.#entries) {
      if (!matches(e, range) || !ofSubject(e, range.subject)) continue;
      const key = keyOf(e);
      const row = groups.get(key) ?? { requests: 0, usage: emptyUsage(), costNano: 0n, channelCostNano: 0n, channelCostUnknown: 0 };
      row.requests += 1;
      addUsage(row.usage, e.usage);
      addSpendMoney(row, e);
      groups.set(key, row);
    }
    const rows = [...groups].map(([key, row]) => ({ key, ...row }));
    if (by === "day") return newestDayFirst(rows);
    return rows.sort((a, b) => (a.costNano === b.costNano ? byBytes(a.key, b.key) : a.costNano > b.costNano ? -1 : 1));
  }

  usageBuckets(subject: UsageSubject, sinceMs: number, bucketMs: number): UsageBucket[] {
    checkBucketQuery(subject, sinceMs, bucketMs);
    return sumBuckets([], this.#entries, subject, sinceMs, bucketMs);
  }

  traffic(range: TrafficRange, bucketMs: number): TrafficBucket[] {
    checkTrafficQuery(range, bucketMs);
    return sumTraffic([], this.#entries, range, bucketMs);
  }

  keyHealth(range: TrafficRange): KeyHealthRow[] {
    checkTrafficQuery(range);
    return keyHealthOf(sumKeyCounts([], this.#entries, range), latencySampleOf(this.#entries, range));
  }

  oldestBefore(beforeMs: number, limit: number): UsageEntry[] {
    return this.#entries.filter((e) => e.time < beforeMs).sort((a, b) => a.time - b.time).slice(0, Math.max(0, limit));
  }

  removeBefore(beforeMs: number, limit: number, ids?: readonly string[]): number {
    const wanted = ids && new Set(ids);
    const old = this.oldestBefore(beforeMs, wanted ? Number.MAX_SAFE_INTEGER : limit);
    const chosen = new Set(old.filter((e) => !wanted || wanted.has(e.requestId)).slice(0, limit).map((e) => e.requestId));
    if (chosen.size === 0) return 0;
    let kept = 0;
    for (const e of this.#entries) if (!chosen.has(e.requestId)) this.#entries[kept++] = e;
    this.#entries.length = kept;
    for (const id of chosen) this.#ids.delete(id);
    return chosen.size;
  }

  close(): void {}
}

/** A fresh, empty in-memory Store; its contents vanish with the object. */
export function createMemoryStore(): Store {
  return new MemoryStore();
}
