// A child process for the kill -9 durability tests: records entries into the SQLite store
// at argv[2] in a loop and prints each request id once it is durable: once record()'s
// promise resolved (argv[3] "record": the journal), or once flush() returned ("flush":
// SQLite itself).

import { writeSync } from "node:fs";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { entry } from "./usage-entry.js";

const path = process.argv[2];
const mode = process.argv[3] ?? "flush";
if (!path) throw new Error("usage: store-writer.ts <sqlite file> [flush|record]");
const store = openSqliteStore(path);
/** Writes all of `text` to stdout, waiting out a full pipe (EAGAIN). */
function print(text: string): void {
  for (;;) {
    try {
      writeSync(1, text);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
    }
  }
}

const costs = [1n, 999_999_999n, 1_500_000n, 123_456_789_012n];
for (let i = 0; i < 1_000_000; i++) {
  const requestId = `w${i}`;
  const recorded = store.record(entry({ requestId, time: Date.now(), token: `k${i % 3}`, user: `u${i % 2}`, costNano: costs[i % costs.length] }));
  if (mode === "flush") store.flush();
  else await recorded;
  // Synchronous write: the id reaches the pipe before the next entry starts.
  print(requestId + "\n");
  // Let timers run now and then, so SQLite catches up with part of the journal.
  if (i % 50 === 0) await new Promise((r) => setImmediate(r));
}
store.close();
