// What a messages-protocol upstream needs from us: its path, its key header, the
// protocol version it requires, and how it says the key is at fault: 401
// authentication_error, 403 permission_error, 402 billing_error, all by their error type.
// Its out-of-credit ("Your credit balance is too low to access the Anthropic API…") and
// disabled-organization ("This organization has been disabled.") answers are 400
// invalid_request_error, told apart from a bad request only by their message, the same
// place its validation errors quote the request's field names ("<field>: Extra inputs are
// not permitted"); so those are confirmed with a probe of our own before the key goes out.

import { sure, type ErrorObject, type KeyVerdict, type ProviderSpec } from "./provider.js";

/** The version sent when the client did not choose one (conversions from other protocols). */
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

/** What Anthropic states by error type alone. */
const BY_TYPE: Readonly<Record<number, readonly [string, KeyVerdict]>> = {
  401: ["authentication_error", sure("auth")],
  402: ["billing_error", sure("quota")],
  403: ["permission_error", sure("auth")],
};

function anthropicKeyFault(status: number, error: ErrorObject | undefined): KeyVerdict | undefined {
  const typed = BY_TYPE[status];
  if (typed) return error?.type === typed[0] ? typed[1] : undefined;
  if (error?.type !== "invalid_request_error" || typeof error.message !== "string") return undefined;
  // Message text only: a suspicion for the probe (which sends a body of ours) to confirm.
  if (/credit balance is too low/i.test(error.message)) return { fault: "quota", confirm: true };
  if (/organization has been disabled/i.test(error.message)) return { fault: "auth", confirm: true };
  return undefined;
}

/**
 * The probe: the smallest messages request (one token out). A messages call is what
 * Anthropic refuses for credit or a disabled organization; count_tokens and the model list
 * are free, and nothing says they check the balance, so a probe on them could pass a key
 * that cannot serve. A refused probe costs nothing; one on a healthy key (the suspicion
 * was an echo) costs the operator about ten tokens, never a tenant, and each key is probed
 * at most once per interval (routing/key-probes.ts).
 */
function anthropicProbe(upstreamModel: string) {
  return {
    path: "/v1/messages",
    headers: { "anthropic-version": DEFAULT_ANTHROPIC_VERSION },
    body: JSON.stringify({ model: upstreamModel, max_tokens: 1, messages: [{ role: "user", content: "." }] }),
  };
}

export const anthropicProvider: ProviderSpec = Object.freeze({
  protocol: "anthropic",
  paths: Object.freeze({ messages: "/v1/messages" }),
  authHeaders: (key: string) => ({ "x-api-key": key }),
  privateResponseHeaders: Object.freeze(["anthropic-organization-id"]),
  keyFaults: Object.freeze({
    statuses: Object.freeze([400, 401, 402, 403]), judge: anthropicKeyFault, probe: Object.freeze({ request: anthropicProbe }),
  }),
});
