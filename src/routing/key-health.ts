// Key health: a channel key the provider refused (401/403, an invalid-key answer) or whose
// account is out of credit or quota is out of rotation until its cooldown
// (channels[].key_cooldown) passes. The record lives in the keyed store, one per key, with
// the cooldown as its TTL, so every gateway on a shared store takes the key out together
// and it comes back by itself. A record is named by the channel, a fingerprint of the
// channel's whole key list and the key's own fingerprint: a reload that changes the
// channel's keys starts them all afresh, and no record holds a key. On a shared store each
// server reads a channel's records at most once per `freshMs` (refreshed in the background
// while the old ones serve), so a healthy key costs no round trip per request; never routing
// by records older than that (a read is then waited for).
//
// Beside each key's record lies the operator's (manual-outs.ts, key-control.ts): a key
// taken out by hand is out until put back, read together with the cooldowns, so it leaves
// rotation on every server within freshMs (1 s on Redis) plus one round trip.

import { createHash } from "node:crypto";
import { log } from "../observability/log.js";
import type { KeyFault } from "../providers/provider.js";
import type { Channel } from "../runtime/types.js";
import type { KeyedStore } from "../state/interfaces.js";
import { FreshReads } from "./fresh-reads.js";
import { manualOutRecord, parseManualOut, type ManualOut } from "./manual-outs.js";

const PREFIX = "keyhealth:";

/** A key out of rotation by itself (a provider's refusal): why, and until when (epoch ms). */
export interface KeyOut {
  readonly reason: KeyFault;
  readonly until: number;
}

/** A key an operator took out: out until put back. */
export interface ManualMark {
  readonly reason: "manual";
  readonly until: number;
  readonly manual: ManualOut;
}

/** What routing reads of a key out of rotation. */
export type KeyMark = KeyOut | ManualMark;

/** One key of a channel as `gateway channels` and /metrics report it. */
export interface KeyState {
  /** keyFingerprint(key): never the key. */
  readonly fingerprint: string;
  /** Set while the key is out of rotation by its cooldown. */
  readonly out?: KeyOut;
  /** Set while an operator has it out. */
  readonly manual?: ManualOut;
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
  /** The store key of each key's manual record. */
  readonly manual: readonly string[];
}


function manualMark(value: string | undefined): ManualMark | undefined {
  const manual = parseManualOut(value);
  return manual && { reason: "manual", until: Number.POSITIVE_INFINITY, manual };
}

function parsed(value: string | undefined): KeyOut | undefined {
  if (value === undefined) return undefined;
  const record = JSON.parse(value) as Partial<KeyOut>;
  return (record.reason === "auth" || record.reason === "quota") && typeof record.until === "number"
    ? { reason: record.reason, until: record.until } : undefined;
}

/** Whether a key is out of rotation at `now`. */
export function isOut(out: KeyMark | undefined, now: number): boolean {
  return out !== undefined && out.until > now;
}

export class KeyHealth {
  readonly #keyed: KeyedStore;
  /** By compiled channel: a reload's new channels get their own. */
  readonly #names = new WeakMap<Channel, ChannelKeys>();
  /** By channel name, read for the channel's record names (a reload's key list reads afresh). */
  readonly #seen: FreshReads<(KeyMark | undefined)[]>;

  /** @param freshMs how long records read from a shared store are used before reading them again (0: the store is local) */
  constructor(keyed: KeyedStore, { freshMs = 0 }: { readonly freshMs?: number } = {}) {
    this.#keyed = keyed;
    this.#seen = new FreshReads(freshMs, { maxAgeMs: freshMs });
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
      names = {
        fingerprints, records: fingerprints.map((fp) => `${PREFIX}${channel.name}:${keySet}:${fp}`),
        manual: fingerprints.map((fp) => manualOutRecord(channel.name, fp)),
      };
      this.#names.set(channel, names);
    }
    return names;
  }

  /** Each key's record to route by (index = the key's index; undefined: in rotation; an
   * expired one may linger in a cached view: check with isOut; one taken out by an
   * operator wins over a cooldown). Read now when the store is local, this server has not
   * read the channel yet or its view is older than freshMs; else the view seen last. */
  view(channel: Channel, now = Date.now()): readonly (KeyMark | undefined)[] | Promise<readonly (KeyMark | undefined)[]> {
    const names = this.#namesOf(channel);
    return this.#seen.get(channel.name, () => this.#read(names), now, names.records);
  }

  /** Takes the key at `index` out of rotation for the channel's cooldown for `reason`. */
  async markOut(channel: Channel, index: number, reason: KeyFault, now = Date.now()): Promise<void> {
    const { fingerprints, records } = this.#namesOf(channel);
    const cooldownMs = channel.keyCooldownMs[reason];
    const out: KeyOut = { reason, until: now + cooldownMs };
    log.warn("channel key out of rotation", { channel: channel.name, key: fingerprints[index], reason, cooldownMs });
    // This server routes by it at once, whatever its kept view's age.
    const seen = this.#seen.kept(channel.name, records);
    if (seen && seen[index]?.reason !== "manual") seen[index] = out;
    if (cooldownMs <= 0) return;
    await this.#keyed.set(records[index], JSON.stringify(out), cooldownMs);
  }

  /** Puts the key at `index` back from its cooldown (a probe found it answering); a manual
   * out stays. */
  async clear(channel: Channel, index: number): Promise<void> {
    const { records } = this.#namesOf(channel);
    const seen = this.#seen.kept(channel.name, records);
    if (seen && seen[index]?.reason !== "manual") seen[index] = undefined;
    await this.#keyed.delete(records[index]);
  }

  /** Forgets this server's view of the channel, so the next request reads the store (an
   * operator changed it through this server). */
  forgetView(channelName: string): void {
    this.#seen.drop(channelName);
  }

  /** Every key of the channel with its state, read from the store now (the CLI, /metrics). */
  async states(channel: Channel, now = Date.now()): Promise<KeyState[]> {
    const { fingerprints, records, manual } = this.#namesOf(channel);
    const [outs, manuals] = await Promise.all([
      Promise.all(records.map(async (r) => parsed(await this.#keyed.get(r)))),
      Promise.all(manual.map(async (r) => parseManualOut(await this.#keyed.get(r)))),
    ]);
    return fingerprints.map((fingerprint, i) => ({
      fingerprint, ...(isOut(outs[i], now) && { out: outs[i] }), ...(manuals[i] && { manual: manuals[i] }),
    }));
  }

  /** Every key's records, read together: one round trip's wait whatever the number of keys. */
  async #read({ records, manual }: ChannelKeys): Promise<(KeyMark | undefined)[]> {
    const [outs, manuals] = await Promise.all([
      Promise.all(records.map(async (r) => parsed(await this.#keyed.get(r)))),
      Promise.all(manual.map(async (r) => manualMark(await this.#keyed.get(r)))),
    ]);
    return outs.map((out, i) => manuals[i] ?? out);
  }

  /** Forgets every key's health (tests). */
  async forget(): Promise<void> {
    this.#seen.clear();
    for await (const [key] of this.#keyed.entries(PREFIX)) await this.#keyed.delete(key);
  }
}
