// What a messages-protocol upstream needs from us: its path, its key header, the
// protocol version it requires, and how it says the key is at fault: 401
// authentication_error, 403 permission_error, 402 billing_error, all by their error type.
// Its out-of-credit ("Your credit balance is too low to access the Anthropic API…") and
// disabled-organization ("This organization has been disabled.") answers are 400
// invalid_request_error, told apart from a bad request only by their message, the same
// place its validation errors quote the request's field names ("<field>: Extra inputs are
// not permitted"); so those are confirmed with a probe of our own before the key goes out.

import { COMMON_PASSED_HEADERS, sure, type ErrorObject, type KeyVerdict } from "../provider.js";
import type { ProviderKind } from "../kind.js";

/** The version sent when the client did not choose one (conversions from other protocols). */
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

/**
 * Betas a channel allows unless its `betas` key says otherwise: those whose answers the
 * gateway reads and bills from their own usage, including every value the recorded
 * clients send (test/fixtures/clients: Claude Code, the AI SDK). Left out on purpose:
 * extended-cache-ttl (1 h cache writes cost more than the one cache-write price a model
 * has), files-api (files kept under the operator's account, reachable by every tenant),
 * code-execution and mcp-client (container hours and calls to servers the client names),
 * skills, and fast mode (a premium price the price list does not carry).
 */
export const KNOWN_ANTHROPIC_BETAS: readonly string[] = Object.freeze([
  "context-1m-2025-08-07", // SPEC.md's 1M-context mode
  "claude-code-20250219",
  "interleaved-thinking-2025-05-14",
  "context-management-2025-06-27",
  "token-counting-2024-11-01",
  "fine-grained-tool-streaming-2025-05-14",
  "token-efficient-tools-2025-02-19",
  "output-128k-2025-02-19",
  "prompt-caching-scope-2026-01-05",
  "mid-conversation-system-2026-04-07",
  "thinking-token-count-2026-05-13",
  "effort-2025-11-24",
  "advanced-tool-use-2025-11-20",
  "structured-outputs-2025-11-13",
]);

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

export const anthropicProvider: ProviderKind = Object.freeze({
  kind: "anthropic",
  protocol: "anthropic",
  requestHeaders: Object.freeze({
    // The SDKs' x-stainless-* telemetry, Claude Code's session and app headers and the
    // browser-access switch have no use upstream: dropped with every unknown header.
    passed: new Set([...COMMON_PASSED_HEADERS, "anthropic-version"]),
    fixed: Object.freeze({ "anthropic-version": DEFAULT_ANTHROPIC_VERSION }),
    betaHeader: "anthropic-beta",
    defaultBetas: new Set(KNOWN_ANTHROPIC_BETAS),
  }),
  paths: Object.freeze({ messages: "/v1/messages" }),
  authHeaders: (key: string) => ({ "x-api-key": key }),
  privateResponseHeaders: Object.freeze(["anthropic-organization-id"]),
  keyFaults: Object.freeze({
    statuses: Object.freeze([400, 401, 402, 403]), judge: anthropicKeyFault, probe: Object.freeze({ request: anthropicProbe }),
  }),
});
