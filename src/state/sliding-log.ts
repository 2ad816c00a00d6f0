// An exact sliding-window log: per key, the timestamps of the hits still inside the
// window (at most `max` of them), oldest first. Memory is bounded by max × active keys.
// Synchronous, for one process; state/memory-limiter.ts puts it behind the Limiter interface.

import type { RateWindow } from "../runtime/types.js";
import type { Admission } from "./interfaces.js";

interface Log {
  perMs: number;
  stamps: number[];
}

/** How often idle keys are swept out. */
const SWEEP_EVERY_MS = 60_000;

export class SlidingLog {
  readonly #logs = new Map<string, Log>();
  #lastSweep = 0;

  take(key: string, window: RateWindow, now: number): Admission {
    this.#sweep(now);
    let log = this.#logs.get(key);
    if (!log) {
      log = { perMs: window.perMs, stamps: [] };
      this.#logs.set(key, log);
    }
    log.perMs = window.perMs;
    const stamps = log.stamps;
    const horizon = now - window.perMs;
    let expired = 0;
    while (expired < stamps.length && stamps[expired] <= horizon) expired++;
    if (expired > 0) stamps.splice(0, expired);
    if (stamps.length >= window.max) {
      return { ok: false, retryAfterMs: Math.max(1, stamps[stamps.length - window.max] + window.perMs - now) };
    }
    // Keep stamps unique and ordered so a refund removes exactly this hit.
    const last = stamps[stamps.length - 1];
    const hit = last !== undefined && last >= now ? last + 1e-3 : now;
    stamps.push(hit);
    return { ok: true, hit };
  }

  refund(key: string, hit: number): void {
    const stamps = this.#logs.get(key)?.stamps;
    if (!stamps) return;
    const i = stamps.lastIndexOf(hit);
    if (i !== -1) stamps.splice(i, 1);
  }

  /** Drops keys whose newest hit has left their window. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    for (const [key, log] of this.#logs) {
      const newest = log.stamps[log.stamps.length - 1];
      if (newest === undefined || newest <= now - log.perMs) this.#logs.delete(key);
    }
  }
}
