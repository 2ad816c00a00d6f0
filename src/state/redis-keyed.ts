// The keyed store on Redis: plain strings with PX TTLs, shared by every process, so a
// session keeps its channel and any instance answers a video poll. A read that refreshes
// is one GETEX; listing walks SCAN MATCH on the (glob-escaped) prefix.

import type { Redis } from "ioredis";
import type { KeyedStore } from "./interfaces.js";

/** Keys fetched per SCAN step (a hint to Redis, not a bound). */
const SCAN_COUNT = 200;

export class RedisKeyedStore implements KeyedStore {
  readonly #client: Redis;
  readonly #prefix: string;

  constructor(client: Redis, keyPrefix: string) {
    this.#client = client;
    this.#prefix = `${keyPrefix}kv:`;
  }

  async get(key: string, opts?: { readonly refreshTtlMs?: number }): Promise<string | undefined> {
    const full = this.#prefix + key;
    const ttl = opts?.refreshTtlMs;
    const value = ttl === undefined ? await this.#client.get(full) : await this.#client.getex(full, "PX", positive(ttl));
    return value ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.#client.set(this.#prefix + key, value, "PX", positive(ttlMs));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.#client.set(this.#prefix + key, value, "PX", positive(ttlMs), "NX")) === "OK";
  }

  async delete(key: string): Promise<void> {
    await this.#client.del(this.#prefix + key);
  }

  async *entries(prefix: string): AsyncIterable<readonly [key: string, value: string]> {
    const match = `${escapeGlob(this.#prefix + prefix)}*`;
    const seen = new Set<string>(); // SCAN may return a key twice
    let cursor = "0";
    do {
      const [next, found] = await this.#client.scan(cursor, "MATCH", match, "COUNT", SCAN_COUNT);
      cursor = next;
      const keys = found.filter((k) => !seen.has(k));
      for (const k of keys) seen.add(k);
      if (keys.length === 0) continue;
      const values = await this.#client.mget(...keys);
      for (let i = 0; i < keys.length; i++) {
        const value = values[i];
        if (value !== null) yield [keys[i].slice(this.#prefix.length), value]; // expired since the scan
      }
    } while (cursor !== "0");
  }
}

/** Redis glob specials (`* ? [ ] \`) matched literally. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}

/** PX must be a positive integer. */
function positive(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}
