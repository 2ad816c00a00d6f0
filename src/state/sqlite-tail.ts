// What a reader in another process (the CLI) sees of the usage log: SQLite, plus the
// journal's entries the server has made durable but not yet brought into SQLite. Without
// the tail, a reader lags the hot path by however far ingest is behind; with it, a reader
// sees every acknowledged charge, exactly once, however far behind ingest is.
//
// Why it is exact: the segments are opened before the read transaction's snapshot is taken.
// A segment is deleted only after the transaction holding its last entries committed, so
// one that is already gone is wholly in the snapshot; one that is open here is read whole
// (an open file stays readable after it is deleted) and each of its entries is either in
// the snapshot (skipped) or not (taken), judged by request id in that same snapshot.

import { closeSync, openSync, readSync } from "node:fs";
import { rowsOfLines, segmentNumbers, segmentPath } from "./sqlite-journal.js";
import { entryOfJournalRow, ROW_WIDTH, type SqliteQueries } from "./sqlite-queries.js";
import { addSpendMoney, type SpendMoney } from "./entry.js";
import { newestDayFirst, ofSubject, spendKeyer } from "./spend-keys.js";
import type { LogFilter, SpendDimension, SpendRange, SpendRow, UsageBucket, UsageEntry, UsageSubject } from "./store.js";
import { sumBuckets } from "./usage-buckets.js";

/** Journal segments held open for one read. */
export class OpenSegments {
  readonly #fds: number[] = [];

  /** Opens every segment of the store at `dbPath` (call before the snapshot is taken). */
  constructor(dbPath: string) {
    for (const n of segmentNumbers(dbPath)) {
      try {
        this.#fds.push(openSync(segmentPath(dbPath, n), "r"));
      } catch (err) {
        // Deleted since it was listed: SQLite held it whole before this read began.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
  }

  /**
   * The entries of the segments that `q`'s snapshot does not hold, oldest first; an id
   * seen twice counts once, as SQLite records it (the first). Call inside the read
   * transaction. A line still being written (no newline yet) is not a charge yet.
   */
  entriesNotIn(q: SqliteQueries): UsageEntry[] {
    const entries: UsageEntry[] = [];
    const seen = new Set<string>();
    for (const fd of this.#fds) {
      const text = readComplete(fd);
      // Most lines are in SQLite already: look each up by its id, and parse only the rest.
      for (let start = 0, end = text.indexOf("\n"); end !== -1; start = end + 1, end = text.indexOf("\n", start)) {
        const line = text.slice(start, end);
        const id = idOfLine(line);
        if (id === undefined || seen.has(id)) continue;
        seen.add(id);
        if (q.has(id)) continue;
        const row = rowsOfLines(line, () => {});
        if (row.length === ROW_WIDTH) entries.push(entryOfJournalRow(row));
      }
    }
    return entries;
  }

  close(): void {
    for (const fd of this.#fds.splice(0)) closeSync(fd);
  }
}

/** The request id a journal line starts with (`["<id>",…`), read without parsing the line;
 * undefined for a line that is not one. */
function idOfLine(line: string): string | undefined {
  if (!line.startsWith('["')) return undefined;
  const close = line.indexOf('"', 2);
  if (close === -1) return undefined;
  const id = line.slice(2, close);
  if (!id.includes("\\")) return id;
  // An escaped character: the whole line says what the id is.
  try {
    const row: unknown = JSON.parse(line);
    return Array.isArray(row) && typeof row[0] === "string" ? row[0] : undefined;
  } catch {
    return undefined;
  }
}

/** A file's text up to its last newline. */
function readComplete(fd: number): string {
  const chunks: Buffer[] = [];
  const chunk = 1 << 20;
  for (;;) {
    const buffer = Buffer.allocUnsafe(chunk);
    const n = readSync(fd, buffer, 0, chunk, null);
    if (n === 0) break;
    chunks.push(n === chunk ? buffer : buffer.subarray(0, n));
  }
  const all = Buffer.concat(chunks);
  const end = all.lastIndexOf(0x0a);
  return end === -1 ? "" : all.toString("utf8", 0, end + 1);
}

/** Does `e` pass `filter` (the same conditions the SQL applies, limit aside)? */
export function matches(e: UsageEntry, filter: LogFilter): boolean {
  return (filter.requestId === undefined || e.requestId === filter.requestId)
    && (filter.token === undefined || e.token === filter.token)
    && (filter.user === undefined || e.user === filter.user)
    && (filter.model === undefined || e.model === filter.model)
    && (filter.channel === undefined || e.channel === filter.channel)
    && (filter.key === undefined || e.key === filter.key)
    && (filter.status === undefined || e.status === filter.status)
    && (filter.statusClass === undefined || Math.floor(e.status / 100) === filter.statusClass)
    && (filter.since === undefined || e.time >= filter.since)
    && (filter.until === undefined || e.time < filter.until);
}

/** `fromSql` (newest first, at most `limit`) with the tail's matching entries, newest first;
 * at equal times the tail goes first, as it was recorded after every row SQLite holds. */
export function mergeLogs(fromSql: readonly UsageEntry[], tail: readonly UsageEntry[], filter: LogFilter, limit: number): UsageEntry[] {
  const extra = tail.filter((e) => matches(e, filter)).reverse();
  if (extra.length === 0) return [...fromSql];
  extra.sort((a, b) => b.time - a.time); // stable: later-recorded first within a time
  const out: UsageEntry[] = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < fromSql.length || j < extra.length)) {
    if (j < extra.length && (i >= fromSql.length || extra[j].time >= fromSql[i].time)) out.push(extra[j++]);
    else out.push(fromSql[i++]);
  }
  return out;
}

/** A spend row while the tail's entries are added to it. */
interface MutableSpendRow extends SpendMoney {
  readonly key: string;
  requests: number;
  readonly usage: { input: number; cacheRead: number; cacheWrite: number; output: number; reasoning: number };
}

/** `fromSql` with the tail's entries in [since, until) added, ordered as the SQL orders. */
export function mergeSpend(fromSql: readonly SpendRow[], tail: readonly UsageEntry[], by: SpendDimension, range: SpendRange): SpendRow[] {
  const inRange = tail.filter((e) => matches(e, { since: range.since, until: range.until }) && ofSubject(e, range.subject));
  if (inRange.length === 0) return [...fromSql];
  const keyOf = spendKeyer(by, range);
  const rows = new Map<string, MutableSpendRow>();
  for (const r of fromSql) rows.set(r.key, { ...r, usage: { ...r.usage } });
  for (const e of inRange) {
    const key = keyOf(e);
    let row = rows.get(key);
    if (!row) {
      const usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
      rows.set(key, (row = { key, requests: 0, usage, costNano: 0n, channelCostNano: 0n, channelCostUnknown: 0 }));
    }
    row.requests++;
    row.usage.input += e.usage.input;
    row.usage.cacheRead += e.usage.cacheRead;
    row.usage.cacheWrite += e.usage.cacheWrite;
    row.usage.output += e.usage.output;
    row.usage.reasoning += e.usage.reasoning;
    addSpendMoney(row, e); // a journal entry is never refunded: refunds read SQLite
  }
  if (by === "day") return newestDayFirst([...rows.values()]);
  return [...rows.values()].sort((a, b) => (a.costNano === b.costNano ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.costNano > b.costNano ? -1 : 1));
}

/** What the tail adds to a token's or a user's spend. */
export function tailSpend(tail: readonly UsageEntry[], kind: "token" | "user", name: string): bigint {
  let nano = 0n;
  for (const e of tail) if ((kind === "token" ? e.token : e.user) === name) nano += e.costNano;
  return nano;
}

/** `fromSql`'s buckets with what the tail adds to them for `subject` from `sinceMs` on,
 * oldest first (a journal entry is never refunded: refunds read SQLite). */
export function mergeBuckets(
  fromSql: readonly UsageBucket[], tail: readonly UsageEntry[], subject: UsageSubject, sinceMs: number, bucketMs: number,
): UsageBucket[] {
  if (tail.length === 0) return [...fromSql];
  return sumBuckets(fromSql, tail, subject, sinceMs, bucketMs);
}
