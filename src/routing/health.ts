// Channel health: a channel that keeps failing is tried last for a while (a circuit
// breaker), so requests stop paying its timeouts first. It is never excluded: when every
// better channel fails, a cooling channel is still tried. Its consecutive failures and
// cooldown live in the keyed store (`health:` keys) by channel name, so they outlive
// reloads and, on a shared store, every gateway sees them.

import { log } from "../observability/log.js";
import type { KeyedStore } from "../state/interfaces.js";

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

export class ChannelHealth {
  readonly #keyed: KeyedStore;

  constructor(keyed: KeyedStore) {
    this.#keyed = keyed;
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
  }

  /** Records an answer from the channel (anything but a failover status). */
  recordSuccess(channel: string): Promise<void> {
    return this.#keyed.delete(PREFIX + channel);
  }

  /** Whether the channel is cooling down after repeated failures. */
  async isCooling(channel: string, now = Date.now()): Promise<boolean> {
    return cooling(parsed(await this.#keyed.get(PREFIX + channel)), now);
  }

  /** Moves cooling channels to the end of a plan, keeping the order otherwise; the same
   * array when none is cooling. */
  async coolingLast<T extends { readonly name: string }>(plan: T[], now = Date.now()): Promise<T[]> {
    if (plan.length === 0) return plan;
    // Read together: one round trip's wait on a shared store, whatever the plan's length.
    const values = await Promise.all(plan.map((c) => this.#keyed.get(PREFIX + c.name)));
    if (values.every((v) => v === undefined)) return plan;
    const cool = values.map((v) => cooling(parsed(v), now));
    if (!cool.includes(true)) return plan;
    return plan.filter((_, i) => !cool[i]).concat(plan.filter((_, i) => cool[i]));
  }

  /** Forgets every channel's health (tests). */
  async forget(): Promise<void> {
    for await (const [key] of this.#keyed.entries(PREFIX)) await this.#keyed.delete(key);
  }
}
