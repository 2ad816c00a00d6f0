// Channel health: a channel that keeps failing is tried last for a while (a circuit
// breaker), so requests stop paying its timeouts first. It is never excluded: when every
// better channel fails, a cooling channel is still tried. State is keyed by channel name,
// so it outlives reloads.

import { log } from "../observability/log.js";

/** Consecutive failures that put a channel on cooldown. */
const FAILURES_TO_COOL = 3;
/** First cooldown; each further failure while cooling doubles it, up to the maximum. */
const COOLDOWN_MS = 10_000;
const MAX_COOLDOWN_MS = 5 * 60_000;

interface Health {
  failures: number;
  coolUntil: number;
}

const channels = new Map<string, Health>();

/** Records an attempt that failed over (connection error, 429, 401/403, 5xx). */
export function recordFailure(channel: string, now = Date.now()): void {
  const h = channels.get(channel) ?? { failures: 0, coolUntil: 0 };
  h.failures++;
  if (h.failures >= FAILURES_TO_COOL) {
    const doublings = Math.min(h.failures - FAILURES_TO_COOL, 10);
    const ms = Math.min(COOLDOWN_MS * 2 ** doublings, MAX_COOLDOWN_MS);
    if (h.coolUntil <= now) log.warn("channel cooling down after repeated failures", { channel, failures: h.failures, ms });
    h.coolUntil = now + ms;
  }
  channels.set(channel, h);
}

/** Records an answer from the channel (anything but a failover status). */
export function recordSuccess(channel: string): void {
  if (channels.size > 0) channels.delete(channel);
}

/** Whether the channel is cooling down after repeated failures. */
export function isCooling(channel: string, now = Date.now()): boolean {
  const h = channels.get(channel);
  return h !== undefined && h.coolUntil > now;
}

/** Moves cooling channels to the end of a plan, keeping the order otherwise. */
export function coolingLast<T extends { readonly name: string }>(plan: T[], now = Date.now()): T[] {
  if (channels.size === 0) return plan;
  const healthy: T[] = [];
  const cooling: T[] = [];
  for (const c of plan) (isCooling(c.name, now) ? cooling : healthy).push(c);
  return cooling.length === 0 ? plan : healthy.concat(cooling);
}

/** Forgets all health state (tests). */
export function resetHealth(): void {
  channels.clear();
}
