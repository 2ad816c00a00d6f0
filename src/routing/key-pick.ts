// The key for a call that has no key to fail over to within itself (a realtime session, a
// video job poll or check): the next in rotation that is not out of rotation
// (key-health.ts); when every key is out, the next in turn of those out by a cooldown
// anyway, and the provider says what is wrong, as it did before the key went out. Keys an
// operator took out are used only when every key is (a job made on the channel must still
// be polled on one of its keys). A key whose credentials its kind cannot make goes out as
// the failover loop takes it out.

import { log } from "../observability/log.js";
import type { CredentialFailure } from "../providers/kind.js";
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

/** A key whose credentials the channel's kind could not make (its file refused, its token
 * endpoint refusing it) goes out of rotation, as the failover loop takes it out; a token
 * endpoint that did not answer says nothing of the key. Never rejects: health is advice. */
export async function noteCredentialFailure(keyHealth: KeyHealth, channel: Channel, key: string, err: CredentialFailure): Promise<void> {
  const index = channel.keys.indexOf(key);
  if (err.fault !== "auth" || index === -1) return;
  await keyHealth.markOut(channel, index, "auth").catch((error: unknown) => {
    log.warn("channel health not recorded", { channel: channel.name, error: String(error) });
  });
}
