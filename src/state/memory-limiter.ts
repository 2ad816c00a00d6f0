// Rate windows in this process: the exact sliding log behind the asynchronous interface,
// answering with promises already settled.

import { SlidingLog } from "./sliding-log.js";
import type { RateWindow } from "../runtime/types.js";
import type { Admission, Hit, Limiter } from "./interfaces.js";

const resolved = Promise.resolve();

export class MemoryLimiter implements Limiter {
  readonly #log = new SlidingLog();

  take(key: string, window: RateWindow, now: number): Promise<Admission> {
    return Promise.resolve(this.#log.take(key, window, now));
  }

  refund(key: string, hit: Hit): Promise<void> {
    this.#log.refund(key, hit);
    return resolved;
  }
}
