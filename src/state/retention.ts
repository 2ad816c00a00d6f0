// usage.retention: a background sweep that removes usage-log entries older than the
// retention (archiving them first when usage.archive names a folder), at start and then
// hourly. Daily rollups and spend counters stay, so reports over whole days and balances do
// not change (rollups.ts). The sweep never holds the request path: each batch is one short
// transaction (SQLite: on the event loop's connection, never waiting for a lock; PostgreSQL:
// one DELETE), its size adapts so a batch takes about BATCH_TARGET_MS, and the event loop
// runs between batches. One process sweeps a log at a time (UsageLog.sweepAlone).

import { mkdirSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { log } from "../observability/log.js";
import type { UsageLog } from "./interfaces.js";
import { isLocked } from "./sqlite-commit.js";
import type { UsageEntry } from "./store.js";

/** usage.retention and usage.archive, compiled. */
export interface RetentionSettings {
  /** Entries older than this (ms before now) are removed. */
  readonly retentionMs: number;
  /** A folder removed entries are written to first, as gzip JSON lines; absent: none. */
  readonly archiveDir?: string;
}

/** What tests and the server may change about how the sweep runs. */
export interface SweepTiming {
  /** Between the ends of two sweeps; default an hour. */
  readonly intervalMs?: number;
  /** The clock (epoch ms); default Date.now. */
  readonly now?: () => number;
  /** The time one batch should take; default BATCH_TARGET_MS. */
  readonly batchTargetMs?: number;
  /** Entries in the first batch; default 1000. */
  readonly firstBatch?: number;
}

/** What one sweep did. */
export interface SweepResult {
  /** False when another process was sweeping the log (nothing was done). */
  readonly ran: boolean;
  readonly removed: number;
  readonly batches: number;
  /** The archive file written, when there was one and something was removed. */
  readonly archive?: string;
}

const HOUR_MS = 3_600_000;
/** A batch holds the store's write lock (SQLite: the event loop too) about this long. */
export const BATCH_TARGET_MS = 10;
const MIN_BATCH = 50;
const MAX_BATCH = 20_000;
/** SQLite locked by another connection: waited out this long between tries, this often. */
const LOCKED_RETRY_MS = 20;
const LOCKED_TRIES = 500;

/** Money and other bigints as decimal strings (JSON has no exact big number). */
function jsonLine(e: UsageEntry): string {
  return JSON.stringify(e, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value)) + "\n";
}

/** One sweep's archive file: each batch appended as a gzip member (gzip readers read the
 * members as one stream) and synced before the batch is removed. */
class Archive {
  readonly path: string;
  #written = false;

  constructor(dir: string, at: number) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, `usage-${new Date(at).toISOString().replace(/[:.]/g, "-")}.jsonl.gz`);
  }

  get written(): boolean {
    return this.#written;
  }

  readonly write = async (entries: readonly UsageEntry[]): Promise<void> => {
    const file = await open(this.path, "a");
    try {
      await file.write(gzipSync(entries.map(jsonLine).join("")));
      await file.sync();
    } finally {
      await file.close();
    }
    this.#written = true;
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RetentionSweeper {
  readonly #log: UsageLog;
  readonly #settings: RetentionSettings;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #targetMs: number;
  #batch: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<SweepResult> | undefined;
  #stopped = false;

  constructor(usageLog: UsageLog, settings: RetentionSettings, timing: SweepTiming = {}) {
    if (!usageLog.removeBefore) throw new Error("this usage log cannot remove entries");
    if (!(settings.retentionMs > 0)) throw new RangeError("the retention must be longer than 0");
    this.#log = usageLog;
    this.#settings = settings;
    this.#intervalMs = timing.intervalMs ?? HOUR_MS;
    this.#now = timing.now ?? Date.now;
    this.#targetMs = timing.batchTargetMs ?? BATCH_TARGET_MS;
    this.#batch = timing.firstBatch ?? 1000;
  }

  /** Sweeps now, then `intervalMs` after each sweep ends, until stop(). */
  start(): void {
    const next = () => {
      if (this.#stopped) return;
      this.#timer = setTimeout(() => void this.sweep().finally(next), this.#intervalMs);
      this.#timer.unref();
    };
    void this.sweep().finally(next);
  }

  /** One sweep (the one under way, if any); never rejects: a failure is logged, and the
   * next sweep tries again. */
  sweep(): Promise<SweepResult> {
    this.#running ??= this.#sweepAlone().finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #sweepAlone(): Promise<SweepResult> {
    let result: SweepResult = { ran: false, removed: 0, batches: 0 };
    try {
      const run = async () => void (result = await this.#sweep());
      if (this.#log.sweepAlone) await this.#log.sweepAlone(run);
      else await run();
    } catch (error) {
      log.error("usage log: the retention sweep failed; the next one tries again", { error: String(error) });
    }
    return result;
  }

  async #sweep(): Promise<SweepResult> {
    const startedAt = this.#now();
    const before = startedAt - this.#settings.retentionMs;
    const archive = this.#settings.archiveDir === undefined ? undefined : new Archive(this.#settings.archiveDir, startedAt);
    let removed = 0;
    let batches = 0;
    let locked = 0;
    while (!this.#stopped) {
      const t0 = performance.now();
      let n: number;
      try {
        n = await this.#log.removeBefore!(before, this.#batch, archive?.write);
      } catch (error) {
        // SQLite written by another connection right now: not a failure, try again soon.
        if (!isLocked(error) || ++locked > LOCKED_TRIES) throw error;
        await delay(LOCKED_RETRY_MS);
        continue;
      }
      this.#adapt(performance.now() - t0);
      if (n === 0) break;
      removed += n;
      batches++;
      await turn(); // requests run between batches
    }
    if (removed > 0) {
      log.info("usage log: removed entries past the retention", {
        removed, batches, before: new Date(before).toISOString(), ...(archive?.written ? { archive: archive.path } : {}),
      });
    }
    return { ran: true, removed, batches, ...(archive?.written ? { archive: archive.path } : {}) };
  }

  /** Halves a batch that took too long, doubles one well under the target. */
  #adapt(tookMs: number): void {
    if (tookMs > this.#targetMs) this.#batch = Math.max(MIN_BATCH, Math.floor(this.#batch / 2));
    else if (tookMs < this.#targetMs / 2) this.#batch = Math.min(MAX_BATCH, this.#batch * 2);
  }

  /** Stops the timer and lets a sweep under way end after its current batch. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
