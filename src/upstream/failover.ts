// Decides what an upstream answer means for failover: relay it, or try the next channel.
// Connection errors, 429 and 5xx other than 504 fail over; everything else is the answer.
// Nothing is retried after the first byte. A channel credential problem is met before
// this: the failover loop retries a key the provider refused or found out of credit on
// the channel's next key, and passes a channel whose keys are all out
// (upstream/attempts.ts); a 401/403 the provider's fields do not blame on the key
// (a header or a file the request names) is the request's own answer, like a 400, so a
// client cannot make a channel fail with it.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { CredentialFailure } from "../providers/kind.js";
import type { KeyFault } from "../providers/provider.js";
import { UpstreamFailure } from "./send.js";

/** Whether an upstream status should make the gateway try another channel. */
export function shouldFailOver(status: number): boolean {
  return status === 429 || (status >= 500 && status !== 504);
}

/** The last thing that went wrong when no channel produced an answer. */
export type LastFailure =
  | { readonly kind: "status"; readonly status: number; readonly retryAfter?: string }
  | { readonly kind: "transport"; readonly failure: UpstreamFailure }
  /** A 2xx that was no answer: not JSON, or cut short. */
  | { readonly kind: "broken"; readonly reason: string }
  /** A channel's keys were refused or are out of credit (in this request or before it). */
  | { readonly kind: "keys"; readonly reason: KeyFault };

/** The client-facing error once every attempt has failed. Upstream bodies are not echoed:
 * they can name the operator's account or quote part of its key. */
export function exhaustedError(last: LastFailure): GatewayError {
  if (last.kind === "broken") {
    return new GatewayError(errors.upstreamError, `The upstream provider's answer was unusable (${last.reason}); it was not relayed or charged. Retry later.`);
  }
  if (last.kind === "keys") {
    return new GatewayError(last.reason === "quota" ? errors.upstreamQuotaExhausted : errors.upstreamAuthFailed);
  }
  if (last.kind === "transport") {
    if (last.failure.kind === "timeout") return new GatewayError(errors.upstreamTimeout);
    return new GatewayError(errors.upstreamUnavailable);
  }
  const { status } = last;
  if (status === 429) {
    const headers = last.retryAfter ? { "retry-after": last.retryAfter } : undefined;
    return new GatewayError(errors.upstreamRateLimited, undefined, { headers });
  }
  if (status === 504) return new GatewayError(errors.upstreamTimeout);
  return new GatewayError(errors.upstreamError, `The upstream provider answered ${status}; retry later.`, {
    status: status >= 500 && status <= 503 ? status : 502,
  });
}

/** The client-facing error when a kind could not make the credentials of a call that tries
 * no other key or channel (a job's poll, a realtime session), as the failover loop would
 * end on it: the key refused, or the service the kind needs for it unreachable. */
export function credentialError(err: CredentialFailure): GatewayError {
  return exhaustedError(err.fault === "auth"
    ? { kind: "keys", reason: "auth" }
    : { kind: "transport", failure: new UpstreamFailure("connect", err.message) });
}
