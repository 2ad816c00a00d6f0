// The record of a channel key an operator took out of rotation by hand (key-control.ts
// writes it, key-health.ts routes by it): in the keyed store under the channel's name and
// the key's fingerprint (never the key), with why, who and when. Unlike a cooldown it does
// not run out, and a reload that changes the channel's other keys leaves it in place.

/** A key taken out by an operator. */
export interface ManualOut {
  /** Why, in the operator's words. */
  readonly reason: string;
  /** Who: an admin key's name, or `cli:<user>`. */
  readonly actor: string;
  /** When (epoch ms). */
  readonly at: number;
}

const PREFIX = "keyout:";

/** The store key of the record for `fingerprint` in `channel`. */
export function manualOutRecord(channel: string, fingerprint: string): string {
  return `${PREFIX}${channel}:${fingerprint}`;
}

/** The prefix of every record of `channel` (listing them finds keys no longer configured). */
export function manualOutPrefix(channel: string): string {
  return `${PREFIX}${channel}:`;
}

/** The record read back; undefined when absent or not one. */
export function parseManualOut(value: string | undefined): ManualOut | undefined {
  if (value === undefined) return undefined;
  try {
    const r = JSON.parse(value) as Partial<ManualOut>;
    return typeof r.reason === "string" && typeof r.actor === "string" && typeof r.at === "number"
      ? { reason: r.reason, actor: r.actor, at: r.at } : undefined;
  } catch {
    return undefined;
  }
}
