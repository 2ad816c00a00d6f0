// What one token or user used per bucket of time since a moment: what a budget that resets
// (per day, per rolling window) is seeded from when its counter is new. The SQL stores sum
// in the database (bucketSql); the memory store, and a SQLite reader for the journal's tail,
// sum here, the same way.

import type { Usage } from "../protocols/usage.js";
import type { UsageBucket, UsageEntry, UsageSubject } from "./store.js";

/** Refuses a subject of another kind (its kind names a column), a bucket size that is not a
 * positive whole number of ms, and a start that is not a number. */
export function checkBucketQuery(subject: UsageSubject, sinceMs: number, bucketMs: number): void {
  if (subject.kind !== "token" && subject.kind !== "user") throw new RangeError(`a usage subject is a token or a user, not ${String(subject.kind)}`);
  if (!Number.isSafeInteger(bucketMs) || bucketMs <= 0) throw new RangeError(`bucketMs must be a positive integer, got ${bucketMs}`);
  if (Number.isNaN(sinceMs)) throw new RangeError("sinceMs must be a number");
}

/** The first whole millisecond at or after `sinceMs`: entry times are whole, so `time >=
 * sinceMs` is `time >= firstMs(sinceMs)`, which an int8 column can be compared with. */
export function firstMs(sinceMs: number): number {
  return Number.isFinite(sinceMs) ? Math.ceil(sinceMs) : sinceMs > 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
}

/** The tokens a budget counts: the same total as pipeline/admission-limits.ts totalTokens. */
export function usedTokens(usage: Usage): number {
  return usage.input + usage.cacheRead + usage.cacheWrite + usage.output;
}

/** floor(time / bucketMs) in integer arithmetic, for SQL (`b` is the bucket size's
 * parameter): time less its floored remainder is a multiple of b, so the division is exact
 * and rounds down for a negative time too. */
export function bucketSql(b: string): string {
  return `(time - ((time % ${b}) + ${b}) % ${b}) / ${b}`;
}

/**
 * `start` (buckets already summed, e.g. by SQL) with the entries of `subject` from `sinceMs`
 * on added, refunded ones left out; oldest bucket first, buckets where nothing was used
 * left out.
 */
export function sumBuckets(
  start: readonly UsageBucket[], entries: Iterable<UsageEntry>, subject: UsageSubject, sinceMs: number, bucketMs: number,
): UsageBucket[] {
  const sums = new Map<number, { costNano: bigint; tokens: number }>();
  for (const b of start) sums.set(b.bucket, { costNano: b.costNano, tokens: b.tokens });
  for (const e of entries) {
    if ((subject.kind === "token" ? e.token : e.user) !== subject.name) continue;
    if (e.time < sinceMs || e.refundedAt !== undefined) continue;
    const bucket = Math.floor(e.time / bucketMs); // exact: both are integers below 2^53
    const sum = sums.get(bucket);
    if (sum) (sum.costNano += e.costNano), (sum.tokens += usedTokens(e.usage));
    else sums.set(bucket, { costNano: e.costNano, tokens: usedTokens(e.usage) });
  }
  return [...sums]
    .filter(([, s]) => s.costNano !== 0n || s.tokens !== 0)
    .sort(([a], [b]) => a - b)
    .map(([bucket, s]) => ({ bucket, costNano: s.costNano, tokens: s.tokens }));
}
