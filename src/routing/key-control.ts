// An operator takes one channel key out of rotation, with a reason, and puts it back, at run
// time: state in the keyed store (manual-outs.ts), not YAML, so on a shared store every
// gateway skips the key within a second (key-health.ts reads these records beside the
// cooldowns). The key is named by its fingerprint, never by the key. The CLI (on a Redis
// store) and the admin API call this.

import { log } from "../observability/log.js";
import type { Channel, Runtime } from "../runtime/types.js";
import type { KeyedStore } from "../state/interfaces.js";
import { KeyHealth, keyFingerprint, type KeyState } from "./key-health.js";
import { manualOutPrefix, manualOutRecord, parseManualOut, type ManualOut } from "./manual-outs.js";

/** A manual out has no end: the store wants a TTL, so one it will not reach. */
const KEPT_MS = 10 * 365 * 24 * 3600 * 1000;
/** The longest reason kept (one line). */
export const REASON_LIMIT = 200;

/** Why an action was refused: an unknown channel or key (404), a bad reason or actor (400). */
export class KeyControlError extends Error {
  constructor(readonly code: "unknown_channel" | "unknown_key" | "invalid_reason" | "invalid_actor", message: string) {
    super(message);
    this.name = "KeyControlError";
  }
}

/** A key an operator has out, as listed. */
export interface ManualOutEntry {
  readonly channel: string;
  readonly fingerprint: string;
  /** Whether the channel's keys (in the config now) include it. */
  readonly configured: boolean;
  readonly out: ManualOut;
}

/** A channel's keys with their states, as the admin API shows them. */
export interface ChannelKeyStates {
  readonly channel: string;
  readonly enabled: boolean;
  /** In the channel's order: out by a cooldown (`out`), by an operator (`manual`), or in. */
  readonly keys: readonly KeyState[];
}

export interface KeyControlOptions {
  readonly keyed: KeyedStore;
  /** The config in force: which channels and keys exist. */
  readonly runtime: () => Runtime;
  /** Told when a key changes, so this server's cached view is read afresh (key-health.ts). */
  readonly changed?: (channel: string) => void;
}

export class KeyControl {
  readonly #keyed: KeyedStore;
  readonly #runtime: () => Runtime;
  readonly #changed: (channel: string) => void;
  /** Reads the store each time (no view kept): what every server routes by. */
  readonly #health: KeyHealth;

  constructor(opts: KeyControlOptions) {
    this.#keyed = opts.keyed;
    this.#runtime = opts.runtime;
    this.#changed = opts.changed ?? (() => undefined);
    this.#health = new KeyHealth(opts.keyed);
  }

  /** Every key of one channel, or of every configured one, with its state read now. */
  async states(channel?: string): Promise<ChannelKeyStates[]> {
    const channels = channel === undefined ? [...this.#runtime().channels.values()] : [this.#channel(channel)];
    return Promise.all(channels.map(async (c) => ({ channel: c.name, enabled: c.enabled, keys: await this.#health.states(c) })));
  }

  /** Takes the key out of rotation until put back (again: the new reason replaces the old). */
  async takeOut(channel: string, fingerprint: string, reason: string, actor: string, now = Date.now()): Promise<ManualOut> {
    const found = this.#channel(channel);
    if (!found.keys.some((k) => keyFingerprint(k) === fingerprint)) throw unknownKey(found, fingerprint);
    const out: ManualOut = { reason: oneLine(reason, "reason"), actor: oneLine(actor, "actor"), at: now };
    await this.#keyed.set(manualOutRecord(channel, fingerprint), JSON.stringify(out), KEPT_MS);
    this.#changed(channel);
    log.warn("channel key taken out of rotation by an operator", { channel, key: fingerprint, actor: out.actor, reason: out.reason });
    return out;
  }

  /** Puts the key back; what it was out for, or undefined when it was not out. A key no
   * longer configured may be put back (its record is dropped). */
  async putBack(channel: string, fingerprint: string, actor: string): Promise<ManualOut | undefined> {
    const found = this.#channel(channel);
    const record = manualOutRecord(channel, fingerprint);
    const was = parseManualOut(await this.#keyed.get(record));
    if (!was && !found.keys.some((k) => keyFingerprint(k) === fingerprint)) throw unknownKey(found, fingerprint);
    const by = oneLine(actor, "actor");
    await this.#keyed.delete(record);
    this.#changed(channel);
    if (was) log.info("channel key put back in rotation by an operator", { channel, key: fingerprint, actor: by, wasOutFor: was.reason, outBy: was.actor });
    return was;
  }

  /** The keys out by hand: of one channel, or of every configured one. */
  async list(channel?: string): Promise<ManualOutEntry[]> {
    const channels = channel === undefined ? [...this.#runtime().channels.values()] : [this.#channel(channel)];
    const entries: ManualOutEntry[] = [];
    for (const c of channels) {
      const configured = new Set(c.keys.map(keyFingerprint));
      const prefix = manualOutPrefix(c.name);
      for await (const [key, value] of this.#keyed.entries(prefix)) {
        const out = parseManualOut(value);
        const fingerprint = key.slice(prefix.length);
        // A channel named "a" lists under "keyout:a:"; "a:b"'s records are not its.
        if (out && !fingerprint.includes(":")) entries.push({ channel: c.name, fingerprint, configured: configured.has(fingerprint), out });
      }
    }
    return entries;
  }

  #channel(name: string): Channel {
    const channel = this.#runtime().channels.get(name);
    if (!channel) {
      throw new KeyControlError("unknown_channel", `no channel named '${name}' (there are: ${[...this.#runtime().channels.keys()].join(", ") || "none"})`);
    }
    return channel;
  }
}

function unknownKey(channel: Channel, fingerprint: string): KeyControlError {
  return new KeyControlError("unknown_key",
    `channel '${channel.name}' has no key with fingerprint '${fingerprint}' (its keys: ${channel.keys.map(keyFingerprint).join(", ") || "none"})`);
}

/** Whitespace folded to single spaces; refused when empty or too long. */
function oneLine(text: string, field: "reason" | "actor"): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line === "") throw new KeyControlError(`invalid_${field}`, `${field}: must not be empty`);
  if (line.length > REASON_LIMIT) throw new KeyControlError(`invalid_${field}`, `${field}: at most ${REASON_LIMIT} characters`);
  return line;
}
