// Live traffic and channel-key health from the usage log: requests, errors and money per
// bucket of time, and per channel key its requests, errors and latency. The SQL stores
// aggregate in the database; the memory store, and a SQLite reader for the journal's tail,
// sum here the same way, so every implementation answers alike.

import type { UsageEntry } from "./store.js";

/** A time range [sinceMs, untilMs) in epoch ms. */
export interface TrafficRange {
  readonly sinceMs: number;
  readonly untilMs: number;
}

/** One bucket of traffic: bucket = floor(time / bucketMs). */
export interface TrafficBucket {
  readonly bucket: number;
  readonly requests: number;
  /** Requests answered with a status of 400 or more, or that failed with an error code. */
  readonly errors: number;
  /** What was charged and not refunded, in nano-units. */
  readonly costNano: bigint;
}

/** One channel key's health over a range. */
export interface KeyHealthRow {
  readonly channel: string;
  /** The key's fingerprint; absent: requests the channel answered without a key. */
  readonly key?: string;
  readonly requests: number;
  readonly errors: number;
  /** Latency percentiles (nearest rank) of the key's requests among the newest
   * LATENCY_SAMPLE of the range; absent when none of them is in the sample. */
  readonly p50Ms?: number;
  readonly p95Ms?: number;
  /** How many of the key's requests the percentiles are over. */
  readonly latencySample: number;
}

/** The most entries a latency read looks at (the newest of the range): percentiles over a
 * bounded sample cost the same on a busy log as on a quiet one. */
export const LATENCY_SAMPLE = 10_000;

/** What counts as an error, in SQL (SQLite's and PostgreSQL's alike). */
export const ERROR_SQL = "(status >= 400 OR error IS NOT NULL)";

export function isError(e: Pick<UsageEntry, "status" | "error">): boolean {
  return e.status >= 400 || e.error !== undefined;
}

/** Refuses a range or bucket size that is not whole milliseconds. */
export function checkTrafficQuery(range: TrafficRange, bucketMs?: number): void {
  if (!Number.isSafeInteger(range.sinceMs) || !Number.isSafeInteger(range.untilMs)) throw new RangeError("a traffic range is whole epoch milliseconds");
  if (bucketMs !== undefined && (!Number.isSafeInteger(bucketMs) || bucketMs <= 0)) throw new RangeError(`bucketMs must be a positive integer, got ${bucketMs}`);
}

const inRange = (e: UsageEntry, r: TrafficRange) => e.time >= r.sinceMs && e.time < r.untilMs;

/** `start` (buckets already summed, e.g. by SQL) with `entries` in the range added; oldest
 * bucket first, empty buckets left out. */
export function sumTraffic(start: readonly TrafficBucket[], entries: Iterable<UsageEntry>, range: TrafficRange, bucketMs: number): TrafficBucket[] {
  const sums = new Map<number, { requests: number; errors: number; costNano: bigint }>();
  for (const b of start) sums.set(b.bucket, { requests: b.requests, errors: b.errors, costNano: b.costNano });
  for (const e of entries) {
    if (!inRange(e, range)) continue;
    const bucket = Math.floor(e.time / bucketMs);
    let sum = sums.get(bucket);
    if (!sum) sums.set(bucket, (sum = { requests: 0, errors: 0, costNano: 0n }));
    sum.requests++;
    if (isError(e)) sum.errors++;
    if (e.refundedAt === undefined) sum.costNano += e.costNano;
  }
  return [...sums].sort(([a], [b]) => a - b).map(([bucket, s]) => ({ bucket, ...s }));
}

/** Requests and errors of one channel key, as an aggregate gives them. */
export interface KeyCount {
  readonly channel: string;
  readonly key?: string;
  readonly requests: number;
  readonly errors: number;
}

/** One served request's latency, for the sample. */
export interface LatencyPoint {
  readonly channel: string;
  readonly key?: string;
  readonly durationMs: number;
}

const idOf = (channel: string, key: string | undefined) => `${channel}\u0000${key ?? ""}`;

/** `start` counts with `entries` in the range (those a channel answered) added. */
export function sumKeyCounts(start: readonly KeyCount[], entries: Iterable<UsageEntry>, range: TrafficRange): KeyCount[] {
  const rows = new Map<string, { channel: string; key?: string; requests: number; errors: number }>();
  for (const c of start) rows.set(idOf(c.channel, c.key), { ...c });
  for (const e of entries) {
    if (e.channel === undefined || !inRange(e, range)) continue;
    const id = idOf(e.channel, e.key);
    let row = rows.get(id);
    if (!row) rows.set(id, (row = { channel: e.channel, ...(e.key === undefined ? {} : { key: e.key }), requests: 0, errors: 0 }));
    row.requests++;
    if (isError(e)) row.errors++;
  }
  return [...rows.values()];
}

/** The newest LATENCY_SAMPLE served entries of the range, newest first (ties: later recorded
 * first), as latency points. `entries` in recording order. */
export function latencySampleOf(entries: readonly UsageEntry[], range: TrafficRange): LatencyPoint[] {
  const served = entries.map((e, i) => ({ e, i })).filter(({ e }) => e.channel !== undefined && inRange(e, range));
  served.sort((a, b) => b.e.time - a.e.time || b.i - a.i);
  return served.slice(0, LATENCY_SAMPLE).map(({ e }) => ({ channel: e.channel!, ...(e.key === undefined ? {} : { key: e.key }), durationMs: e.durationMs }));
}

/** The value at quantile q of sorted values (nearest rank). */
function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

/** Each key's counts with its percentiles from the sample, by channel then key (bytewise;
 * requests without a key first). */
export function keyHealthOf(counts: readonly KeyCount[], sample: readonly LatencyPoint[]): KeyHealthRow[] {
  const durations = new Map<string, number[]>();
  for (const p of sample.slice(0, LATENCY_SAMPLE)) {
    const id = idOf(p.channel, p.key);
    const list = durations.get(id);
    if (list) list.push(p.durationMs);
    else durations.set(id, [p.durationMs]);
  }
  const rows = counts.map((c): KeyHealthRow => {
    const d = (durations.get(idOf(c.channel, c.key)) ?? []).sort((a, b) => a - b);
    const base = { channel: c.channel, ...(c.key === undefined ? {} : { key: c.key }), requests: c.requests, errors: c.errors, latencySample: d.length };
    return d.length === 0 ? base : { ...base, p50Ms: nearestRank(d, 0.5), p95Ms: nearestRank(d, 0.95) };
  });
  return rows.sort((a, b) => byBytes(a.channel, b.channel) || byBytes(a.key ?? "", b.key ?? "") || (a.key === undefined ? -1 : 1));
}

function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
