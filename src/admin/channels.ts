// The channels routes: each channel's keys with their state (in rotation, cooling down after a
// provider refused them, or taken out by an operator), and an operator taking one key out with
// a reason and putting it back. Keys are named by their fingerprint, never shown. Each action
// is written to the audit log.

import { InvalidField } from "../accounts/money-input.js";
import { NotFound } from "../accounts/store.js";
import type { KeyState } from "../routing/key-health.js";
import { KeyControlError, type ChannelKeyStates } from "../routing/key-control.js";
import type { AdminRoute } from "./route.js";

interface KeyOutBody {
  readonly reason: string;
}

const keyPath = "/admin/v1/channels/{channel}/keys/{fingerprint}";

/** A key as the API shows it. */
export function keyView(k: KeyState): Record<string, unknown> {
  const state = k.manual ? "taken_out" : k.out ? "cooling_down" : "in_rotation";
  return {
    fingerprint: k.fingerprint, state,
    ...(k.out ? { cooldown: { reason: k.out.reason, until: new Date(k.out.until).toISOString() } } : {}),
    ...(k.manual ? { taken_out: { reason: k.manual.reason, actor: k.manual.actor, at: new Date(k.manual.at).toISOString() } } : {}),
  };
}

function channelView(c: ChannelKeyStates): Record<string, unknown> {
  return { channel: c.channel, enabled: c.enabled, keys: c.keys.map(keyView) };
}

/** KeyControl's refusals as the API answers them: unknown names 404, a bad reason 400. */
export async function controlled<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    if (!(err instanceof KeyControlError)) throw err;
    if (err.code === "unknown_channel") throw new NotFound("channel", err.message);
    if (err.code === "unknown_key") throw new NotFound("key", err.message);
    throw new InvalidField(err.code === "invalid_reason" ? "reason" : "actor", err.message);
  }
}

/** The key's state now (after an action). */
async function stateOf(deps: Parameters<AdminRoute["handle"]>[0]["deps"], channel: string, fingerprint: string): Promise<Record<string, unknown>> {
  const [c] = await deps.keyControl.states(channel);
  const key = c?.keys.find((k) => k.fingerprint === fingerprint);
  return { channel, ...(key ? keyView(key) : { fingerprint, state: "unknown" }) };
}

export const channelRoutes: readonly AdminRoute[] = [
  {
    method: "GET", path: "/admin/v1/channels", operationId: "listChannels", scope: "read",
    summary: "Lists the channels with each key's state: in rotation, cooling down after the provider refused it (and until when), or taken out by an operator (who, when, why).",
    responses: { 200: "ChannelList" },
    async handle({ deps }) {
      const channels = await deps.keyControl.states();
      return { status: 200, body: { data: channels.map(channelView) } };
    },
  },
  {
    method: "POST", path: `${keyPath}/out`, operationId: "takeKeyOut", scope: "write",
    summary: "Takes one key of a channel out of rotation, on every gateway sharing the store within a second, until it is put back. The reason is kept and shown.",
    body: "KeyOut", responses: { 200: "ChannelKey" },
    async handle({ params, body, actor, deps }) {
      const { reason } = body as KeyOutBody;
      const before = await controlled(() => stateOf(deps, params.channel, params.fingerprint));
      await controlled(() => deps.keyControl.takeOut(params.channel, params.fingerprint, reason, actor.actor));
      const after = await stateOf(deps, params.channel, params.fingerprint);
      await deps.store.recordAudit(actor, "key.take_out", `${params.channel}/${params.fingerprint}`, before, after);
      return { status: 200, body: after };
    },
  },
  {
    method: "POST", path: `${keyPath}/in`, operationId: "putKeyBack", scope: "write",
    summary: "Puts a key an operator took out back in rotation (a provider's cooldown, if any, still runs its course).",
    responses: { 200: "ChannelKey" },
    async handle({ params, actor, deps }) {
      const before = await controlled(() => stateOf(deps, params.channel, params.fingerprint));
      await controlled(() => deps.keyControl.putBack(params.channel, params.fingerprint, actor.actor));
      const after = await stateOf(deps, params.channel, params.fingerprint);
      await deps.store.recordAudit(actor, "key.put_back", `${params.channel}/${params.fingerprint}`, before, after);
      return { status: 200, body: after };
    },
  },
];
