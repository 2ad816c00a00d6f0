// Decisions a cluster primary makes without touching a process: how many workers, whether
// the configured state can be shared by several, and how long to wait before restarting
// a worker that died.

import { availableParallelism } from "node:os";
import type { Runtime } from "../runtime/types.js";

/** The number of workers `server.workers` asks for ("auto": one per core). */
export function workerCount(setting: number | "auto"): number {
  return setting === "auto" ? Math.max(1, availableParallelism()) : setting;
}

/**
 * Why this config cannot run `workers` processes, or undefined when it can. Several workers
 * are refused on the embedded SQLite store and on `memory:` rather than sharing state
 * through the primary: the SQLite journal, the reservations held and the rate windows are
 * one process's (its writer owns the journal's segments; two writers would interleave
 * them), and routing every reserve, settle and limit through the primary would put an IPC
 * round trip on every request and make the primary the bottleneck the workers exist to
 * remove. Redis and PostgreSQL are built to be shared, so that is the way to scale.
 */
export function severalWorkersRefusal(runtime: Runtime, workers: number): string | undefined {
  if (workers <= 1) return undefined;
  const store = runtime.store;
  if (/^rediss?:\/\//.test(store)) return undefined;
  const kind = store.startsWith("memory") ? "memory: is" : "SQLite is";
  return `server.workers: ${workers} with store: ${store}: ${kind} one process's store: ` +
    "use store: redis://… and ledger: postgres://… for several workers, or workers: 1";
}

/** A worker that lived this long was healthy: the next restart is immediate. */
const STABLE_MS = 10_000;
const FIRST_DELAY_MS = 200;
const MAX_DELAY_MS = 30_000;

/**
 * Restart delays for workers that die: none after a worker that had been serving a while,
 * doubling (up to 30 s) while workers keep dying soon after they start, so a crash loop
 * (a bad deploy, a server down) does not spin the machine.
 */
export class RestartBackoff {
  #quickDeaths = 0;

  /** How long to wait before replacing a worker that lived `livedMs`. */
  delayAfter(livedMs: number): number {
    if (livedMs >= STABLE_MS) {
      this.#quickDeaths = 0;
      return 0;
    }
    const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** this.#quickDeaths);
    this.#quickDeaths++;
    return delay;
  }
}
