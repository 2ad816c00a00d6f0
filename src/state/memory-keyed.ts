// The keyed store in this process: an LRU with a time to live per key. Bounded: past
// `max` entries the least recently used go first.

import { LRUCache } from "lru-cache";
import type { KeyedStore } from "./interfaces.js";

/** Most entries kept by default (affinity, health and jobs together). */
export const DEFAULT_MAX_KEYS = 300_000;

const resolved = Promise.resolve();

export class MemoryKeyedStore implements KeyedStore {
  readonly #cache: LRUCache<string, string>;

  constructor(max = DEFAULT_MAX_KEYS) {
    this.#cache = new LRUCache<string, string>({ max, ttlAutopurge: false });
  }

  get(key: string, opts?: { readonly refreshTtlMs?: number }): Promise<string | undefined> {
    const value = this.#cache.get(key);
    if (value !== undefined && opts?.refreshTtlMs !== undefined) this.#cache.set(key, value, { ttl: opts.refreshTtlMs });
    return Promise.resolve(value);
  }

  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    // The cache's get drops an expired value: absent then, as on Redis.
    if (this.#cache.get(key) !== undefined) return Promise.resolve(false);
    this.#cache.set(key, value, { ttl: ttlMs });
    return Promise.resolve(true);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#cache.set(key, value, { ttl: ttlMs });
    return resolved;
  }

  delete(key: string): Promise<void> {
    this.#cache.delete(key);
    return resolved;
  }

  async *entries(prefix: string): AsyncIterable<readonly [key: string, value: string]> {
    // Collected first: the caller may write to the store between two steps.
    const found: [string, string][] = [];
    for (const [key, value] of this.#cache.entries()) if (key.startsWith(prefix)) found.push([key, value]);
    yield* found;
  }
}
