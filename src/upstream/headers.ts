// Which headers cross the gateway. Client credentials and hop-by-hop headers never go
// upstream; upstream account identifiers and hop-by-hop headers never come back.

import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

/** Request headers never forwarded upstream (lower case). */
const dropUpstream = new Set([
  "host", "connection", "keep-alive", "proxy-authorization", "proxy-connection", "te", "trailer",
  "transfer-encoding", "upgrade", "content-length", "accept-encoding", "expect",
  // credentials of the client: the channel key replaces them
  "authorization", "x-api-key", "x-goog-api-key", "cookie",
  // the client's network identity stays with us
  "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip", "forwarded",
  // a Google field mask can drop usageMetadata from the answer the gateway bills by
  "x-goog-fieldmask",
]);

/** Response headers never relayed to the client (lower case). */
const dropDownstream = new Set([
  "connection", "keep-alive", "transfer-encoding", "trailer", "upgrade", "proxy-authenticate",
  "set-cookie",
]);

/** Builds upstream request headers from the client's, without its credentials. */
export function upstreamRequestHeaders(
  client: IncomingHttpHeaders,
  auth: Record<string, string>,
  bodyLength: number,
  contentType = "application/json",
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in client) {
    if (dropUpstream.has(name) || name.startsWith("x-gateway-")) continue;
    const value = client[name];
    if (value !== undefined) out[name] = value;
  }
  // identity: the usage tap reads the body, so it must not arrive compressed
  out["accept-encoding"] = "identity";
  out["content-type"] = contentType;
  out["content-length"] = String(bodyLength);
  return Object.assign(out, auth);
}

/** Copies upstream response headers that may reach the client; `keepLength` when the
 * body is relayed byte for byte, so its Content-Length still holds. */
export function downstreamResponseHeaders(
  upstream: IncomingHttpHeaders,
  privateHeaders: readonly string[],
  keepLength = false,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    if (name === "content-length" && !keepLength) continue;
    // x-gateway-*: ours alone (an upstream that is itself a gateway must not replace our request id)
    if (dropDownstream.has(name) || privateHeaders.includes(name) || name.startsWith("x-gateway-")) continue;
    const value = upstream[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
