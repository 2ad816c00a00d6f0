// The memory that all request bodies in flight may hold together (server.max_body_memory).
// One budget per server, injected into the body stages: max_body bounds one request, this
// bounds the sum, so a burst of uploads is refused (503) instead of growing the process.

export class BodyBudget {
  /** Most bytes all bodies may hold at once. */
  readonly limitBytes: number;
  #inUse = 0;
  #peak = 0;

  constructor(limitBytes: number) {
    this.limitBytes = limitBytes;
  }

  /** Bytes held by bodies in flight. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Most bytes held at once since the start (or the last resetPeak). */
  get peak(): number {
    return this.#peak;
  }

  /** Starts the high-water mark again from what is held now. */
  resetPeak(): void {
    this.#peak = this.#inUse;
  }

  /** Whether `bytes` would fit now (nothing is taken). */
  fits(bytes: number): boolean {
    return this.#inUse + bytes <= this.limitBytes;
  }

  /** Takes `bytes` when they fit under the limit; false, taking nothing, when they do not. */
  take(bytes: number): boolean {
    if (this.#inUse + bytes > this.limitBytes) return false;
    this.#inUse += bytes;
    if (this.#inUse > this.#peak) this.#peak = this.#inUse;
    return true;
  }

  /** Gives back bytes taken earlier. */
  give(bytes: number): void {
    this.#inUse -= bytes;
  }
}
