// Session affinity: a session keeps the channel that first served it, so the upstream's
// prompt cache keeps hitting. Bindings are keyed by names (token, model, session), live in
// an LRU with a TTL refreshed on use, and outlive config reloads.

import { LRUCache } from "lru-cache";

/** Most bindings kept; the least recently used go first. */
const MAX_BINDINGS = 100_000;
/** Longest session id taken from a request; longer ones are not used for affinity. */
const MAX_SESSION_LENGTH = 256;

const bindings = new LRUCache<string, string>({ max: MAX_BINDINGS, updateAgeOnGet: true });

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

/** The channel a session is bound to, refreshing its TTL; undefined when unbound. */
export function boundChannel(key: string): string | undefined {
  return bindings.get(key);
}

/** Binds a session to the channel that just served it with success. */
export function bindChannel(key: string, channel: string, ttlMs: number): void {
  bindings.set(key, channel, { ttl: ttlMs });
}

/** Forgets every binding (tests). */
export function clearAffinity(): void {
  bindings.clear();
}
