// What a generate-content upstream needs from us: its key header (never the `key` query
// parameter, which would land in upstream access logs), and how it says the key is at
// fault: a google.rpc.ErrorInfo detail whose reason names the key or its project
// (API_KEY_INVALID comes as a 400, not a 401), and 429 RESOURCE_EXHAUSTED whose
// QuotaFailure names a per-day quota when the key's daily quota is used up (a per-minute
// quota in the same status is an ordinary rate limit: the key stays). The message is never
// read: an unknown field is echoed there ("Unknown name \"API_KEY_INVALID\"…"), and a 403
// without such a reason (a file or cached content of another project) is the request's.

import { COMMON_PASSED_HEADERS, sure, type ErrorObject, type KeyFault, type KeyVerdict } from "../provider.js";
import type { ProviderKind } from "../kind.js";

/** Google's structured error details (google.rpc), as Gemini and Vertex both send them. */
export const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
export const QUOTA_FAILURE = "type.googleapis.com/google.rpc.QuotaFailure";

/** ErrorInfo reasons that blame the key or the project behind it. */
const KEY_REASONS: Readonly<Record<string, KeyFault>> = {
  API_KEY_INVALID: "auth",
  API_KEY_EXPIRED: "auth",
  CONSUMER_SUSPENDED: "auth",
  SERVICE_DISABLED: "auth",
  API_KEY_SERVICE_BLOCKED: "auth",
  API_KEY_IP_ADDRESS_BLOCKED: "auth",
  API_KEY_HTTP_REFERRER_BLOCKED: "auth",
  BILLING_DISABLED: "quota",
};

/** A quota counted per day (quotaId "GenerateRequestsPerDayPerProjectPerModel-FreeTier"):
 * exhausted, it does not come back within minutes. */
const DAILY_QUOTA = /PerDay/i;

type Detail = { "@type"?: unknown; reason?: unknown; violations?: { quotaId?: unknown }[] };

function detailsOf(error: ErrorObject | undefined): readonly Detail[] {
  return Array.isArray(error?.details) ? error.details as Detail[] : [];
}

function geminiKeyFault(status: number, error: ErrorObject | undefined): KeyVerdict | undefined {
  for (const detail of detailsOf(error)) {
    if (status === 429) {
      if (error?.status !== "RESOURCE_EXHAUSTED" || detail?.["@type"] !== QUOTA_FAILURE || !Array.isArray(detail.violations)) continue;
      if (detail.violations.some((v) => typeof v?.quotaId === "string" && DAILY_QUOTA.test(v.quotaId))) return sure("quota");
    } else if (detail?.["@type"] === ERROR_INFO && typeof detail.reason === "string" && Object.hasOwn(KEY_REASONS, detail.reason)) {
      return sure(KEY_REASONS[detail.reason]);
    }
  }
  return undefined;
}

export const geminiProvider: ProviderKind = Object.freeze({
  kind: "gemini",
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
  keyFaults: Object.freeze({ statuses: Object.freeze([400, 401, 403, 429]), judge: geminiKeyFault }),
});
