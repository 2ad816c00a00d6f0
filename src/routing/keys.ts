// Rotates a channel's upstream keys round-robin. The counters are keyed by channel name,
// so rotation continues across config reloads.

import type { Channel } from "../runtime/types.js";

const cursors = new Map<string, number>();

/** The key to use for the next request on this channel. */
export function nextKey(channel: Channel): string {
  const keys = channel.keys;
  if (keys.length === 1) return keys[0];
  const i = cursors.get(channel.name) ?? 0;
  cursors.set(channel.name, (i + 1) % keys.length);
  return keys[i % keys.length];
}
