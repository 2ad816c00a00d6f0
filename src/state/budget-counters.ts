// Budgets in this process: per key, what requests really used in each time bucket and the
// estimates of requests in flight (held from admission until they finish). The sliding
// minute of tokens_per_minute is one kind (one-second buckets, sixty of them); a rolling
// budget (5 hours, 7 days) is another bucket size; a calendar budget (a day, a week, a
// month) counts one period per key and frees all at once when it ends. Synchronous; the
// SequentialAdmitter puts it behind the Admitter interface, and the Redis admit script
// keeps the same arithmetic (redis-holds.ts).

import type { BudgetWindow, TokenBudgetTake } from "./interfaces.js";

/** The tokens-per-minute window: usage counted at second s stops counting at second s + 60. */
export const TOKENS_WINDOW_MS = 60_000;
/** tokens_per_minute's buckets: one second each. */
export const MINUTE: BudgetWindow = { measure: "tokens", bucketMs: 1000, buckets: TOKENS_WINDOW_MS / 1000 };
/** When no usage leaving the window makes room (holds in flight fill it), a short retry:
 * holds are estimates, replaced by the (smaller) real usage as their requests finish. */
export const HELD_RETRY_MS = 1000;

/** What a finished request counts in a budget: its tokens, or its charge for a money budget. */
export function usedBy(budget: TokenBudgetTake, usedTokens: number, costNano: bigint): number {
  return budget.window?.measure === "money" ? Number(costNano) : usedTokens;
}

/** One counter: usage per bucket (oldest first), the sum of the holds in flight (each
 * holder gives back what it held: no per-request entries kept here), and its window. */
interface Counter {
  readonly used: { bucket: number; amount: number }[];
  held: number;
  readonly window: BudgetWindow;
  /** False until the usage log's past was added (budgets that are seeded). */
  seeded: boolean;
}

/** How often idle counters are dropped. */
const SWEEP_EVERY_MS = 60_000;

export class BudgetCounters {
  readonly #counters = new Map<string, Counter>();
  #lastSweep = 0;

  /** Whether the counter must first be seeded from the usage log. */
  needsSeed(key: string, window: BudgetWindow): boolean {
    return window.seed !== undefined && this.#counters.get(key)?.seeded !== true;
  }

  /** Adds what the usage log says was used, once (a second seed of the same counter is ignored). */
  seed(key: string, window: BudgetWindow, used: readonly { bucket: number; amount: number }[]): void {
    const counter = this.#counter(key, window);
    if (counter.seeded) return;
    counter.seeded = true;
    for (const u of used) if (u.amount > 0) add(counter, window.periodEndMs === undefined ? u.bucket : 0, u.amount);
  }

  /**
   * Holds `amount` when the window's usage plus the holds in flight plus `amount` stay
   * within `max`: 0. Otherwise the ms until enough usage leaves the window (the period's
   * end for a calendar budget; HELD_RETRY_MS when usage leaving cannot make room).
   */
  hold(key: string, amount: number, max: number, now: number, window: BudgetWindow = MINUTE): number {
    this.#sweep(now);
    const counter = this.#counter(key, window);
    trim(counter, now);
    const wait = retryAfter(counter, counter.held + amount - max, now);
    if (wait > 0) return wait;
    counter.held += amount;
    return 0;
  }

  /** Gives back a hold of `held` and counts `used` at `now` (0: counts nothing). */
  finish(key: string, held: number, used: number, now: number): void {
    const counter = this.#counters.get(key);
    if (!counter) return;
    counter.held = Math.max(0, counter.held - held);
    if (used <= 0) return;
    add(counter, bucketOf(counter.window, now), used);
  }

  #counter(key: string, window: BudgetWindow): Counter {
    let counter = this.#counters.get(key);
    if (!counter) {
      counter = { used: [], held: 0, window, seeded: window.seed === undefined };
      this.#counters.set(key, counter);
    }
    return counter;
  }

  /** Drops counters with no hold and nothing left in their window (a seeded one is seeded
   * again when next used: its past is in the usage log). */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    for (const [key, counter] of this.#counters) {
      trim(counter, now);
      if (counter.held === 0 && counter.used.length === 0) this.#counters.delete(key);
    }
  }
}

/** The bucket usage at `now` is counted in: a calendar period has one. */
function bucketOf(window: BudgetWindow, now: number): number {
  return window.periodEndMs === undefined ? Math.floor(now / window.bucketMs) : 0;
}

function add(counter: Counter, bucket: number, amount: number): void {
  const used = counter.used;
  const last = used[used.length - 1];
  if (last && last.bucket === bucket) last.amount += amount;
  else if (!last || last.bucket < bucket) used.push({ bucket, amount });
  else insertInOrder(used, bucket, amount); // a finish stamped earlier than the newest
}

/** Drops buckets that left the window; a calendar period's usage goes when it ends. */
function trim(counter: Counter, now: number): void {
  const { window, used } = counter;
  if (window.periodEndMs !== undefined) {
    if (now >= window.periodEndMs) used.length = 0;
    return;
  }
  const first = Math.floor(now / window.bucketMs) - window.buckets + 1;
  let gone = 0;
  while (gone < used.length && used[gone].bucket < first) gone++;
  if (gone > 0) used.splice(0, gone);
}

/**
 * With `excess` = held + amount − max: 0 when the usage fits beside them, else the ms until
 * the oldest buckets, leaving, free enough (a calendar budget: its period's end);
 * HELD_RETRY_MS when all of it leaving is not enough.
 */
function retryAfter(counter: Counter, excess: number, now: number): number {
  const { window, used } = counter;
  let need = excess;
  for (const u of used) need += u.amount;
  if (need <= 0) return 0;
  let freed = 0;
  for (const u of used) {
    freed += u.amount;
    if (freed >= need) return window.periodEndMs !== undefined ? window.periodEndMs - now : (u.bucket + window.buckets) * window.bucketMs - now;
  }
  return HELD_RETRY_MS;
}

function insertInOrder(used: { bucket: number; amount: number }[], bucket: number, amount: number): void {
  const i = used.findIndex((u) => u.bucket >= bucket);
  if (used[i].bucket === bucket) used[i].amount += amount;
  else used.splice(i, 0, { bucket, amount });
}
