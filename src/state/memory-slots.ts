// Concurrency limits in this process: per key, how many requests in flight hold one of its
// slots. A count, not the requests' ids: a long-lived set of per-request values costs
// every request once it reaches V8's old generation (bench/RESULTS.md). Synchronous; the
// SequentialAdmitter puts it behind the Admitter and frees each slot it took once.

export class MemorySlots {
  readonly #inFlight = new Map<string, number>();

  /** Takes a slot when fewer than `max` are held; whether it did. */
  take(key: string, max: number): boolean {
    const held = this.#inFlight.get(key) ?? 0;
    if (held >= max) return false;
    this.#inFlight.set(key, held + 1);
    return true;
  }

  /** Frees one slot taken before. */
  free(key: string): void {
    const held = this.#inFlight.get(key) ?? 0;
    if (held <= 1) this.#inFlight.delete(key);
    else this.#inFlight.set(key, held - 1);
  }
}
