// Vertex's errors. Google's front end answers in Google's shape ({"error":{"code",
// "message","status","details"}}, sometimes wrapped in a one-element array); Claude's own
// errors come through rawPredict in Anthropic's shape. On a Claude channel Google's are
// rewritten into Anthropic's, so clients and the key-fault rules read one shape; a Gemini
// channel keeps Google's (unwrapped), which is the Gemini API's own.

import { Readable } from "node:stream";
import type { Channel } from "../../runtime/types.js";
import { sure, type ErrorObject, type KeyFault, type KeyFaultRules, type KeyVerdict } from "../provider.js";
import { rewrittenHeaders, type WireAnswer } from "../kind.js";
import { ERROR_INFO, QUOTA_FAILURE } from "../gemini/manifest.js";

/** Anthropic's error type for each google.rpc.Code name. */
const ANTHROPIC_TYPE_OF_STATUS: Readonly<Record<string, string>> = {
  INVALID_ARGUMENT: "invalid_request_error",
  FAILED_PRECONDITION: "invalid_request_error",
  OUT_OF_RANGE: "invalid_request_error",
  UNAUTHENTICATED: "authentication_error",
  PERMISSION_DENIED: "permission_error",
  NOT_FOUND: "not_found_error",
  RESOURCE_EXHAUSTED: "rate_limit_error",
  DEADLINE_EXCEEDED: "timeout_error",
  UNAVAILABLE: "api_error",
  INTERNAL: "api_error",
};

/** The most of an error answer read to rewrite it (errors are small). */
const ERROR_BODY_LIMIT = 256 * 1024;

/** Google's `error` object in `parsed` (also inside a one-element array), or undefined. */
export function googleErrorOf(parsed: unknown): ErrorObject | undefined {
  const outer = Array.isArray(parsed) && parsed.length === 1 ? parsed[0] : parsed;
  if (typeof outer !== "object" || outer === null) return undefined;
  const error = (outer as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return undefined;
  // Anthropic's errors carry a `type`; Google's a numeric code or a status name.
  const e = error as ErrorObject;
  return typeof e.type !== "string" && (typeof e.status === "string" || typeof e.code === "number") ? e : undefined;
}

/** The Anthropic error body for Google's `error` on an answer of `status`. */
export function anthropicErrorFor(status: number, error: ErrorObject): object {
  const named = typeof error.status === "string" ? ANTHROPIC_TYPE_OF_STATUS[error.status] : undefined;
  const type = named ?? (status === 429 ? "rate_limit_error" : status >= 500 ? "api_error" : "invalid_request_error");
  const message = typeof error.message === "string" ? error.message : `Vertex AI answered ${status}`;
  return { type: "error", error: { type, message } };
}

async function readBounded(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size < ERROR_BODY_LIMIT) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks);
}

/** The error body as the channel's protocol writes it: unchanged when it is not Google's. */
async function* rewritten(body: Readable, status: number, toAnthropic: boolean): AsyncGenerator<Buffer> {
  const raw = await readBounded(body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch {
    yield raw;
    return;
  }
  const error = googleErrorOf(parsed);
  if (!error) yield raw;
  else yield Buffer.from(JSON.stringify(toAnthropic ? anthropicErrorFor(status, error) : { error }));
}

/** Vertex's answer as the channel's protocol gives it: successes (JSON, SSE) as they are. */
export function vertexAnswer(channel: Channel, answer: WireAnswer): WireAnswer {
  if (answer.status < 400 || !/json/i.test(String(answer.headers["content-type"] ?? ""))) return answer;
  return {
    status: answer.status,
    headers: rewrittenHeaders(answer.headers, "application/json"),
    body: Readable.from(rewritten(answer.body, answer.status, channel.protocol === "anthropic")),
  };
}


/** ErrorInfo reasons that blame the service account or its project. */
const KEY_REASONS: Readonly<Record<string, KeyFault>> = {
  SERVICE_DISABLED: "auth",
  CONSUMER_SUSPENDED: "auth",
  ACCESS_TOKEN_EXPIRED: "auth",
  ACCESS_TOKEN_TYPE_UNSUPPORTED: "auth",
  IAM_PERMISSION_DENIED: "auth",
  BILLING_DISABLED: "quota",
};

type Detail = { "@type"?: unknown; reason?: unknown; violations?: { quotaId?: unknown }[] };

function googleKeyFault(status: number, error: ErrorObject): KeyVerdict | undefined {
  const details = Array.isArray(error.details) ? error.details as Detail[] : [];
  for (const detail of details) {
    if (detail?.["@type"] === ERROR_INFO && typeof detail.reason === "string" && Object.hasOwn(KEY_REASONS, detail.reason)) {
      return sure(KEY_REASONS[detail.reason]);
    }
    // A quota counted per day does not come back within minutes; per minute is a rate limit.
    if (status === 429 && detail?.["@type"] === QUOTA_FAILURE && Array.isArray(detail.violations)
      && detail.violations.some((v) => typeof v?.quotaId === "string" && /PerDay/i.test(v.quotaId))) {
      return sure("quota");
    }
  }
  // A token Google does not take, or a service account without the role on the project.
  if (status === 401 || error.status === "UNAUTHENTICATED") return sure("auth");
  if (status === 403 && error.status === "PERMISSION_DENIED") return sure("auth");
  return undefined;
}

/** Anthropic's shape (Claude channels, Google's errors rewritten): by type alone. */
function anthropicKeyFault(status: number, error: ErrorObject): KeyVerdict | undefined {
  if (status === 401 && error.type === "authentication_error") return sure("auth");
  if (status === 403 && error.type === "permission_error") return sure("auth");
  return undefined;
}

export const vertexKeyFaults: KeyFaultRules = Object.freeze({
  statuses: Object.freeze([400, 401, 403, 429]),
  judge: (status: number, error: ErrorObject | undefined) => {
    if (!error) return undefined;
    return typeof error.type === "string" ? anthropicKeyFault(status, error) : googleKeyFault(status, error);
  },
});
