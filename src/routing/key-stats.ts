// Recent attempts per channel key, as this process saw them: how many, how many failed and
// how long they took, over the last few minutes (one bucket per minute), for
// `gateway channels` and the gateway_channel_key_recent_* gauges. In memory, bounded by the
// keys configured: a key no reload names any more drops out once its buckets are old.

/** Minutes covered. */
const MINUTES = 5;
const MINUTE_MS = 60_000;

/** One key's attempts over the window. */
export interface KeyRecent {
  readonly channel: string;
  readonly key: string;
  readonly attempts: number;
  readonly failures: number;
  /** Sum of the attempts' durations (seconds): their mean is seconds / attempts. */
  readonly seconds: number;
}

interface Bucket {
  minute: number;
  attempts: number;
  failures: number;
  seconds: number;
}

export class KeyStats {
  /** channel → key fingerprint → one bucket per minute, reused round-robin. */
  readonly #byChannel = new Map<string, Map<string, Bucket[]>>();

  /** The window this reports, for what it prints. */
  static readonly windowMs = MINUTES * MINUTE_MS;

  /** Counts one attempt on a key. */
  record(channel: string, key: string, seconds: number, failed: boolean, now = Date.now()): void {
    let keys = this.#byChannel.get(channel);
    if (keys === undefined) {
      keys = new Map();
      this.#byChannel.set(channel, keys);
    }
    let buckets = keys.get(key);
    if (buckets === undefined) {
      buckets = Array.from({ length: MINUTES }, () => ({ minute: -1, attempts: 0, failures: 0, seconds: 0 }));
      keys.set(key, buckets);
    }
    const minute = Math.floor(now / MINUTE_MS);
    const bucket = buckets[minute % MINUTES];
    if (bucket.minute !== minute) {
      bucket.minute = minute;
      bucket.attempts = bucket.failures = bucket.seconds = 0;
    }
    bucket.attempts++;
    if (failed) bucket.failures++;
    bucket.seconds += seconds;
  }

  /** Every key with attempts in the window; keys without any are forgotten. */
  recent(now = Date.now()): KeyRecent[] {
    const oldest = Math.floor(now / MINUTE_MS) - MINUTES + 1;
    const found: KeyRecent[] = [];
    for (const [channel, keys] of this.#byChannel) {
      for (const [key, buckets] of keys) {
        let attempts = 0, failures = 0, seconds = 0;
        for (const b of buckets) {
          if (b.minute < oldest) continue;
          attempts += b.attempts;
          failures += b.failures;
          seconds += b.seconds;
        }
        if (attempts === 0) keys.delete(key);
        else found.push({ channel, key, attempts, failures, seconds });
      }
      if (keys.size === 0) this.#byChannel.delete(channel);
    }
    return found;
  }
}
