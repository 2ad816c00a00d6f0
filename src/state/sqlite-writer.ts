// The usage-log writer thread: commits the batches the gateway sends it to the SQLite
// file, so a commit (~0.7 ms for 100 entries) never stalls the event loop that serves
// requests. Answers through shared memory (the last batch committed) so the main thread
// can wait for it synchronously, and reports entries it could not write.

import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import Database from "better-sqlite3";
import { log } from "../observability/log.js";
import { batchCommitter, configureConnection } from "./sqlite-commit.js";
import { SqliteQueries } from "./sqlite-queries.js";

/** What the store hands the thread when it starts it. */
export interface WriterData {
  readonly path: string;
  readonly busyTimeoutMs: number;
  /** [0]: sequence number of the last batch committed (or failed and reported);
   * [1]: 1 once this thread has started and can take batches. */
  readonly shared: BigInt64Array;
  /** Where failures go, each as { seq, errors }. */
  readonly failures: MessagePort;
}

export type WriterMessage =
  | { readonly type: "batch"; readonly seq: bigint; readonly rows: readonly unknown[] }
  | { readonly type: "close"; readonly seq: bigint };

const { path, busyTimeoutMs, shared, failures } = workerData as WriterData;
// The main thread created the file and migrated it; this connection only writes.
const db = new Database(path, { fileMustExist: true });
configureConnection(db, busyTimeoutMs);
const commit = batchCommitter(db, new SqliteQueries(db));

parentPort!.on("message", (m: WriterMessage) => {
  if (m.type === "batch") {
    const failed = commit(m.rows);
    if (failed.length > 0) {
      const errors = failed.map(String);
      log.error("usage entries could not be recorded; their charges are lost from the store", { errors });
      failures.postMessage({ seq: m.seq, errors });
    }
  } else {
    db.close();
    parentPort!.close();
  }
  Atomics.store(shared, 0, m.seq);
  Atomics.notify(shared, 0);
});
Atomics.store(shared, 1, 1n);
