// Rotates a channel's upstream keys round-robin. The counters are keyed by channel name,
// so rotation continues across config reloads; one rotation per server (each process
// rotates on its own: spreading load needs no agreement between processes). Keys out of
// rotation (key-health.ts) are skipped by `pick`.

import type { Channel } from "../runtime/types.js";

export class KeyRotation {
  readonly #cursors = new Map<string, number>();

  /** The key to use for the next request on this channel. */
  next(channel: Channel): string {
    const keys = channel.keys;
    if (keys.length === 1) return keys[0];
    const i = this.#cursors.get(channel.name) ?? 0;
    this.#cursors.set(channel.name, (i + 1) % keys.length);
    return keys[i % keys.length];
  }

  /** The index of the next key in turn that `usable` accepts; undefined when none does. */
  pick(channel: Channel, usable: (index: number) => boolean): number | undefined {
    const n = channel.keys.length;
    if (n === 1) return usable(0) ? 0 : undefined;
    const start = this.#cursors.get(channel.name) ?? 0;
    for (let step = 0; step < n; step++) {
      const i = (start + step) % n;
      if (!usable(i)) continue;
      this.#cursors.set(channel.name, (i + 1) % n);
      return i;
    }
    return undefined;
  }
}
