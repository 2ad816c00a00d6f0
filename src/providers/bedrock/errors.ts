// Bedrock's errors in Anthropic's shape. Bedrock answers an error with `{"message": "…"}`
// and names it in the x-amzn-errortype header ("AccessDeniedException:http://…"); some
// front ends name it in the body's `__type` instead. That name, never the message, picks
// the Anthropic error type, so the key-fault rules judge a refused credential (403
// AccessDenied, UnrecognizedClient, ExpiredToken, a signature that does not match) as the
// Anthropic API's authentication or permission error; the status is kept.

import { Transform, type TransformCallback } from "node:stream";
import type { IncomingHttpHeaders } from "node:http";
import { sure, type ErrorObject, type KeyFaultRules, type KeyVerdict } from "../provider.js";

/** Bedrock error names (the header's part before ":") by the Anthropic type they are. */
const TYPE_OF_ERROR: Readonly<Record<string, string>> = Object.freeze({
  AccessDeniedException: "permission_error",
  UnrecognizedClientException: "authentication_error",
  ExpiredTokenException: "authentication_error",
  InvalidSignatureException: "authentication_error",
  SignatureDoesNotMatch: "authentication_error",
  IncompleteSignatureException: "authentication_error",
  MissingAuthenticationTokenException: "authentication_error",
  InvalidClientTokenId: "authentication_error",
  ThrottlingException: "rate_limit_error",
  ServiceQuotaExceededException: "rate_limit_error",
  TooManyRequestsException: "rate_limit_error",
  ModelNotReadyException: "overloaded_error",
  ServiceUnavailableException: "overloaded_error",
  ModelTimeoutException: "timeout_error",
  ValidationException: "invalid_request_error",
  ResourceNotFoundException: "not_found_error",
  ConflictException: "invalid_request_error",
  InternalServerException: "api_error",
  ModelErrorException: "api_error",
  ModelStreamErrorException: "api_error",
});

/** The Anthropic type of an error Bedrock did not name (or named in a way not known). */
function typeOfStatus(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 503 || status === 529) return "overloaded_error";
  if (status === 504 || status === 408) return "timeout_error";
  return status >= 500 ? "api_error" : "invalid_request_error";
}

/** The error name of a header like "AccessDeniedException:http://internal.amazon.com/…"
 * or a `__type` like "com.amazon.coral.service#UnrecognizedClientException". */
export function errorName(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  const name = value.split(":")[0];
  return name.slice(name.lastIndexOf("#") + 1) || undefined;
}

/** The Anthropic type of a Bedrock error name: an answer's ("ThrottlingException") or an
 * exception frame's, which begins in lower case ("throttlingException"). */
export function anthropicErrorType(name: string | undefined, status: number): string {
  const known = name ? TYPE_OF_ERROR[name[0].toUpperCase() + name.slice(1)] : undefined;
  return known ?? typeOfStatus(status);
}

/** Anthropic's error body for a Bedrock error answer's body and headers. */
export function anthropicErrorBody(status: number, headers: IncomingHttpHeaders, body: Buffer): string {
  let parsed: Record<string, unknown> | undefined;
  try {
    const json: unknown = JSON.parse(body.toString("utf8"));
    if (json !== null && typeof json === "object" && !Array.isArray(json)) parsed = json as Record<string, unknown>;
  } catch {
    // not JSON (a proxy's page): the status alone tells the type
  }
  const header = headers["x-amzn-errortype"];
  const typeField = parsed?.__type;
  const name = errorName(Array.isArray(header) ? header[0] : header) ?? errorName(typeof typeField === "string" ? typeField : undefined);
  const text = parsed?.message ?? parsed?.Message;
  const message = typeof text === "string" ? text : `Bedrock answered ${status}${name ? ` (${name})` : ""}.`;
  return JSON.stringify({ type: "error", error: { type: anthropicErrorType(name, status), message } });
}

/** The most of an error or count body read (both are small; a longer one is cut). */
const ERROR_BODY_LIMIT = 64 * 1024;

/** Reads a Bedrock error body (bounded) and gives Anthropic's in its place. */
export function errorRewriter(status: number, headers: IncomingHttpHeaders): Transform {
  return wholeRewriter((body) => anthropicErrorBody(status, headers, body));
}

/** CountTokens' `{"inputTokens": n}` as Anthropic's `{"input_tokens": n}`; another body
 * (not JSON, no count) goes on as it came, for the exchange to find broken. */
export function countRewriter(): Transform {
  return wholeRewriter((body) => {
    try {
      const parsed = JSON.parse(body.toString("utf8")) as { inputTokens?: unknown };
      if (typeof parsed.inputTokens === "number") return JSON.stringify({ input_tokens: parsed.inputTokens });
    } catch {
      // not JSON: as it came
    }
    return body;
  });
}

/** A small body read whole (bounded: a longer one is cut) and given anew by `rewrite`. */
function wholeRewriter(rewrite: (body: Buffer) => string | Buffer): Transform {
  const chunks: Buffer[] = [];
  let held = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (held < ERROR_BODY_LIMIT) {
        const part = chunk.subarray(0, ERROR_BODY_LIMIT - held);
        chunks.push(part);
        held += part.length;
      }
      done();
    },
    flush(done: TransformCallback) {
      const out = rewrite(Buffer.concat(chunks));
      done(null, typeof out === "string" ? Buffer.from(out) : out);
    },
  });
}

/** Which statuses carry a refused credential once rewritten (ExpiredToken can be a 400). */
const KEY_FAULT_STATUSES = Object.freeze([400, 401, 403]);

/** A refused credential, by the Anthropic type its Bedrock error name became. Bedrock has
 * no credit balance: nothing is judged from a message, so there is no probe. */
function bedrockKeyFault(_status: number, error: ErrorObject | undefined): KeyVerdict | undefined {
  return error?.type === "authentication_error" || error?.type === "permission_error" ? sure("auth") : undefined;
}

export const bedrockKeyFaults: KeyFaultRules = Object.freeze({ statuses: KEY_FAULT_STATUSES, judge: bedrockKeyFault });
