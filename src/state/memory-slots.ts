// Concurrency limits in this process: per key, the ids of the requests in flight that hold
// one of its slots. Synchronous; the SequentialAdmitter puts it behind the Admitter.

export class MemorySlots {
  readonly #inFlight = new Map<string, Set<string>>();

  /** Takes a slot for `requestId` when fewer than `max` are held; whether it did. */
  take(key: string, requestId: string, max: number): boolean {
    let held = this.#inFlight.get(key);
    if (!held) {
      held = new Set();
      this.#inFlight.set(key, held);
    }
    if (held.size >= max) return false;
    held.add(requestId);
    return true;
  }

  /** Frees the request's slot (freeing twice is harmless). */
  free(key: string, requestId: string): void {
    const held = this.#inFlight.get(key);
    if (!held) return;
    held.delete(requestId);
    if (held.size === 0) this.#inFlight.delete(key);
  }
}
