// Daily rollups of the usage log: per UTC day, user, token, model, channel and group, the
// requests, tokens and money of the entries, kept up to date as entries are written and
// refunded (in the same transaction), and kept when retention removes the entries. A spend
// report reads whole UTC days from the rollups and only the partial days at its range's
// edges from the entries, so it costs the same on a huge log, and gives the same rows.
//
// Why daily UTC rollups and not hourly: a report by user, token, model, channel or group
// over any range is exact from UTC days plus entry edges. Only `by: "day"` in a zone other
// than UTC cannot be: a UTC day straddles two local days (and hours would not fit zones a
// half or quarter hour off UTC either), so that report, and `by: "key"` (rollups hold no
// key), read the entries as before.

import { emptyUsage, type Usage } from "../protocols/usage.js";
import { addSpendMoney, addUsage, type SpendMoney } from "./entry.js";
import { isUtc, newestDayFirst, ofSubject } from "./spend-keys.js";
import { NO_CHANNEL, type SpendDimension, type SpendRange, type SpendRow, type UsageEntry, type UsageSubject } from "./store.js";

export const DAY_MS = 86_400_000;

/** The UTC day of an epoch ms: days since 1970-01-01. */
export function epochDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** YYYY-MM-DD of a UTC epoch day. */
export function dayText(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** The rollup's grouping columns of an entry (channel NO_CHANNEL when none answered). */
export interface RollupKey {
  readonly day: number;
  readonly user: string;
  readonly token: string;
  readonly model: string;
  readonly channel: string;
  readonly group: string;
}

/** One rollup row: what the entries of one key add up to. */
export interface Rollup extends RollupKey, SpendMoney {
  requests: number;
  usage: Usage;
}

export function rollupKeyOf(e: UsageEntry): RollupKey {
  return { day: epochDay(e.time), user: e.user, token: e.token, model: e.model, channel: e.channel ?? NO_CHANNEL, group: e.group };
}

/** The rollup's column each dimension it answers groups by. */
export function rollupDimension(by: SpendDimension): keyof RollupKey | undefined {
  return by === "key" ? undefined : by;
}

/** A range split for the rollups: whole UTC days [firstDay, endDay) from the rollups, the
 * `edges` (at most two partial days) from the entries. */
export interface SpendSplit {
  readonly firstDay: number;
  readonly endDay: number;
  readonly edges: readonly SpendRange[];
}

/** How to answer spend(by, range) from the rollups; undefined when it must read the
 * entries alone: by key (rollups hold no key), by day in a zone other than UTC (see the
 * top), or a range holding no whole UTC day. */
export function splitForRollups(by: SpendDimension, range: SpendRange): SpendSplit | undefined {
  if (by === "key" || (by === "day" && !isUtc(range.timeZone))) return undefined;
  const since = range.since ?? Number.MIN_SAFE_INTEGER;
  const until = range.until ?? Number.MAX_SAFE_INTEGER;
  if (Number.isNaN(since) || Number.isNaN(until)) return undefined;
  // Day d is whole in the range when d·DAY ≥ since and (d + 1)·DAY ≤ until.
  const firstDay = Math.ceil(since / DAY_MS);
  const endDay = Math.floor(until / DAY_MS);
  if (firstDay >= endDay) return undefined;
  const edges: SpendRange[] = [];
  if (since < firstDay * DAY_MS) edges.push({ ...range, since, until: firstDay * DAY_MS });
  if (endDay * DAY_MS < until) edges.push({ ...range, since: endDay * DAY_MS, until });
  return { firstDay, endDay, edges };
}

/** SQLite's BINARY collation and PostgreSQL's "C": compares UTF-8 bytes. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** Spend rows ordered as every store orders them: days newest first, the others highest
 * cost first, then by key bytewise. */
export function orderSpendRows(by: SpendDimension, rows: SpendRow[]): SpendRow[] {
  if (by === "day") return newestDayFirst(rows);
  return rows.sort((a, b) => (a.costNano === b.costNano ? byBytes(a.key, b.key) : a.costNano > b.costNano ? -1 : 1));
}

/** Rows of several parts of one range (rollups, edges) summed per key, in order. */
export function mergeSpendRows(by: SpendDimension, parts: readonly (readonly SpendRow[])[]): SpendRow[] {
  const rows = new Map<string, SpendRow & SpendMoney & { requests: number; usage: Usage }>();
  for (const part of parts) {
    for (const r of part) {
      const seen = rows.get(r.key);
      if (!seen) {
        rows.set(r.key, { ...r, usage: { ...r.usage } });
        continue;
      }
      seen.requests += r.requests;
      addUsage(seen.usage, r.usage);
      seen.costNano += r.costNano;
      seen.channelCostNano += r.channelCostNano;
      seen.channelCostUnknown += r.channelCostUnknown;
    }
  }
  return orderSpendRows(by, [...rows.values()]);
}

/** Rollups in memory (the memory store's): a map by key. */
export class RollupMap {
  readonly #rows = new Map<string, Rollup>();

  static #id(k: RollupKey): string {
    return JSON.stringify([k.day, k.user, k.token, k.model, k.channel, k.group]);
  }

  /** Counts a new entry (refunded or not, as it is). */
  add(e: UsageEntry): void {
    const key = rollupKeyOf(e);
    const id = RollupMap.#id(key);
    let row = this.#rows.get(id);
    if (!row) this.#rows.set(id, (row = { ...key, requests: 0, usage: emptyUsage(), costNano: 0n, channelCostNano: 0n, channelCostUnknown: 0 }));
    row.requests++;
    addUsage(row.usage, e.usage);
    addSpendMoney(row, e);
  }

  /** Takes a refunded entry's money off its rollup (requests and tokens stay: spend rows
   * count them for refunded entries too). `e` is the entry before its refund. */
  refund(e: UsageEntry): void {
    const row = this.#rows.get(RollupMap.#id(rollupKeyOf(e)));
    if (row) subtractMoney(row, e);
  }

  /** Spend rows by `by` over UTC days [firstDay, endDay), of `subject` alone when given. */
  spend(by: SpendDimension, firstDay: number, endDay: number, subject?: UsageSubject): SpendRow[] {
    const column = rollupDimension(by);
    if (!column) throw new RangeError(`rollups hold no ${by}`);
    const rows = new Map<string, SpendRow & SpendMoney & { requests: number; usage: Usage }>();
    for (const r of this.#rows.values()) {
      if (r.day < firstDay || r.day >= endDay || !ofSubject(r, subject)) continue;
      const key = column === "day" ? dayText(r.day) : String(r[column]);
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { key, requests: 0, usage: emptyUsage(), costNano: 0n, channelCostNano: 0n, channelCostUnknown: 0 }));
      row.requests += r.requests;
      addUsage(row.usage, r.usage);
      row.costNano += r.costNano;
      row.channelCostNano += r.channelCostNano;
      row.channelCostUnknown += r.channelCostUnknown;
    }
    return [...rows.values()];
  }

  /** Every rollup row (tests compare them with the entries). */
  rows(): Rollup[] {
    return [...this.#rows.values()];
  }
}

/** Takes a refunded entry's money off a spend row, as SPEND_MONEY_SQL leaves it out. */
export function subtractMoney(row: SpendMoney, e: UsageEntry): void {
  row.costNano -= e.costNano;
  if (e.channelCostNano !== undefined) row.channelCostNano -= e.channelCostNano;
  else if (e.costNano !== 0n) row.channelCostUnknown--;
}
