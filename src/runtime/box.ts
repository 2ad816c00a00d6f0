// Holds the live Runtime. A request reads it once and keeps that reference, so a swap
// never changes the config under a request in flight.

import type { Runtime } from "./types.js";

export class RuntimeBox {
  #current: Runtime;

  constructor(initial: Runtime) {
    this.#current = initial;
  }

  /** The Runtime new requests should use. */
  get current(): Runtime {
    return this.#current;
  }

  /** Installs the next Runtime and returns the one it replaced. */
  swap(next: Runtime): Runtime {
    const previous = this.#current;
    this.#current = next;
    return previous;
  }
}
