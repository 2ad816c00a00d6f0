// Rate limiting as one small interface: admit a hit in a sliding window, or say how long
// until one fits. Implementations: in-memory sliding log (this process); shared ones later.

import type { RateWindow } from "../runtime/types.js";

/** A hit that was admitted; pass it back to refund it. */
export type Hit = number;

export type Admission =
  | { readonly ok: true; readonly hit: Hit }
  | { readonly ok: false; readonly retryAfterMs: number };

export interface Limiter {
  /** Admits one hit for `key` if fewer than `window.max` fall within the last `window.perMs`. */
  take(key: string, window: RateWindow, now: number): Admission;
  /** Takes back an admitted hit (e.g. a request that failed, for a success-only window). */
  refund(key: string, hit: Hit): void;
}
