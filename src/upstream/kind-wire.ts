// The channel's kind between the exchange and the wire: the first-party request made the
// kind's own (URL, body, credentials) before it is sent, and the kind's answer read as the
// protocol's (framing, error shapes) before anything judges or relays it.

import { kindOf } from "../providers/index.js";
import { upstreamUrl } from "../providers/provider.js";
import type { WireRequest } from "../providers/kind.js";
import type { Channel } from "../runtime/types.js";
import type { UpstreamResponse } from "./send.js";

/** The request as the channel's kind sends it. */
export function prepared(channel: Channel, key: string, request: WireRequest): WireRequest | Promise<WireRequest> {
  const kind = kindOf(channel);
  return kind.prepare ? kind.prepare(channel, key, request) : request;
}

/** The answer as the protocol's first-party API would have given it. */
export function answered(channel: Channel, upstream: UpstreamResponse, request: WireRequest): UpstreamResponse {
  const kind = kindOf(channel);
  return kind.answer ? kind.answer(channel, upstream, request) : upstream;
}

/** A small JSON request of the gateway's own (a key probe, `gateway channels test`), built
 * as an exchange builds one for the protocol's first-party API and made the kind's. */
export function preparedProbe(
  channel: Channel, key: string,
  probe: { readonly path: string; readonly headers: Record<string, string>; readonly body: Buffer; readonly upstreamModel: string; readonly stream: boolean },
): WireRequest | Promise<WireRequest> {
  const { path, body, upstreamModel, stream } = probe;
  return prepared(channel, key, {
    url: upstreamUrl(channel.baseUrl, path), path, upstreamModel, stream, body,
    headers: {
      ...probe.headers, "content-type": "application/json", "content-length": String(body.length), "accept-encoding": "identity",
      ...kindOf(channel).authHeaders(key),
    },
  });
}

/** A GET of the gateway's own for the protocol's first-party API (a video job's status or
 * content, a realtime WebSocket's handshake): no body, the kind's URL and credentials.
 * Sent as a GET whatever the kind returns. */
export function preparedGet(
  channel: Channel, key: string,
  get: { readonly path: string; readonly headers: Record<string, string>; readonly upstreamModel: string },
): WireRequest | Promise<WireRequest> {
  const { path, upstreamModel } = get;
  return prepared(channel, key, {
    method: "GET", url: upstreamUrl(channel.baseUrl, path), path, upstreamModel, stream: false, body: NO_BODY,
    headers: { ...get.headers, ...kindOf(channel).authHeaders(key) },
  });
}

const NO_BODY = Buffer.alloc(0);
