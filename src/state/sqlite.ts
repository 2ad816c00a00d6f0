// The embedded default store: one SQLite file (better-sqlite3) holding the usage log and
// the spend counters. Money columns are 64-bit integers read back as bigint, never floats.

import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import Database from "better-sqlite3";
import { log } from "../observability/log.js";
import { migrate } from "./migrations.js";
import { batchCommitter, configureConnection } from "./sqlite-commit.js";
import { pushRow, ROW_WIDTH, SqliteQueries } from "./sqlite-queries.js";
import type { WriterData, WriterMessage } from "./sqlite-writer.js";
import type { LogFilter, SpendDimension, SpendRow, Store, UsageEntry } from "./store.js";

/** How to open a SQLite store. */
export interface SqliteStoreOptions {
  /** Refuse a missing file instead of creating it (the read-only CLI commands). */
  readonly mustExist?: boolean;
  /** How long a statement waits for another process's write lock; default 5000 ms. */
  readonly busyTimeoutMs?: number;
}

/**
 * Opens (creating it and its parent folders unless `mustExist`) the SQLite store at
 * `path`, or a private in-memory database for ":memory:", and migrates its schema.
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
    db.pragma("journal_mode = WAL");
    configureConnection(db, busyTimeoutMs);
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return new SqliteStore(db, memory ? (d, q) => new InlineWriter(d, q) : (d, q) => new ThreadWriter(path, busyTimeoutMs, new InlineWriter(d, q)));
}

/**
 * Group commit: entries recorded within this many milliseconds share one transaction.
 * A commit costs ~45 µs whatever its size, which per request would halve the gateway's
 * throughput; batched it costs a few µs. The price: a kill -9 can lose the charges
 * recorded in the last GROUP_COMMIT_MS (never half of one: each entry and its spend
 * move together).
 */
export const GROUP_COMMIT_MS = 10;
/** A batch this large is handed to the writer at once rather than waiting for the timer. */
const MAX_BATCH = 512;
/** How long flush() waits for the writer thread before giving up with an error. */
const WRITER_ANSWER_MS = 60_000;

/** Commits batches: on a thread of its own for a file, in this thread for ":memory:". */
interface Writer {
  /** Hands a batch over; returns its sequence number. */
  send(rows: readonly unknown[]): bigint;
  /** Waits until batch `seq` and every one before it is committed; the errors of batch `seq`. */
  wait(seq: bigint): unknown[];
  close(): void;
}

/** Writes in the calling thread (an in-memory database cannot be shared with another). */
class InlineWriter implements Writer {
  readonly #commit: (rows: readonly unknown[]) => unknown[];
  #seq = 0n;
  #lastFailed: unknown[] = [];

  constructor(db: Database.Database, queries: SqliteQueries) {
    this.#commit = batchCommitter(db, queries);
  }

  /** Commits now; the errors of the rows that could not be written (also logged). */
  commitNow(rows: readonly unknown[]): unknown[] {
    const failed = this.#commit(rows);
    if (failed.length > 0) {
      log.error("usage entries could not be recorded; their charges are lost from the store", { errors: failed.map(String) });
    }
    return failed;
  }

  send(rows: readonly unknown[]): bigint {
    this.#lastFailed = this.commitNow(rows);
    return ++this.#seq;
  }

  wait(seq: bigint): unknown[] {
    return seq === this.#seq ? this.#lastFailed : [];
  }

  close(): void {}
}

/** Slots of the memory the writer thread shares: the last batch it committed, and whether
 * it has started (its module loaded and its connection open). */
const COMMITTED = 0;
const READY = 1;

/**
 * Writes on a worker thread (sqlite-writer.ts) with its own connection, so commits never
 * stall the event loop and, on a host with a spare core, cost the request path only the
 * copy of each entry. The thread reports the last batch it committed through shared
 * memory, which lets flush() wait for it synchronously. Until the thread has started,
 * batches are committed here: waiting for a thread that is still loading could deadlock
 * (under a module loader such as tsx, loading needs this thread's event loop).
 */
class ThreadWriter implements Writer {
  readonly #worker: Worker;
  readonly #shared = new BigInt64Array(new SharedArrayBuffer(16));
  readonly #failures: MessagePort;
  readonly #inline: InlineWriter;
  #seq = 0n;
  /** The last batch handed to the thread, and the last committed here (with its errors). */
  #lastSent = 0n;
  #lastInline = { seq: 0n, failed: [] as unknown[] };
  /** Set if the thread ends unasked: later batches are then committed here. */
  #stopped = false;

  constructor(path: string, busyTimeoutMs: number, inline: InlineWriter) {
    this.#inline = inline;
    const { port1, port2 } = new MessageChannel();
    this.#failures = port1;
    const data: WriterData = { path, busyTimeoutMs, shared: this.#shared, failures: port2 };
    const [entry, how] = writerEntry();
    this.#worker = new Worker(entry, { ...how, workerData: data, transferList: [port2] });
    this.#worker.unref(); // an idle writer must not keep the process alive
    this.#worker.on("error", (error) => log.error("usage-log writer thread failed", { error: String(error) }));
    this.#worker.on("exit", () => {
      if (this.#stopped) return; // closed
      this.#stopped = true;
      const committed = Atomics.load(this.#shared, COMMITTED);
      const lost = this.#lastSent - committed;
      if (lost > 0n) log.error("usage-log writer thread ended with batches uncommitted; their charges are lost from the store", { batches: Number(lost) });
      this.#lastSent = committed; // nothing more to wait for: later batches commit here
    });
  }

  get #ready(): boolean {
    return !this.#stopped && Atomics.load(this.#shared, READY) === 1n;
  }

  send(rows: readonly unknown[]): bigint {
    const seq = ++this.#seq;
    if (this.#ready) {
      this.#worker.postMessage({ type: "batch", seq, rows } satisfies WriterMessage);
      this.#lastSent = seq;
    } else {
      this.#lastInline = { seq, failed: this.#inline.commitNow(rows) };
    }
    return seq;
  }

  wait(seq: bigint): unknown[] {
    const deadline = Date.now() + WRITER_ANSWER_MS;
    for (let done = Atomics.load(this.#shared, COMMITTED); done < this.#lastSent; done = Atomics.load(this.#shared, COMMITTED)) {
      if (Date.now() > deadline) throw new Error("the usage-log writer thread did not answer");
      Atomics.wait(this.#shared, COMMITTED, done, 100);
    }
    if (seq === this.#lastInline.seq) return this.#lastInline.failed;
    // Failures are posted before the batch is marked committed, so they are here by now.
    // Those of earlier batches were logged by the thread when they happened.
    const errors: unknown[] = [];
    for (let m = receiveMessageOnPort(this.#failures); m; m = receiveMessageOnPort(this.#failures)) {
      const failure = m.message as { seq: bigint; errors: string[] };
      if (failure.seq === seq) errors.push(...failure.errors.map((e) => new Error(e)));
    }
    return errors;
  }

  close(): void {
    if (this.#ready) {
      const seq = ++this.#seq;
      this.#worker.postMessage({ type: "close", seq } satisfies WriterMessage);
      this.#lastSent = seq;
      this.wait(seq);
    }
    this.#stopped = true; // the exit that follows is the one asked for
    void this.#worker.terminate();
    this.#failures.close();
  }
}

/** The writer thread's entry: compiled, its JavaScript file; run from the TypeScript
 * sources (tests, development), a bootstrap that registers tsx in the thread first, since
 * Node 20 does not pass `--import tsx` on to worker threads. */
function writerEntry(): [string | URL, { eval?: boolean }] {
  if (!import.meta.url.endsWith(".ts")) return [new URL("./sqlite-writer.js", import.meta.url), {}];
  const source = JSON.stringify(new URL("./sqlite-writer.ts", import.meta.url).href);
  const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  return [`import(${tsx}).then((tsx) => { tsx.register(); return import(${source}); });`, { eval: true }];
}

class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #queries: SqliteQueries;
  readonly #makeWriter: () => Writer;
  #writer: Writer | undefined;
  /** Rows recorded and not yet handed to the writer, flat (see pushRow). */
  #pending: unknown[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Database.Database, makeWriter: (db: Database.Database, queries: SqliteQueries) => Writer) {
    this.#db = db;
    this.#queries = new SqliteQueries(db);
    // Started on the first entry: a store only read from (the CLI) never starts a thread.
    this.#makeWriter = () => makeWriter(db, this.#queries);
  }

  spentByToken(token: string): bigint {
    this.flush();
    return this.#queries.spent("token", token);
  }

  spentByUser(user: string): bigint {
    this.flush();
    return this.#queries.spent("user", user);
  }

  record(entry: UsageEntry): void {
    // Entries are immutable by contract, so the batch keeps the caller's object; only the
    // money type is checked here (normalizeEntry shapes rows on the way out).
    if (typeof entry.costNano !== "bigint") {
      throw new TypeError(`usage entry ${entry.requestId}: costNano must be a bigint of nano-units`);
    }
    pushRow(this.#pending, entry);
    if (this.#pending.length >= MAX_BATCH * ROW_WIDTH) this.#send();
    else this.#timer ??= setTimeout(() => this.#send(), GROUP_COMMIT_MS);
  }

  /** Hands the pending entries to the writer; failures are logged where they happen. */
  #send(): bigint | undefined {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pending.length === 0) return undefined;
    const batch = this.#pending;
    this.#pending = [];
    this.#writer ??= this.#makeWriter();
    return this.#writer.send(batch);
  }

  flush(): void {
    const seq = this.#send();
    if (seq === undefined || !this.#writer) return;
    const failed = this.#writer.wait(seq);
    if (failed.length > 0) throw new AggregateError(failed, `${failed.length} usage entries could not be recorded`);
  }

  logs(filter: LogFilter): UsageEntry[] {
    this.flush();
    return this.#queries.logs(filter);
  }

  spend(by: SpendDimension, range: { since?: number; until?: number }): SpendRow[] {
    this.flush();
    return this.#queries.spend(by, range);
  }

  close(): void {
    if (!this.#db.open) return;
    try {
      this.flush();
    } finally {
      try {
        this.#writer?.close();
      } finally {
        this.#db.close();
      }
    }
  }
}
