// Rotates a channel's upstream keys round-robin. The counters are keyed by channel name,
// so rotation continues across config reloads; one rotation per server (each process
// rotates on its own: spreading load needs no agreement between processes).

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
}
