// A child process for the kill -9 durability test: records entries into the SQLite store
// at argv[2] in a loop and prints each request id once flush() has made it durable.

import { writeSync } from "node:fs";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { entry } from "./usage-entry.js";

const path = process.argv[2];
if (!path) throw new Error("usage: store-writer.ts <sqlite file>");
const store = openSqliteStore(path);
const costs = [1n, 999_999_999n, 1_500_000n, 123_456_789_012n];
for (let i = 0; i < 1_000_000; i++) {
  const requestId = `w${i}`;
  store.record(entry({ requestId, time: Date.now(), token: `k${i % 3}`, user: `u${i % 2}`, costNano: costs[i % costs.length] }));
  store.flush();
  // Synchronous write: the id reaches the pipe before the next entry starts.
  writeSync(1, requestId + "\n");
}
store.close();
