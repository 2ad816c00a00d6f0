// Tokens-per-minute budgets in this process: per key, the tokens requests really used in
// the last minute (one-second buckets) and the estimates of requests in flight (held from
// admission until they finish). Synchronous; the SequentialAdmitter puts it behind the
// Admitter interface, and the Redis admit script keeps the same arithmetic (redis-holds.ts).

/** The budgets' window: usage counted at second s stops counting at second s + 60. */
export const TOKENS_WINDOW_MS = 60_000;
const BUCKET_MS = 1000;
const BUCKETS = TOKENS_WINDOW_MS / BUCKET_MS;
/** When no usage leaving the window makes room (holds in flight fill it), a short retry:
 * holds are estimates, replaced by the (smaller) real usage as their requests finish. */
export const HELD_RETRY_MS = 1000;

/** One budget: used tokens per second (oldest first) and the sum of the holds in flight
 * (each holder gives back what it held: no per-request entries kept here). */
interface Budget {
  readonly used: { second: number; tokens: number }[];
  held: number;
}

/** How often idle budgets are dropped. */
const SWEEP_EVERY_MS = 60_000;

export class MinuteTokens {
  readonly #budgets = new Map<string, Budget>();
  #lastSweep = 0;

  /**
   * Holds `tokens` when the last minute's usage plus the holds in flight
   * plus `tokens` stay within `max`: 0. Otherwise the ms until enough usage leaves the
   * window (HELD_RETRY_MS when usage leaving cannot make room).
   */
  hold(key: string, tokens: number, max: number, now: number): number {
    this.#sweep(now);
    let budget = this.#budgets.get(key);
    if (!budget) {
      budget = { used: [], held: 0 };
      this.#budgets.set(key, budget);
    }
    trim(budget, now);
    const wait = retryAfter(budget.used, budget.held + tokens - max, now);
    if (wait > 0) return wait;
    budget.held += tokens;
    return 0;
  }

  /** Gives back a hold of `held` tokens and counts `used` tokens at `now` (0: counts nothing). */
  finish(key: string, held: number, used: number, now: number): void {
    const budget = this.#budgets.get(key);
    if (!budget) return;
    budget.held = Math.max(0, budget.held - held);
    if (used <= 0) return;
    const second = Math.floor(now / BUCKET_MS);
    const last = budget.used[budget.used.length - 1];
    if (last && last.second === second) last.tokens += used;
    else if (!last || last.second < second) budget.used.push({ second, tokens: used });
    else insertInOrder(budget.used, second, used); // a finish stamped earlier than the newest
  }

  /** Drops budgets with no hold and no usage left in the window. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    for (const [key, budget] of this.#budgets) {
      trim(budget, now);
      if (budget.held === 0 && budget.used.length === 0) this.#budgets.delete(key);
    }
  }
}

/** The first second still counted at `now`. */
function firstCounted(now: number): number {
  return Math.floor(now / BUCKET_MS) - BUCKETS + 1;
}

function trim(budget: Budget, now: number): void {
  const first = firstCounted(now);
  let gone = 0;
  while (gone < budget.used.length && budget.used[gone].second < first) gone++;
  if (gone > 0) budget.used.splice(0, gone);
}

/**
 * With `used` the counted seconds, oldest first, and `excess` = held + estimate − max: 0
 * when the usage fits beside them, else the ms until the oldest seconds, leaving, free
 * enough; HELD_RETRY_MS when all of it leaving is not enough.
 */
export function retryAfter(used: readonly { second: number; tokens: number }[], excess: number, now: number): number {
  let need = excess;
  for (const u of used) need += u.tokens;
  if (need <= 0) return 0;
  let freed = 0;
  for (const u of used) {
    freed += u.tokens;
    if (freed >= need) return (u.second + BUCKETS) * BUCKET_MS - now;
  }
  return HELD_RETRY_MS;
}

function insertInOrder(used: { second: number; tokens: number }[], second: number, tokens: number): void {
  const i = used.findIndex((u) => u.second >= second);
  if (used[i].second === second) used[i].tokens += tokens;
  else used.splice(i, 0, { second, tokens });
}
