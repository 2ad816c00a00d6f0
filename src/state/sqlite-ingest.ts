// Brings SQLite up to date with the journal: reads a range of a journal segment, commits
// its entries in one transaction (request ids already there are skipped, so reading a range
// twice charges nothing twice), and deletes a closed segment once it is read whole. Runs on
// the writer thread, and in the main thread before that has started and at startup.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type Database from "better-sqlite3";
import { log } from "../observability/log.js";
import { batchCommitter, isLocked, type FailedRow } from "./sqlite-commit.js";
import { deleteSegment, rowsOfLines, segmentNumbers, segmentPath } from "./sqlite-journal.js";
import { ROW_WIDTH, SqliteQueries } from "./sqlite-queries.js";

/** Bytes [from, to) of segment `segment`; `final`: the segment ends there. */
export interface IngestRange {
  readonly segment: number;
  readonly from: number;
  readonly to: number;
  readonly final: boolean;
}

/** Rows per transaction when a range holds many (a long replay). */
const ROWS_PER_COMMIT = 4096;

/** How long to wait before trying a commit again when another connection holds the lock. */
const LOCKED_RETRY_MS = 50;

/** Blocks this thread for `ms` (the writer thread, which has nothing else to do). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export class Ingester {
  readonly #dbPath: string;
  readonly #db: Database.Database;
  readonly #commit: (rows: readonly unknown[]) => FailedRow[];
  /** The segment read last, kept open between ranges. */
  #open: { segment: number; fd: number } | undefined;

  constructor(dbPath: string, db: Database.Database) {
    this.#dbPath = dbPath;
    this.#db = db;
    this.#commit = batchCommitter(db, new SqliteQueries(db));
  }

  /** Commits the entries of `range`; returns those that could not be written (logged).
   * A database locked by another connection is waited out, unless `waitOutLocks` is false
   * (the event loop's thread): then the lock error is thrown and nothing of the range is
   * lost (the segment stays; committing the range again charges nothing twice). */
  ingest(range: IngestRange, waitOutLocks = true): FailedRow[] {
    if (waitOutLocks) return this.#ingest(range, true);
    // Not even for busy_timeout: fail at once, and let the caller try again later.
    const busyTimeout = String(this.#db.pragma("busy_timeout", { simple: true }));
    this.#db.pragma("busy_timeout = 0");
    try {
      return this.#ingest(range, false);
    } finally {
      this.#db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }

  #ingest(range: IngestRange, waitOutLocks: boolean): FailedRow[] {
    const failed: FailedRow[] = [];
    if (range.to > range.from) {
      let text: string;
      try {
        text = this.#read(range);
      } catch (err) {
        // The range stays in the journal (not deleted below): the next start commits it.
        log.error("journal segment could not be read; it is kept for the next start", { segment: range.segment, error: String(err) });
        return [{ requestId: "*", error: String(err) }];
      }
      const rows = rowsOfLines(text, () => log.warn("journal: skipped a torn line", { segment: range.segment }));
      for (let at = 0; at < rows.length; at += ROWS_PER_COMMIT * ROW_WIDTH) {
        const chunk = rows.slice(at, at + ROWS_PER_COMMIT * ROW_WIDTH);
        failed.push(...(waitOutLocks ? this.#commitWhenUnlocked(chunk, range.segment) : this.#commit(chunk)));
      }
    }
    if (range.final) this.#finish(range.segment);
    if (failed.length > 0) log.error("usage entries could not be recorded", { failed });
    return failed;
  }

  /** Commits `rows`, waiting out a lock another connection holds (an operator's shell, a
   * backup) however long it lasts: the range must not be skipped, or its segment would be
   * deleted without SQLite holding it. Meanwhile the journal grows until backpressure
   * (JOURNAL_BACKLOG_BYTES) makes answers wait, and readers see the entries in the journal. */
  #commitWhenUnlocked(rows: readonly unknown[], segment: number): FailedRow[] {
    for (let warned = false; ; warned = true) {
      try {
        return this.#commit(rows);
      } catch (error) {
        if (!isLocked(error)) throw error;
        if (!warned) log.warn("usage log: the SQLite file is locked by another connection; ingest waits for it", { segment, error: String(error) });
        pause(LOCKED_RETRY_MS);
      }
    }
  }

  #read(range: IngestRange): string {
    if (this.#open?.segment !== range.segment) {
      this.#closeOpen();
      this.#open = { segment: range.segment, fd: openSync(segmentPath(this.#dbPath, range.segment), "r") };
    }
    const length = range.to - range.from;
    const buffer = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const n = readSync(this.#open.fd, buffer, read, length - read, range.from + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.toString("utf8", 0, read);
  }

  /** A closed segment read whole: SQLite holds all of it, so it goes. */
  #finish(segment: number): void {
    if (this.#open?.segment === segment) this.#closeOpen();
    try {
      deleteSegment(this.#dbPath, segment);
    } catch (err) {
      log.warn("could not delete a settled journal segment", { segment, error: String(err) });
    }
  }

  #closeOpen(): void {
    if (this.#open) closeSync(this.#open.fd);
    this.#open = undefined;
  }

  close(): void {
    this.#closeOpen();
  }
}

/**
 * Commits what the journal of an earlier run holds (what a crash left there), then deletes
 * it. Run before the store serves. Returns the number of bytes read.
 */
export function replayJournal(dbPath: string, db: Database.Database): number {
  const ingester = new Ingester(dbPath, db);
  let bytes = 0;
  try {
    for (const segment of segmentNumbers(dbPath)) {
      const fd = openSync(segmentPath(dbPath, segment), "r");
      const size = fstatSync(fd).size;
      closeSync(fd);
      ingester.ingest({ segment, from: 0, to: size, final: true });
      bytes += size;
    }
  } finally {
    ingester.close();
  }
  return bytes;
}
