// What an OpenAI-protocol upstream needs from us: its paths, how it authenticates, and
// how it says the key is at fault: 401/403 (a refused key, a forbidden account) unless its
// error code blames a header of the request, and 429 with error code (or type)
// insufficient_quota for an account out of credit, unlike an ordinary rate limit
// (rate_limit_exceeded), where the key stays in rotation.

import { COMMON_PASSED_HEADERS, sure, type ErrorObject, type KeyVerdict } from "../provider.js";
import type { ProviderKind } from "../kind.js";

/** 401 codes that blame the request's OpenAI-Organization / OpenAI-Project header, not the
 * key: a client must never take a key out by naming another organization. */
const REQUEST_SIDE_CODES: ReadonlySet<unknown> = new Set(["mismatched_organization", "mismatched_project", "invalid_organization"]);

function openaiKeyFault(status: number, error: ErrorObject | undefined): KeyVerdict | undefined {
  // Error codes and types are the provider's enumerations; `message` and `param` may quote the request.
  if (status === 429) return error?.code === "insufficient_quota" || error?.type === "insufficient_quota" ? sure("quota") : undefined;
  return REQUEST_SIDE_CODES.has(error?.code) ? undefined : sure("auth");
}

export const openaiProvider: ProviderKind = Object.freeze({
  kind: "openai",
  protocol: "openai",
  requestHeaders: Object.freeze({
    // Never OpenAI-Organization / OpenAI-Project (they pick the operator's account), nor
    // Idempotency-Key (shared by every tenant of that account), nor SDK telemetry.
    passed: new Set(COMMON_PASSED_HEADERS),
    fixed: Object.freeze({}),
    defaultBetas: new Set<string>(),
  }),
  paths: Object.freeze({ chat: "/v1/chat/completions" }),
  authHeaders: (key: string) => ({ authorization: `Bearer ${key}` }),
  /** Response headers that describe our upstream account; clients never see them. */
  privateResponseHeaders: Object.freeze(["openai-organization", "openai-project"]),
  keyFaults: Object.freeze({ statuses: Object.freeze([401, 403, 429]), judge: openaiKeyFault }),
});
