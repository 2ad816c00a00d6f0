// The usage-log writer thread, seen from the store: hands it ranges of the journal to bring
// into SQLite, waits for it when a read needs SQLite up to date, and collects the rows it
// could not write. Commits here instead while the thread is starting, or if it has ended.

import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { log } from "../observability/log.js";
import { isLocked, type FailedRow } from "./sqlite-commit.js";
import type { Ingester, IngestRange } from "./sqlite-ingest.js";
import type { WriterData, WriterFailure, WriterMessage } from "./sqlite-writer.js";

/** How long a wait for the writer thread lasts before it is reported as failed. */
const WRITER_ANSWER_MS = 60_000;

/** How soon a range kept out by another connection's lock is tried again here. */
const LOCKED_RETRY_MS = 100;

/** Slots of the memory the writer thread shares: the last request it finished, and whether
 * it has started (its module loaded and its connection open). */
const COMMITTED = 0;
const READY = 1;

/**
 * Commits on a worker thread (sqlite-writer.ts) with its own connection, so commits never
 * stall the event loop and, on a host with a spare core, cost the request path nothing but
 * a short message. The thread reports the last request it finished through shared memory,
 * which flush() waits on with Atomics.wait. Until the thread has started, ranges are
 * committed here: waiting for a thread that is still loading could deadlock (under a
 * module loader such as tsx, loading needs this thread's event loop). If the thread ends
 * unasked, later ranges are committed here too.
 */
export class ThreadWriter {
  readonly #worker: Worker;
  readonly #shared = new BigInt64Array(new SharedArrayBuffer(16));
  readonly #port: MessagePort;
  readonly #inline: Ingester;
  #seq = 0n;
  /** Ranges not handed over yet, oldest first: one this thread could not commit because
   * another connection holds the lock waits here, and every later one behind it (a final
   * range deletes its segment, so none may overtake an earlier one). */
  readonly #queued: { seq: bigint; range: IngestRange }[] = [];
  #retry: NodeJS.Timeout | undefined;
  /** The last request finished here (before the thread started, or after it ended). */
  #inlineDone = 0n;
  readonly #failures: FailedRow[] = [];
  /** Set once the thread has ended, asked or not. */
  #stopped = false;

  constructor(path: string, busyTimeoutMs: number, inline: Ingester) {
    this.#inline = inline;
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    const data: WriterData = { path, busyTimeoutMs, shared: this.#shared, failures: port2 };
    const [entry, how] = writerEntry();
    this.#worker = new Worker(entry, { ...how, workerData: data, transferList: [port2] });
    this.#worker.unref(); // an idle writer must not keep the process alive
    this.#worker.on("error", (error) => log.error("usage-log writer thread failed", { error: String(error) }));
    this.#worker.on("exit", () => {
      if (this.#stopped) return; // closed
      this.#stopped = true;
      // What it had not committed is still in the journal: the next start commits it.
      if (this.#seq > this.#done()) log.error("usage-log writer thread ended early; its work waits in the journal for the next start");
    });
  }

  get #ready(): boolean {
    return !this.#stopped && Atomics.load(this.#shared, READY) === 1n;
  }

  /** Hands a range over; returns its sequence number. */
  send(range: IngestRange): bigint {
    const seq = ++this.#seq;
    this.#queued.push({ seq, range });
    this.#handOver();
    return seq;
  }

  /** Hands the queued ranges, in order, to the thread once it runs, else commits them
   * here; here, a locked database is not waited out (that would stall the event loop):
   * the range stays queued, with every later one, for the next call. */
  #handOver(): void {
    while (this.#queued.length > 0) {
      const { seq, range } = this.#queued[0];
      if (this.#ready) {
        this.#worker.postMessage({ type: "ingest", seq, range } satisfies WriterMessage);
      } else {
        try {
          this.#failures.push(...this.#inline.ingest(range, false));
        } catch (error) {
          if (!isLocked(error)) throw error;
          this.#retry ??= setTimeout(() => {
            this.#retry = undefined;
            this.#handOver();
          }, LOCKED_RETRY_MS).unref();
          return;
        }
        this.#inlineDone = seq;
      }
      this.#queued.shift();
    }
  }

  /** The last request done (committed, or failed and reported). */
  get done(): bigint {
    return this.#done();
  }

  #done(): bigint {
    if (this.#stopped) return this.#queued.length > 0 ? this.#queued[0].seq - 1n : this.#seq;
    const committed = Atomics.load(this.#shared, COMMITTED);
    return committed > this.#inlineDone ? committed : this.#inlineDone;
  }

  /** Blocks until request `seq` is done; throws when the writer does not answer in time. */
  waitDone(seq: bigint): void {
    const deadline = Date.now() + WRITER_ANSWER_MS;
    for (let seen = Atomics.load(this.#shared, COMMITTED); this.#done() < seq; seen = Atomics.load(this.#shared, COMMITTED)) {
      this.#handOver();
      if (this.#done() >= seq) return;
      if (Date.now() > deadline) {
        throw new Error(this.#queued.length > 0 ? "the usage log's SQLite file stayed locked by another connection" : "the usage-log writer thread did not answer");
      }
      Atomics.wait(this.#shared, COMMITTED, seen, 100);
    }
  }

  /** Takes the rows that failed since the last call. Failures are posted before their
   * request is marked done, so every finished one's are here. */
  takeFailures(): FailedRow[] {
    for (let m = receiveMessageOnPort(this.#port); m; m = receiveMessageOnPort(this.#port)) {
      this.#failures.push(...(m.message as WriterFailure).failed);
    }
    return this.#failures.splice(0);
  }

  close(): void {
    clearTimeout(this.#retry);
    if (this.#ready) {
      this.#handOver();
      const seq = ++this.#seq;
      this.#worker.postMessage({ type: "close", seq } satisfies WriterMessage);
      this.waitDone(seq);
    }
    this.#stopped = true; // the exit that follows is the one asked for
    void this.#worker.terminate();
    this.#port.close();
    this.#inline.close();
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
