// The embedded default store: one SQLite file (better-sqlite3) holding the usage log and
// the spend counters, with a journal beside it where each charge is durable first (see
// sqlite-journal.ts). Money columns are 64-bit integers read back as bigint, never floats.

import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { log } from "../observability/log.js";
import { migrate } from "./migrations.js";
import { batchCommitter, configureConnection, whileBusy, type FailedRow } from "./sqlite-commit.js";
import { Ingester, replayJournal, type IngestRange } from "./sqlite-ingest.js";
import { deleteSegment, Journal, journalLine, type JournalMark } from "./sqlite-journal.js";
import { logLimit } from "./entry.js";
import { pushRow, SqliteQueries } from "./sqlite-queries.js";
import { mergeBuckets, mergeLogs, mergeSpend, OpenSegments, tailSpend } from "./sqlite-tail.js";
import { ThreadWriter } from "./sqlite-thread.js";
import { takeLockFile } from "./sweep-lock.js";
import type { LogFilter, RefundResult, SpendDimension, SpendRange, SpendRow, Store, UsageBucket, UsageEntry, UsageSubject } from "./store.js";
import { checkBucketQuery } from "./usage-buckets.js";
import { checkTrafficQuery, keyHealthOf, latencySampleOf, sumKeyCounts, sumTraffic, type KeyHealthRow, type TrafficBucket, type TrafficRange } from "./traffic.js";

/** How to open a SQLite store. */
export interface SqliteStoreOptions {
  /** Refuse a missing file instead of creating it, and only read (the CLI commands). */
  readonly mustExist?: boolean;
  /** How long a statement waits for another process's write lock; default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** Size at which a journal segment is closed and the next started (tests make it small). */
  readonly journalSegmentBytes?: number;
  /** Most journal bytes SQLite may lag behind before a charge's answer waits for it;
   * default JOURNAL_BACKLOG_BYTES (tests make it small). */
  readonly journalBacklogBytes?: number;
}

/**
 * Opens (creating it and its parent folders unless `mustExist`) the SQLite store at
 * `path`, or a private in-memory database for ":memory:", and migrates its schema. A store
 * opened to write first commits what an earlier run left in its journal.
 * Throws when the file is missing (with `mustExist`), unreadable, or newer than this code.
 */
export function openSqliteStore(path: string, opts: SqliteStoreOptions = {}): Store {
  const memory = path === ":memory:";
  if (!memory) {
    if (opts.mustExist && !existsSync(path)) throw new Error(`no store at ${path} (has the gateway run yet?)`);
    mkdirSync(dirname(path), { recursive: true });
  }
  const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
  const db = new Database(path, { fileMustExist: opts.mustExist ?? false });
  try {
    // WAL: readers never block the writer and the writer never blocks readers.
    whileBusy(busyTimeoutMs, () => db.pragma("journal_mode = WAL"));
    configureConnection(db, busyTimeoutMs);
    migrate(db);
    if (memory) return new SqliteStore(db, new MemoryCommits(db), undefined);
    // A reader (the CLI) leaves the journal to the server that writes it, and reads what
    // SQLite does not hold yet from the journal itself.
    if (opts.mustExist) return new SqliteStore(db, new JournalReads(path, db), path);
    const replayed = replayJournal(path, db);
    if (replayed > 0) log.info("usage log: committed what an earlier run left in its journal", { bytes: replayed });
    const backlog = opts.journalBacklogBytes ?? JOURNAL_BACKLOG_BYTES;
    return new SqliteStore(db, new JournalCommits(path, db, busyTimeoutMs, backlog, opts.journalSegmentBytes), path);
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * SQLite catches up with the journal in group commits: what was journaled within this many
 * milliseconds shares one transaction (a commit costs ~45 µs whatever its size). The
 * charges are durable before that, in the journal; reads wait for what was recorded before.
 */
export const GROUP_COMMIT_MS = 10;

/**
 * A range smaller than this waits for more, up to GROUP_COMMIT_MAX_MS after its first byte:
 * a commit costs the writer thread about the same for 1 row as for 100, and on a host
 * where it shares the event loop's core each one takes that core from the requests in
 * flight. At one connection a 10 ms group held a few rows: the writer's CPU per request
 * was a tenth of the gateway's (bench/syscalls.ts). A journal line is ~200 B: from about
 * 16,000 requests a second a range fills this within GROUP_COMMIT_MS (or waits for a busy
 * writer anyway); at 10,000 it holds ~16 ms of rows instead of 10.
 */
const GROUP_COMMIT_MIN_BYTES = 32 * 1024;

/** The longest a range below GROUP_COMMIT_MIN_BYTES waits before SQLite takes it in. */
const GROUP_COMMIT_MAX_MS = 100;

/**
 * Backpressure: once the journal holds this many bytes SQLite has not taken in (~45,000
 * entries; the writer takes in over 20,000 a second on one core), a newly journaled charge's
 * answer waits until SQLite is back under it. The charge is durable before the wait. So the
 * journal on disk stays under this plus one segment plus one line per request in flight,
 * and a reader of the journal's tail (JournalReads) never reads more than that.
 */
export const JOURNAL_BACKLOG_BYTES = 8 * 1024 * 1024;

/** How often a charge waiting for room looks at the writer's progress. */
const BACKLOG_POLL_MS = 5;

/** How a store makes entries durable and brings SQLite up to date. */
interface Commits {
  /** Resolves once the entry is durable; rejects when it could not be made so. */
  record(entry: UsageEntry): Promise<void>;
  /** Brings SQLite up to date with everything recorded; the rows it could not write. */
  flush(): FailedRow[];
  /** For a store that cannot flush (a reader in another process): runs `read` in one read
   * transaction, given the entries journaled but not yet in SQLite (see sqlite-tail.ts). */
  readonly readWithTail?: <T>(read: (tail: readonly UsageEntry[]) => T) => T;
  close(): void;
}

const resolved = Promise.resolve();

/** A store opened only to read, while a server may be writing it: every read sees SQLite
 * and the journal's entries SQLite does not hold yet, in one consistent view. */
class JournalReads implements Commits {
  readonly #path: string;
  readonly #db: Database.Database;
  readonly #queries: SqliteQueries;

  constructor(path: string, db: Database.Database) {
    this.#path = path;
    this.#db = db;
    this.#queries = new SqliteQueries(db);
  }

  record(): Promise<void> {
    return Promise.reject(new Error("this store was opened to read only"));
  }

  flush(): FailedRow[] {
    return [];
  }

  readonly readWithTail = <T>(read: (tail: readonly UsageEntry[]) => T): T => {
    // Open the segments before the transaction's snapshot is taken (its first read).
    const segments = new OpenSegments(this.#path);
    try {
      return this.#db.transaction(() => read(segments.entriesNotIn(this.#queries)))();
    } finally {
      segments.close();
    }
  };

  close(): void {}
}

/** An in-memory database: an entry is committed as it is recorded, as durable as it gets. */
class MemoryCommits implements Commits {
  readonly #commit: (rows: readonly unknown[]) => FailedRow[];

  constructor(db: Database.Database) {
    this.#commit = batchCommitter(db, new SqliteQueries(db));
  }

  record(entry: UsageEntry): Promise<void> {
    const rows: unknown[] = [];
    pushRow(rows, entry);
    const failed = this.#commit(rows);
    if (failed.length === 0) return resolved;
    log.error("usage entries could not be recorded", { failed });
    return Promise.reject(new Error(`usage entry ${entry.requestId} was not recorded: ${failed[0].error}`));
  }

  flush(): FailedRow[] {
    return [];
  }

  close(): void {}
}

/** A file: the journal makes each entry durable; the writer thread reads it into SQLite. */
class JournalCommits implements Commits {
  readonly #journal: Journal;
  readonly #makeWriter: () => ThreadWriter;
  #writer: ThreadWriter | undefined;
  /** Where SQLite has been asked to catch up to, and the latest the journal has reached. */
  #sent = { segment: 0, bytes: 0 };
  #latest: JournalMark | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** When the journal first held bytes not handed to the writer (0: it holds none). */
  #pendingSince = 0;
  #lastSeq = 0n;
  /** Ranges handed to the writer and not yet seen done: its sequence number, and the
   * journal's total bytes once it is done. */
  readonly #inFlight: { seq: bigint; upTo: number }[] = [];
  /** Journal bytes SQLite holds (counted from this run's start). */
  #ingested = 0;
  readonly #backlogBytes: number;
  /** Charges whose answers wait for SQLite to catch up, and the timer that watches it. */
  readonly #waiting: (() => void)[] = [];
  #poll: NodeJS.Timeout | undefined;

  readonly #path: string;

  constructor(path: string, db: Database.Database, busyTimeoutMs: number, backlogBytes: number, segmentBytes?: number) {
    this.#path = path;
    this.#backlogBytes = backlogBytes;
    // Started on the first entry: a store that records nothing never starts a thread.
    this.#makeWriter = () => new ThreadWriter(path, busyTimeoutMs, new Ingester(path, db));
    this.#journal = new Journal(path, (mark) => this.#written(mark), segmentBytes);
  }

  record(entry: UsageEntry): Promise<void> {
    const durable = this.#journal.append(journalLine(entry));
    if (this.#backlog() <= this.#backlogBytes) return durable;
    return durable.then(() => this.#room());
  }

  /** Journal bytes written that SQLite does not hold yet. */
  #backlog(): number {
    const done = this.#writer?.done ?? 0n;
    while (this.#inFlight.length > 0 && this.#inFlight[0].seq <= done) this.#ingested = this.#inFlight.shift()!.upTo;
    return this.#journal.written - this.#ingested;
  }

  /** Resolves once SQLite is back within the backlog bound. */
  #room(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      if (this.#poll) return;
      log.warn("usage log: SQLite is behind the journal; answers wait for it to catch up", { backlogBytes: this.#backlog() });
      this.#poll = setInterval(() => {
        this.#send();
        if (this.#backlog() <= this.#backlogBytes) this.#release();
      }, BACKLOG_POLL_MS);
    });
  }

  #release(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** After each journal write: a closed segment is handed over whole at once; otherwise
   * SQLite catches up at the next group commit. */
  #written(mark: JournalMark): void {
    // Closed with nothing ever recorded: no thread to start just to delete an empty file.
    if (mark.final && mark.bytes === 0 && !this.#writer) return deleteSegment(this.#path, mark.segment);
    this.#latest = mark;
    if (this.#pendingSince === 0) this.#pendingSince = Date.now();
    if (mark.final) this.#send();
    else this.#timer ??= setTimeout(() => this.#send(), GROUP_COMMIT_MS);
  }

  /**
   * Asks the writer to commit what the journal holds beyond what it was last asked. While
   * the writer is still busy with the last range, a group commit waits for it (unless
   * `now`): the next range then holds everything since, so the busier the writer, the more
   * rows share a transaction and the less each costs (the commit itself dominates a small
   * one), and ingest speeds up as the load grows. A small range waits too (see
   * GROUP_COMMIT_MIN_BYTES).
   */
  #send(now = false): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const mark = this.#latest;
    if (!mark) return;
    const from = mark.segment === this.#sent.segment ? this.#sent.bytes : 0;
    if (mark.bytes <= from && !mark.final) {
      this.#pendingSince = 0;
      return;
    }
    const small = mark.bytes - from < GROUP_COMMIT_MIN_BYTES && Date.now() - this.#pendingSince < GROUP_COMMIT_MAX_MS;
    if (!now && !mark.final && (small || (this.#writer && this.#writer.done < this.#lastSeq))) {
      this.#timer = setTimeout(() => this.#send(), GROUP_COMMIT_MS);
      return;
    }
    this.#pendingSince = 0;
    const range: IngestRange = { segment: mark.segment, from, to: mark.bytes, final: mark.final };
    this.#writer ??= this.#makeWriter();
    this.#lastSeq = this.#writer.send(range);
    this.#inFlight.push({ seq: this.#lastSeq, upTo: this.#journal.written });
    this.#sent = mark.final ? { segment: mark.segment + 1, bytes: 0 } : { segment: mark.segment, bytes: mark.bytes };
    if (mark.final) this.#latest = undefined;
  }

  flush(): FailedRow[] {
    this.#journal.write();
    this.#send(true);
    if (!this.#writer) return [];
    this.#writer.waitDone(this.#lastSeq);
    return this.#writer.takeFailures();
  }

  close(): void {
    this.#journal.close(); // writes what is queued; its last range goes to the writer
    this.#release();
    if (!this.#writer) return;
    this.#writer.waitDone(this.#lastSeq);
    const failed = this.#writer.takeFailures();
    this.#writer.close();
    if (failed.length > 0) throw notRecorded(failed);
  }
}

function notRecorded(failed: readonly FailedRow[]): AggregateError {
  return new AggregateError(failed.map((f) => new Error(`${f.requestId}: ${f.error}`)), `${failed.length} usage entries could not be recorded`);
}

class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #queries: SqliteQueries;
  readonly #commits: Commits;

  /** The file (undefined: a private in-memory database). */
  readonly #path: string | undefined;

  constructor(db: Database.Database, commits: Commits, path: string | undefined) {
    this.#path = path;
    this.#db = db;
    this.#queries = new SqliteQueries(db);
    this.#commits = commits;
  }

  spentByToken(token: string): bigint {
    return this.#read((tail) => this.#queries.spent("token", token) + tailSpend(tail, "token", token));
  }

  spentByUser(user: string): bigint {
    return this.#read((tail) => this.#queries.spent("user", user) + tailSpend(tail, "user", user));
  }

  /** Runs a read on a view holding every entry recorded: SQLite brought up to date
   * (flush), or, for a reader in another process, SQLite and the journal's tail. */
  #read<T>(read: (tail: readonly UsageEntry[]) => T): T {
    if (this.#commits.readWithTail) return this.#commits.readWithTail(read);
    this.flush();
    return read([]);
  }

  record(entry: UsageEntry): Promise<void> {
    // Entries are immutable by contract; only the money type is checked here
    // (normalizeEntry shapes rows on the way out).
    if (typeof entry.costNano !== "bigint") {
      return Promise.reject(new TypeError(`usage entry ${entry.requestId}: costNano must be a bigint of nano-units`));
    }
    return this.#commits.record(entry);
  }

  flush(): void {
    const failed = this.#commits.flush();
    if (failed.length > 0) throw notRecorded(failed);
  }

  logs(filter: LogFilter): UsageEntry[] {
    return this.#read((tail) => mergeLogs(this.#queries.logs(filter), tail, filter, logLimit(filter.limit)));
  }

  /** Commits what is pending first, so the entry to refund is there if it was recorded. */
  refund(requestId: string, at: number): RefundResult {
    this.flush();
    return this.#queries.refund(requestId, at);
  }

  spend(by: SpendDimension, range: SpendRange): SpendRow[] {
    return this.#read((tail) => mergeSpend(this.#queries.spend(by, range), tail, by, range));
  }

  usageBuckets(subject: UsageSubject, sinceMs: number, bucketMs: number): UsageBucket[] {
    checkBucketQuery(subject, sinceMs, bucketMs);
    return this.#read((tail) => mergeBuckets(this.#queries.usageBuckets(subject, sinceMs, bucketMs), tail, subject, sinceMs, bucketMs));
  }

  traffic(range: TrafficRange, bucketMs: number): TrafficBucket[] {
    checkTrafficQuery(range, bucketMs);
    return this.#read((tail) => sumTraffic(this.#queries.traffic(range, bucketMs), tail, range, bucketMs));
  }

  /** The journal's tail is newer than what SQLite holds: its latencies go first in the sample. */
  keyHealth(range: TrafficRange): KeyHealthRow[] {
    checkTrafficQuery(range);
    return this.#read((tail) => keyHealthOf(
      sumKeyCounts(this.#queries.keyCounts(range), tail, range),
      [...latencySampleOf(tail, range), ...this.#queries.latencySample(range)],
    ));
  }

  oldestBefore(beforeMs: number, limit: number): UsageEntry[] {
    return this.#queries.oldestBefore(beforeMs, limit);
  }

  /** Entries journaled and not yet in SQLite are new, never past the retention: no flush. */
  removeBefore(beforeMs: number, limit: number, ids?: readonly string[]): number {
    if (this.#commits.readWithTail) throw new Error("this store was opened to read only");
    return this.#queries.removeBefore(beforeMs, limit, ids);
  }

  /** Workers of a cluster share the file: a lock file beside it (sweep-lock.ts). */
  lockSweep(): (() => void) | undefined {
    return this.#path === undefined ? () => {} : takeLockFile(`${this.#path}.sweep-lock`);
  }

  close(): void {
    if (!this.#db.open) return;
    try {
      this.#commits.close();
    } finally {
      this.#db.close();
    }
  }
}
