// Which headers cross the gateway. Toward the provider only what the protocol's allow-list
// names (src/providers/<kind>.ts) and the gateway's own headers; upstream account
// identifiers and hop-by-hop headers never come back.

import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { COMMON_PASSED_HEADERS, type RequestHeaderPolicy } from "../providers/provider.js";

/** Response headers never relayed to the client (lower case). */
const dropDownstream = new Set([
  "connection", "keep-alive", "transfer-encoding", "trailer", "upgrade", "proxy-authenticate",
  "set-cookie",
]);

export interface UpstreamHeaderInput {
  readonly client: IncomingHttpHeaders;
  readonly policy: RequestHeaderPolicy;
  /** The channel's allowed betas (channels[].betas); undefined: the policy's default. */
  readonly betas: ReadonlySet<string> | undefined;
  /** The channel key's headers. */
  readonly auth: Readonly<Record<string, string>>;
  readonly bodyLength: number;
  readonly contentType: string;
  readonly accept: string;
  /** Same protocol in and out: the client's own protocol headers (its version) pass;
   * otherwise the gateway encoded the body and sets them itself. */
  readonly passThrough: boolean;
}

/** Builds upstream request headers: the gateway's, the allow-listed ones of the client,
 * the allowed betas, then the channel key. Nothing else of the client's goes. */
export function upstreamRequestHeaders(input: UpstreamHeaderInput): Record<string, string | string[]> {
  const { client, policy } = input;
  // Copied, not spread: on Node 20 a spread copy that then gains properties builds a new
  // hidden class per call (bench/RESULTS.md), and this runs on every upstream attempt.
  const out: Record<string, string | string[]> = {};
  for (const name in policy.fixed) out[name] = policy.fixed[name];
  for (const name of input.passThrough ? policy.passed : COMMON_PASSED_HEADERS) {
    const value = client[name];
    if (value !== undefined) out[name] = value;
  }
  if (policy.betaHeader !== undefined) {
    const asked = client[policy.betaHeader];
    const kept = typeof asked === "string" ? allowedValues(asked, input.betas ?? policy.defaultBetas) : undefined;
    if (kept !== undefined) out[policy.betaHeader] = kept;
  }
  out.accept = input.accept;
  // identity: the usage tap reads the body, so it must not arrive compressed
  out["accept-encoding"] = "identity";
  out["content-type"] = input.contentType;
  out["content-length"] = String(input.bodyLength);
  return Object.assign(out, input.auth);
}

/** The values of a comma list that `allowed` holds, in order; undefined when none is.
 * An unknown value is dropped, not the whole list. */
export function allowedValues(list: string, allowed: ReadonlySet<string>): string | undefined {
  if (allowed.has(list)) return list; // the common case: one value, or an exact known list
  let kept: string | undefined;
  for (const part of list.split(",")) {
    const value = part.trim();
    if (allowed.has(value)) kept = kept === undefined ? value : `${kept},${value}`;
  }
  return kept;
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
