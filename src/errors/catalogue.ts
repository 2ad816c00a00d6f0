// The error catalogue: every error the gateway itself produces, with its HTTP status,
// its OpenAI-style `type` and its stable `code`. Protocols render these in their own shape.

export interface ErrorSpec {
  readonly status: number;
  readonly type: "gateway_error" | "invalid_request_error";
  readonly code: string;
  /** Default message; a GatewayError may carry a more specific one. */
  readonly message: string;
}

function spec(status: number, type: ErrorSpec["type"], code: string, message: string): ErrorSpec {
  return Object.freeze({ status, type, code, message });
}

export const errors = Object.freeze({
  notFound: spec(404, "invalid_request_error", "not_found", "No such endpoint. Check the base URL: OpenAI-style clients use {base_url}/v1, Anthropic and Gemini clients use {base_url}."),
  methodNotAllowed: spec(405, "invalid_request_error", "method_not_allowed", "This endpoint does not accept that HTTP method."),
  missingToken: spec(401, "gateway_error", "missing_token", "No access token was provided."),
  invalidToken: spec(401, "gateway_error", "invalid_token", "The access token is invalid."),
  tokenExpired: spec(401, "gateway_error", "token_expired", "The access token has expired."),
  tokenDisabled: spec(401, "gateway_error", "token_disabled", "The access token is disabled."),
  userDisabled: spec(401, "gateway_error", "user_disabled", "The account that owns this access token is disabled."),
  tokenQuotaExhausted: spec(401, "gateway_error", "token_quota_exhausted", "The access token's quota is used up."),
  // 402: the official SDKs retry 408/409/429/5xx but not 402, so a client whose money is
  // gone fails fast instead of burning retries (OpenAI's own insufficient_quota uses 429).
  insufficientQuota: spec(402, "gateway_error", "insufficient_quota", "Insufficient quota: the account balance is used up."),
  preDeductionFailed: spec(402, "gateway_error", "pre_deduction_failed", "The balance does not cover this request's pre-deduction."),
  rateLimited: spec(429, "gateway_error", "rate_limited", "Rate limit exceeded."),
  budgetExceeded: spec(429, "gateway_error", "budget_exceeded", "A budget of this access token or its account is used up until it frees."),
  ipNotAllowed: spec(403, "gateway_error", "ip_not_allowed", "This access token may not be used from this IP address."),
  modelNotAllowed: spec(403, "gateway_error", "model_not_allowed", "This access token has no access to the requested model."),
  groupNotAllowed: spec(403, "gateway_error", "group_not_allowed", "The account level has no access to this token's group."),
  bodyTooLarge: spec(413, "invalid_request_error", "body_too_large", "The request body is too large."),
  // 408 and 503 are retried by the official SDKs: a stalled upload or a full body budget
  // is worth another try, unlike a body that is simply too large.
  requestTimeout: spec(408, "invalid_request_error", "request_timeout", "The request was not received in time."),
  bodyMemoryExhausted: spec(503, "gateway_error", "body_memory_exhausted", "The gateway is holding as many request bodies as it may; retry shortly."),
  malformedRequest: spec(400, "invalid_request_error", "malformed_request", "The request could not be parsed as HTTP."),
  headersTooLarge: spec(431, "invalid_request_error", "headers_too_large", "The request headers are too large."),
  expectationFailed: spec(417, "invalid_request_error", "expectation_failed", "The Expect header's expectation is not supported (only 100-continue is)."),
  clientClosed: spec(499, "invalid_request_error", "client_closed_request", "The client closed the connection before its request was received."),
  invalidJson: spec(400, "invalid_request_error", "invalid_json", "The request body is not valid JSON."),
  unsupportedMediaType: spec(415, "invalid_request_error", "unsupported_media_type", "The request body must be JSON (Content-Type: application/json)."),
  missingParameter: spec(400, "invalid_request_error", "missing_required_parameter", "A required parameter is missing."),
  invalidParameter: spec(400, "invalid_request_error", "invalid_parameter", "A parameter has an invalid value."),
  missingVersionHeader: spec(400, "invalid_request_error", "missing_version_header", "The anthropic-version header is required."),
  modelNotFound: spec(404, "invalid_request_error", "model_not_found", "The model does not exist."),
  wrongEndpoint: spec(400, "invalid_request_error", "wrong_endpoint", "The model is not served on this endpoint."),
  upgradeRequired: spec(426, "invalid_request_error", "upgrade_required", "This endpoint is a WebSocket: connect with an Upgrade request."),
  affinityChannelUnavailable: spec(503, "gateway_error", "affinity_channel_unavailable", "The channel this session is bound to is no longer available."),
  channelNotFound: spec(503, "gateway_error", "channel_not_found", "No available channel for the model in this token's group."),
  upstreamRejected: spec(400, "invalid_request_error", "upstream_rejected", "The upstream provider rejected the request."),
  // Objects kept at the provider live under the operator's one account, shared by every
  // tenant: only models whose operator allows it (models.<name>.store) may keep or name them.
  storedStateNotAllowed: spec(400, "invalid_request_error", "stored_state_not_allowed", "This model keeps no state at the provider through this gateway: send the whole conversation in the request."),
  conversionUnsupported: spec(400, "invalid_request_error", "conversion_unsupported", "This request cannot be converted for the channel that serves the model."),
  upstreamRateLimited: spec(429, "gateway_error", "upstream_rate_limited", "The upstream provider is rate limiting requests; retry after a short wait."),
  upstreamError: spec(502, "gateway_error", "upstream_error", "The upstream provider failed to answer."),
  upstreamUnavailable: spec(502, "gateway_error", "upstream_unavailable", "The upstream provider could not be reached."),
  upstreamAuthFailed: spec(502, "gateway_error", "upstream_auth_failed", "The upstream provider rejected the gateway's credentials for this route."),
  upstreamQuotaExhausted: spec(503, "gateway_error", "upstream_quota_exhausted", "Every upstream key that could serve this request is out of credit or quota; the operator has been told. Retry later."),
  upstreamTimeout: spec(504, "gateway_error", "upstream_timeout", "The upstream provider did not answer in time."),
  // 503 (retried by the SDKs): a billed request is refused rather than served unbilled
  // while Redis or PostgreSQL is unreachable; the clients reconnect by themselves.
  stateUnavailable: spec(503, "gateway_error", "state_unavailable", "The gateway cannot reach the state it bills against; the request was not served. Retry shortly."),
  realtimeSessionTooLong: spec(400, "invalid_request_error", "realtime_session_too_long", "The realtime session reached the longest a session may last (server.realtime_max_session); open a new one."),
  realtimeTooManyResponses: spec(400, "invalid_request_error", "realtime_too_many_responses", "Too many response.create events are waiting for the upstream to start them."),
  realtimePeerStalled: spec(502, "gateway_error", "realtime_peer_stalled", "A realtime peer stopped reading while the other kept sending; the session was ended."),
  shuttingDown: spec(503, "gateway_error", "shutting_down", "The gateway is shutting down; retry."),
  internal: spec(500, "gateway_error", "internal_error", "Internal gateway error."),
  // The admin API (/admin/v1): its own key, its scopes, and changes refused so that none is
  // half applied. 409s are not retried blindly by clients: each needs a read or a new name.
  missingAdminKey: spec(401, "gateway_error", "missing_admin_key", "No admin key was provided: send Authorization: Bearer <admin key>."),
  invalidAdminKey: spec(401, "gateway_error", "invalid_admin_key", "The admin key is not one admin.keys declares."),
  adminScopeMissing: spec(403, "gateway_error", "admin_scope_missing", "This admin key lacks the scope this request needs."),
  nameTaken: spec(409, "invalid_request_error", "name_taken", "That name is taken already."),
  versionConflict: spec(409, "invalid_request_error", "version_conflict", "The resource changed since it was read: read it again and retry."),
  idempotencyMismatch: spec(409, "invalid_request_error", "idempotency_mismatch", "The idempotency key was used before for a different request."),
  keyTaken: spec(409, "invalid_request_error", "key_taken", "That key is in use by another token."),
  // The console (/console): its sign-in, its session cookie and the CSRF token that goes
  // with every change.
  consoleSignInRefused: spec(401, "gateway_error", "console_signin_refused", "That is neither an access token nor an admin key this gateway accepts."),
  consoleNotSignedIn: spec(401, "gateway_error", "console_not_signed_in", "Not signed in to the console, or the session has ended: sign in again."),
  consoleCsrfMismatch: spec(403, "gateway_error", "console_csrf_mismatch", "The request lacks the console session's x-csrf-token header, or it does not match."),
  consoleOperatorsElsewhere: spec(403, "gateway_error", "console_operators_elsewhere", "Operators sign in to the console on admin.listen's address, not this one."),
  // The console: a customer's own changes the operator keeps for themselves.
  customerTokensOff: spec(403, "gateway_error", "customer_tokens_off", "Changing tokens from the console is not allowed for this account: ask the operator."),
});

export type ErrorName = keyof typeof errors;

const byCode = new Map<string, ErrorSpec>(Object.values(errors).map((e) => [e.code, e]));

/** The catalogued error with this code, if any. */
export function errorByCode(code: string | undefined): ErrorSpec | undefined {
  return code === undefined ? undefined : byCode.get(code);
}
