// What a generate-content upstream needs from us: its key header (never the `key` query
// parameter, which would land in upstream access logs), and how it says the key is at
// fault: 400 with reason API_KEY_INVALID (not 401) for a bad key, and 429
// RESOURCE_EXHAUSTED naming a per-day quota when the key's daily quota is used up (a
// per-minute quota in the same status is an ordinary rate limit: the key stays).

import { COMMON_PASSED_HEADERS, errorObjectOf, type KeyFault, type ProviderSpec } from "./provider.js";

/** A quota counted per day (quotaId "GenerateRequestsPerDayPerProjectPerModel-FreeTier"):
 * exhausted, it does not come back within minutes. */
const DAILY_QUOTA = /PerDay/i;

function geminiKeyFault(status: number, body: string): KeyFault | undefined {
  if (status === 400) return body.includes("API_KEY_INVALID") ? "auth" : undefined;
  const error = errorObjectOf(body);
  if (error?.status !== "RESOURCE_EXHAUSTED" || !Array.isArray(error.details)) return undefined;
  for (const detail of error.details as { violations?: { quotaId?: unknown }[] }[]) {
    for (const violation of detail?.violations ?? []) {
      if (typeof violation?.quotaId === "string" && DAILY_QUOTA.test(violation.quotaId)) return "quota";
    }
  }
  return undefined;
}

export const geminiProvider: ProviderSpec = Object.freeze({
  protocol: "gemini",
  requestHeaders: Object.freeze({
    // Never X-Goog-User-Project (bills another project), X-Goog-FieldMask (drops usage
    // from the answer), X-HTTP-Method-Override, nor x-goog-api-client telemetry.
    passed: new Set(COMMON_PASSED_HEADERS),
    fixed: Object.freeze({}),
    defaultBetas: new Set<string>(),
  }),
  paths: Object.freeze({ models: "/v1beta/models" }),
  authHeaders: (key: string) => ({ "x-goog-api-key": key }),
  privateResponseHeaders: Object.freeze([]),
  keyFaultBodies: Object.freeze({ statuses: Object.freeze([400, 429]), classify: geminiKeyFault }),
});
