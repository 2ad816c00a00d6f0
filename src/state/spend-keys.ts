// The keys of the spend dimensions that are not a plain column: "key" (the channel and the
// fingerprint of the key that served) and "day" (the calendar day an entry arrived, in a
// time zone). SQL stores group days by time buckets and collapse them here; the in-process
// paths key each entry directly; both give the same rows in the same order.

import { addUsage } from "./entry.js";
import { NO_CHANNEL, type SpendDimension, type SpendRange, type SpendRow, type UsageEntry, type UsageSubject } from "./store.js";

/** The "key" dimension's key of an entry: "channel/fingerprint", NO_CHANNEL when no key served. */
export function servedKeyOf(e: UsageEntry): string {
  return e.key === undefined ? NO_CHANNEL : `${e.channel ?? ""}/${e.key}`;
}

/** The same key in SQL (SQLite's and PostgreSQL's alike). */
export const SERVED_KEY_SQL = `CASE WHEN usage_log.key IS NULL THEN '${NO_CHANNEL}' ELSE COALESCE(channel, '') || '/' || usage_log.key END`;

const DAY_MS = 86_400_000;
/** Every time zone's offset from UTC is a whole number of quarter hours. */
const QUARTER_HOUR_MS = 900_000;

/** The width of the buckets a SQL store groups days by: whole UTC days, or quarter hours
 * (each lies within one local day of any zone) for another zone. */
export function dayBucketMs(timeZone: string | undefined): number {
  return isUtc(timeZone) ? DAY_MS : QUARTER_HOUR_MS;
}

/** Whether days in the zone are UTC days. */
export function isUtc(timeZone: string | undefined): boolean {
  return timeZone === undefined || timeZone === "UTC" || timeZone === "Etc/UTC";
}

/** A function naming the day (YYYY-MM-DD) of an epoch ms in the zone (default UTC). Throws a
 * RangeError for a zone Intl does not know. */
export function dayNamer(timeZone: string | undefined): (ms: number) => string {
  if (isUtc(timeZone)) return (ms) => new Date(ms).toISOString().slice(0, 10);
  // en-CA writes dates as YYYY-MM-DD.
  const format = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
  return (ms) => format.format(ms);
}

/** An entry's key in a dimension, as the SQL groups it (days in `range.timeZone`). */
export function spendKeyer(by: SpendDimension, range: SpendRange): (e: UsageEntry) => string {
  switch (by) {
    case "channel": return (e) => e.channel ?? NO_CHANNEL;
    case "key": return servedKeyOf;
    case "day": {
      const dayOf = dayNamer(range.timeZone);
      return (e) => dayOf(e.time);
    }
    default: return (e) => e[by];
  }
}

/** Rows keyed by bucket number (time / bucketMs) collapsed into days in the zone. */
export function daysOfBuckets(rows: readonly SpendRow[], range: SpendRange): SpendRow[] {
  const bucketMs = dayBucketMs(range.timeZone);
  const dayOf = dayNamer(range.timeZone);
  const days = new Map<string, SpendRow>();
  for (const r of rows) {
    const key = dayOf(Number(r.key) * bucketMs);
    const seen = days.get(key);
    if (!seen) {
      days.set(key, { ...r, key, usage: { ...r.usage } });
      continue;
    }
    const usage = { ...seen.usage };
    addUsage(usage, r.usage);
    days.set(key, {
      key, requests: seen.requests + r.requests, usage, costNano: seen.costNano + r.costNano,
      channelCostNano: seen.channelCostNano + r.channelCostNano, channelCostUnknown: seen.channelCostUnknown + r.channelCostUnknown,
    });
  }
  return newestDayFirst([...days.values()]);
}

/** Day rows, newest first (YYYY-MM-DD sorts as text). */
export function newestDayFirst<T extends { readonly key: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
}

/** Whether an entry (or a rollup row: it has both columns) belongs to a spend range's
 * subject; every entry does when there is none. */
export function ofSubject(e: { readonly token: string; readonly user: string }, subject: UsageSubject | undefined): boolean {
  return subject === undefined || (subject.kind === "token" ? e.token : e.user) === subject.name;
}
