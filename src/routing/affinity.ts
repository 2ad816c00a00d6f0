// Session affinity: a session keeps the channel that first served it, so the upstream's
// prompt cache keeps hitting. Bindings are keyed by names (token, model, session), live in
// the keyed store (`aff:` keys) with a TTL refreshed on use, and outlive config reloads.

import type { KeyedStore } from "../state/interfaces.js";

/** Longest session id taken from a request; longer ones are not used for affinity. */
const MAX_SESSION_LENGTH = 256;

const PREFIX = "aff:";

/** The session a request names: header x-gateway-session-id, else the body's
 * `prompt_cache_key` (chat-completions, responses) or `metadata.user_id` (messages). */
export function sessionOf(header: string | string[] | undefined, json: Record<string, unknown> | undefined): string | undefined {
  const fromHeader = Array.isArray(header) ? header[0] : header;
  const metadata = json?.metadata;
  const candidates = [
    fromHeader,
    json?.prompt_cache_key,
    metadata && typeof metadata === "object" ? (metadata as Record<string, unknown>).user_id : undefined,
  ];
  for (const c of candidates) {
    if (typeof c === "string" && c !== "" && c.length <= MAX_SESSION_LENGTH) return c;
  }
  return undefined;
}

/** The binding key of a session: sessions are per token and model. */
export function affinityKey(token: string, model: string, session: string): string {
  return `${token}\u0000${model}\u0000${session}`;
}

/** Session bindings in a keyed store. */
export class Affinity {
  readonly #keyed: KeyedStore;

  constructor(keyed: KeyedStore) {
    this.#keyed = keyed;
  }

  /** The channel a session is bound to, restarting its TTL; undefined when unbound. */
  async bound(key: string, ttlMs: number): Promise<string | undefined> {
    const value = await this.#keyed.get(PREFIX + key, { refreshTtlMs: ttlMs });
    return value === undefined ? undefined : (JSON.parse(value) as string);
  }

  /** Binds a session to the channel that just served it with success. */
  bind(key: string, channel: string, ttlMs: number): Promise<void> {
    return this.#keyed.set(PREFIX + key, JSON.stringify(channel), ttlMs);
  }
}
