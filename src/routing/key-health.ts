// Key health: a channel key the provider refused (401/403, an invalid-key answer) or whose
// account is out of credit or quota is out of rotation until its cooldown
// (channels[].key_cooldown) passes. The record lives in the keyed store, one per key, with
// the cooldown as its TTL, so every gateway on a shared store takes the key out together
// and it comes back by itself. A record is named by the channel, a fingerprint of the
// channel's whole key list and the key's own fingerprint: a reload that changes the
// channel's keys starts them all afresh, and no record holds a key. On a shared store each
// server reads a channel's records at most once per `freshMs` (refreshed in the background
// while the old ones serve), so a healthy key costs no round trip per request.

import { createHash } from "node:crypto";
import { log } from "../observability/log.js";
import type { KeyFault } from "../providers/provider.js";
import type { Channel } from "../runtime/types.js";
import type { KeyedStore } from "../state/interfaces.js";
import { FreshReads } from "./fresh-reads.js";

const PREFIX = "keyhealth:";

/** A key out of rotation: why, and until when (epoch ms). */
export interface KeyOut {
  readonly reason: KeyFault;
  readonly until: number;
}

/** One key of a channel as `gateway channels` and /metrics report it. */
export interface KeyState {
  /** keyFingerprint(key): never the key. */
  readonly fingerprint: string;
  /** Set while the key is out of rotation. */
  readonly out?: KeyOut;
}

/** Short and stable, and says nothing of the key: the first 4 and last 4 hex digits of
 * sha256(key). */
export function keyFingerprint(key: string): string {
  const hex = createHash("sha256").update(key).digest("hex");
  return hex.slice(0, 4) + hex.slice(-4);
}

/** What names a channel's key records, computed once per compiled channel. */
interface ChannelKeys {
  readonly fingerprints: readonly string[];
  /** The store key of each key's record. */
  readonly records: readonly string[];
}


function parsed(value: string | undefined): KeyOut | undefined {
  if (value === undefined) return undefined;
  const record = JSON.parse(value) as Partial<KeyOut>;
  return (record.reason === "auth" || record.reason === "quota") && typeof record.until === "number"
    ? { reason: record.reason, until: record.until } : undefined;
}

/** Whether a key is out of rotation at `now`. */
export function isOut(out: KeyOut | undefined, now: number): boolean {
  return out !== undefined && out.until > now;
}

export class KeyHealth {
  readonly #keyed: KeyedStore;
  /** By compiled channel: a reload's new channels get their own. */
  readonly #names = new WeakMap<Channel, ChannelKeys>();
  /** By channel name, read for the channel's record names (a reload's key list reads afresh). */
  readonly #seen: FreshReads<(KeyOut | undefined)[]>;

  /** @param freshMs how long records read from a shared store are used before reading them again (0: the store is local) */
  constructor(keyed: KeyedStore, { freshMs = 0 }: { readonly freshMs?: number } = {}) {
    this.#keyed = keyed;
    this.#seen = new FreshReads(freshMs);
  }

  /** The fingerprints of the channel's keys, in its order. */
  fingerprints(channel: Channel): readonly string[] {
    return this.#namesOf(channel).fingerprints;
  }

  #namesOf(channel: Channel): ChannelKeys {
    let names = this.#names.get(channel);
    if (!names) {
      const fingerprints = channel.keys.map(keyFingerprint);
      const keySet = keyFingerprint(channel.keys.join("\n"));
      names = { fingerprints, records: fingerprints.map((fp) => `${PREFIX}${channel.name}:${keySet}:${fp}`) };
      this.#names.set(channel, names);
    }
    return names;
  }

  /** Each key's record to route by (index = the key's index; undefined: in rotation; an
   * expired one may linger in a cached view: check with isOut). Read now when the store is
   * local or this server has not read the channel yet; else the view seen last, refreshed
   * in the background once it is older than freshMs. */
  view(channel: Channel, now = Date.now()): readonly (KeyOut | undefined)[] | Promise<readonly (KeyOut | undefined)[]> {
    const { records } = this.#namesOf(channel);
    return this.#seen.get(channel.name, () => this.#read(records), now, records);
  }

  /** Takes the key at `index` out of rotation for the channel's cooldown for `reason`. */
  async markOut(channel: Channel, index: number, reason: KeyFault, now = Date.now()): Promise<void> {
    const { fingerprints, records } = this.#namesOf(channel);
    const cooldownMs = channel.keyCooldownMs[reason];
    const out: KeyOut = { reason, until: now + cooldownMs };
    log.warn("channel key out of rotation", { channel: channel.name, key: fingerprints[index], reason, cooldownMs });
    // This server routes by it at once, whatever its kept view's age.
    const seen = this.#seen.kept(channel.name, records);
    if (seen) seen[index] = out;
    if (cooldownMs <= 0) return;
    await this.#keyed.set(records[index], JSON.stringify(out), cooldownMs);
  }

  /** Every key of the channel with its state, read from the store now (the CLI, /metrics). */
  async states(channel: Channel, now = Date.now()): Promise<KeyState[]> {
    const { fingerprints, records } = this.#namesOf(channel);
    const outs = await Promise.all(records.map(async (r) => parsed(await this.#keyed.get(r))));
    return fingerprints.map((fingerprint, i) => (isOut(outs[i], now) ? { fingerprint, out: outs[i] } : { fingerprint }));
  }

  /** Every key's record, read together: one round trip's wait whatever the number of keys. */
  #read(records: readonly string[]): Promise<(KeyOut | undefined)[]> {
    return Promise.all(records.map(async (r) => parsed(await this.#keyed.get(r))));
  }

  /** Forgets every key's health (tests). */
  async forget(): Promise<void> {
    this.#seen.clear();
    for await (const [key] of this.#keyed.entries(PREFIX)) await this.#keyed.delete(key);
  }
}
