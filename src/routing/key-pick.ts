// The key for a call that has no key to fail over to within itself (a realtime session, a
// video job poll or check): the next in rotation that is not out of rotation
// (key-health.ts); when every key is out, the next in turn of those out by a cooldown
// anyway, and the provider says what is wrong, as it did before the key went out. Keys an
// operator took out are used only when every key is (a job made on the channel must still
// be polled on one of its keys).

import type { Channel } from "../runtime/types.js";
import { isOut, type KeyHealth } from "./key-health.js";
import type { KeyRotation } from "./keys.js";

export async function keyInRotation(keys: KeyRotation, keyHealth: KeyHealth, channel: Channel, now = Date.now()): Promise<string> {
  const viewed = keyHealth.view(channel, now);
  // Unreadable now (a shared store lost): rotate as if every key were in.
  const outs = viewed instanceof Promise ? await viewed.catch(() => []) : viewed;
  const index = keys.pick(channel, (i) => !isOut(outs[i], now)) ?? keys.pick(channel, (i) => outs[i]?.reason !== "manual");
  return index === undefined ? keys.next(channel) : channel.keys[index];
}
