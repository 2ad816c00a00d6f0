// The cluster primary's decisions: how many workers, which stores several workers may
// share, and the restart backoff that keeps a crash loop from spinning.

import { test } from "node:test";
import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { compileSource } from "../../src/config/index.js";
import { RestartBackoff, severalWorkersRefusal, workerCount } from "../../src/server/cluster-policy.js";

const runtimeWith = (yaml: string) => compileSource(yaml, { path: "t.yaml", env: {} }).runtime;

test("workers: a number as written, auto one per core, 1 by default", () => {
  assert.equal(workerCount(3), 3);
  assert.equal(workerCount("auto"), availableParallelism());
  assert.equal(runtimeWith("server: { workers: auto }\n").server.workers, "auto");
  assert.equal(runtimeWith("server: { listen: 127.0.0.1:0 }\n").server.workers, 1);
});

test("workers: 0, negative, fractional or a word are config errors naming the key", () => {
  for (const bad of ["0", "-2", "1.5", "many"]) {
    assert.throws(() => runtimeWith(`server: { workers: ${bad} }\n`), /server\.workers: must be a whole number of workers \(1 or more\) or "auto"/);
  }
});

test("several workers are refused on SQLite, named with the way out; one worker never is", () => {
  const sqlite = runtimeWith("store: sqlite:./data/g.db\n");
  assert.equal(severalWorkersRefusal(sqlite, 1), undefined);
  assert.equal(severalWorkersRefusal(sqlite, 2),
    "server.workers: 2 with store: sqlite:./data/g.db: SQLite is one process's store: " +
    "use store: redis://… and ledger: postgres://… for several workers, or workers: 1");
  assert.equal(severalWorkersRefusal(runtimeWith("server: { workers: 4 }\n"), 4)?.startsWith(
    "server.workers: 4 with store: sqlite:./data/gateway.db: SQLite is one process's store"), true);
  assert.equal(severalWorkersRefusal({ ...sqlite, store: "memory:" }, 2)?.includes("memory: is one process's store"), true);
  assert.equal(severalWorkersRefusal(runtimeWith("store: redis://127.0.0.1:6379/3\n"), 8), undefined);
});

test("restart backoff: doubles while workers die young, none after a worker that served a while", () => {
  const backoff = new RestartBackoff();
  assert.deepEqual([100, 50, 2000, 10].map((lived) => backoff.delayAfter(lived)), [200, 400, 800, 1600]);
  for (let i = 0; i < 20; i++) backoff.delayAfter(0);
  assert.equal(backoff.delayAfter(0), 30_000, "capped");
  assert.equal(backoff.delayAfter(60_000), 0, "a worker that lived a minute was healthy");
  assert.equal(backoff.delayAfter(0), 200, "and the count starts over");
});
