// Channel health: a channel that keeps failing is tried last for a while (a circuit
// breaker), so requests stop paying its timeouts first. It is never excluded: when every
// better channel fails, a cooling channel is still tried. Its consecutive failures and
// cooldown live in the keyed store (`health:` keys) by channel name, so they outlive
// reloads and, on a shared store, every gateway sees them. On a shared store each server
// reads a channel's record at most once per `freshMs` (refreshed in the background while the
// old one serves), so a healthy channel costs no round trip per request.

import { log } from "../observability/log.js";
import type { KeyedStore } from "../state/interfaces.js";
import { FreshReads } from "./fresh-reads.js";

/** Consecutive failures that put a channel on cooldown. */
const FAILURES_TO_COOL = 3;
/** First cooldown; each further failure while cooling doubles it, up to the maximum. */
const COOLDOWN_MS = 10_000;
const MAX_COOLDOWN_MS = 5 * 60_000;
/** A failure count with no further failure for this long is forgotten. */
const FORGET_AFTER_MS = 3600_000;

const PREFIX = "health:";

interface Health {
  failures: number;
  coolUntil: number;
}

function parsed(value: string | undefined): Health | undefined {
  return value === undefined ? undefined : (JSON.parse(value) as Health);
}

function cooling(h: Health | undefined, now: number): boolean {
  return h !== undefined && h.coolUntil > now;
}

/** A channel's record as this server last read or wrote it. */

export class ChannelHealth {
  readonly #keyed: KeyedStore;
  /** By channel name. */
  readonly #seen: FreshReads<Health | undefined>;

  /** @param freshMs how long a record read from a shared store is used before reading it again (0: the store is local) */
  constructor(keyed: KeyedStore, { freshMs = 0 }: { readonly freshMs?: number } = {}) {
    this.#keyed = keyed;
    this.#seen = new FreshReads(freshMs);
  }

  async #read(channel: string): Promise<Health | undefined> {
    return parsed(await this.#keyed.get(PREFIX + channel));
  }

  /** Records an attempt that failed over (connection error, 429, 401/403, 5xx). */
  async recordFailure(channel: string, now = Date.now()): Promise<void> {
    const h = (await this.#read(channel)) ?? { failures: 0, coolUntil: 0 };
    h.failures++;
    if (h.failures >= FAILURES_TO_COOL) {
      const doublings = Math.min(h.failures - FAILURES_TO_COOL, 10);
      const ms = Math.min(COOLDOWN_MS * 2 ** doublings, MAX_COOLDOWN_MS);
      if (h.coolUntil <= now) log.warn("channel cooling down after repeated failures", { channel, failures: h.failures, ms });
      h.coolUntil = now + ms;
    }
    await this.#keyed.set(PREFIX + channel, JSON.stringify(h), Math.max(h.coolUntil - now, 0) + FORGET_AFTER_MS);
    this.#seen.set(channel, h, now);
  }

  /** Records an answer from the channel (anything but a failover status): its failures are
   * forgotten. Nothing to write when this server saw no record lately. */
  async recordSuccess(channel: string, now = Date.now()): Promise<void> {
    const seen = this.#seen.fresh(channel, now);
    if (seen && seen.value === undefined) return;
    await this.#keyed.delete(PREFIX + channel);
    this.#seen.set(channel, undefined, now);
  }

  /** Whether the channel is cooling down after repeated failures. */
  async isCooling(channel: string, now = Date.now()): Promise<boolean> {
    return cooling(parsed(await this.#keyed.get(PREFIX + channel)), now);
  }

  /** Moves cooling channels to the end of a plan, keeping the order otherwise; the same
   * array when none is cooling. */
  async coolingLast<T extends { readonly name: string }>(plan: T[], now = Date.now()): Promise<T[]> {
    if (plan.length === 0) return plan;
    const known = plan.map((c) => this.#view(c.name, now));
    // Never read yet: read together, one round trip's wait whatever the plan's length.
    const records = known.some((h) => h instanceof Promise) ? await Promise.all(known) : known as (Health | undefined)[];
    if (records.every((h) => h === undefined)) return plan;
    const cool = records.map((h) => cooling(h, now));
    if (!cool.includes(true)) return plan;
    return plan.filter((_, i) => !cool[i]).concat(plan.filter((_, i) => cool[i]));
  }

  /** The record to route by. Health only orders the plan: a store unreachable now means
   * no record known. */
  #view(channel: string, now: number): Health | undefined | Promise<Health | undefined> {
    const health = this.#seen.get(channel, () => this.#read(channel), now);
    return health instanceof Promise ? health.catch(() => undefined) : health;
  }

  /** Forgets every channel's health (tests). */
  async forget(): Promise<void> {
    this.#seen.clear();
    for await (const [key] of this.#keyed.entries(PREFIX)) await this.#keyed.delete(key);
  }
}
