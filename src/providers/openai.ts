// What an OpenAI-protocol upstream needs from us: its paths, how it authenticates, and
// how it says the account behind a key is out of credit: 429 with error code (and type)
// insufficient_quota, unlike an ordinary rate limit (rate_limit_exceeded), where the key
// stays in rotation.

import { COMMON_PASSED_HEADERS, errorObjectOf, type KeyFault, type ProviderSpec } from "./provider.js";

function openaiKeyFault(_status: number, body: string): KeyFault | undefined {
  const error = errorObjectOf(body);
  return error?.code === "insufficient_quota" || error?.type === "insufficient_quota" ? "quota" : undefined;
}

export const openaiProvider: ProviderSpec = Object.freeze({
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
  keyFaultBodies: Object.freeze({ statuses: Object.freeze([429]), classify: openaiKeyFault }),
});
