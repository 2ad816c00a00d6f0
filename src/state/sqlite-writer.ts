// The usage-log writer thread: brings the SQLite file up to date with the journal, range
// by range as the gateway asks (sqlite-ingest.ts), so commits never stall the event loop
// that serves requests. Answers through shared memory (the last request done), which the
// main thread can wait on both synchronously (flush) and asynchronously (Atomics.waitAsync),
// and reports the rows it could not write before marking their request done.

import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import Database from "better-sqlite3";
import { configureConnection, type FailedRow } from "./sqlite-commit.js";
import { Ingester, type IngestRange } from "./sqlite-ingest.js";

/** What the store hands the thread when it starts it. */
export interface WriterData {
  readonly path: string;
  readonly busyTimeoutMs: number;
  /** [0]: sequence number of the last request done (committed, or failed and reported);
   * [1]: 1 once this thread has started and can take requests. */
  readonly shared: BigInt64Array;
  /** Where failures go, each as a WriterFailure. */
  readonly failures: MessagePort;
}

/** The rows of request `seq` that could not be written. */
export interface WriterFailure {
  readonly seq: bigint;
  readonly failed: readonly FailedRow[];
}

export type WriterMessage =
  | { readonly type: "ingest"; readonly seq: bigint; readonly range: IngestRange }
  | { readonly type: "close"; readonly seq: bigint };

const { path, busyTimeoutMs, shared, failures } = workerData as WriterData;
// The main thread created the file and migrated it; this connection only writes.
const db = new Database(path, { fileMustExist: true });
configureConnection(db, busyTimeoutMs);
const ingester = new Ingester(path, db);

parentPort!.on("message", (m: WriterMessage) => {
  if (m.type === "ingest") {
    const failed = ingester.ingest(m.range);
    if (failed.length > 0) failures.postMessage({ seq: m.seq, failed } satisfies WriterFailure);
  } else {
    ingester.close();
    db.close();
    parentPort!.close();
  }
  Atomics.store(shared, 0, m.seq);
  Atomics.notify(shared, 0);
});
Atomics.store(shared, 1, 1n);
