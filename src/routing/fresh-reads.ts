// Records read from the keyed store, kept per server for `freshMs` when the store is shared
// (every read a round trip): one past that age is still used while a background read
// replaces it, so a healthy channel or key costs no round trip per request; unless it is
// older than `maxAgeMs`, when the read is waited for (what an operator changes must not
// wait for traffic to refresh a view kept from long ago). With freshMs 0 (the store is in
// this process) every get reads. Bounded by the names asked for (the channels configured).

interface Seen<V> {
  value: V;
  at: number;
  /** What the value was read for (e.g. a channel's key list); another asks afresh. */
  readonly tag: unknown;
  refreshing?: Promise<void>;
}

export class FreshReads<V> {
  readonly #freshMs: number;
  readonly #maxAgeMs: number;
  readonly #seen = new Map<string, Seen<V>>();

  /** @param maxAgeMs the oldest value used while a read replaces it (default: any) */
  constructor(freshMs: number, { maxAgeMs = Number.POSITIVE_INFINITY }: { readonly maxAgeMs?: number } = {}) {
    this.#freshMs = freshMs;
    this.#maxAgeMs = Math.max(freshMs, maxAgeMs);
  }

  /** The value to use now: read (awaited) when none is kept for `tag`, else the kept one,
   * refreshed in the background once older than freshMs (the refresh awaited when it is
   * older than maxAgeMs). A failed read keeps the old value for another freshMs. */
  get(name: string, read: () => Promise<V>, now: number, tag?: unknown): V | Promise<V> {
    const seen = this.#freshMs > 0 ? this.#seen.get(name) : undefined;
    if (!seen || seen.tag !== tag) return this.#read(name, read, now, tag);
    const age = now - seen.at;
    if (age < this.#freshMs) return seen.value;
    seen.refreshing ??= this.#read(name, read, now, tag).then(() => undefined, () => {
      seen.at = now;
      seen.refreshing = undefined;
    });
    if (age < this.#maxAgeMs) return seen.value;
    // The value read (a new entry replaced this one), else the old one when the read failed.
    return seen.refreshing.then(() => this.kept(name, tag) ?? seen.value);
  }

  /** The value kept for `name` and `tag` while it is fresh (this server wrote or read it
   * within freshMs), else undefined. */
  fresh(name: string, now: number, tag?: unknown): { value: V } | undefined {
    const seen = this.#freshMs > 0 ? this.#seen.get(name) : undefined;
    return seen && seen.tag === tag && now - seen.at < this.#freshMs ? { value: seen.value } : undefined;
  }

  /** The value kept for `name` and `tag`, whatever its age (to update it in place). */
  kept(name: string, tag?: unknown): V | undefined {
    const seen = this.#seen.get(name);
    return seen && seen.tag === tag ? seen.value : undefined;
  }

  /** What this server just wrote: kept as read at `at`. */
  set(name: string, value: V, at: number, tag?: unknown): void {
    if (this.#freshMs > 0) this.#seen.set(name, { value, at, tag });
  }

  /** Forgets the value kept for `name`: the next get reads it. */
  drop(name: string): void {
    this.#seen.delete(name);
  }

  clear(): void {
    this.#seen.clear();
  }

  async #read(name: string, read: () => Promise<V>, now: number, tag: unknown): Promise<V> {
    const value = await read();
    this.set(name, value, now, tag);
    return value;
  }
}
