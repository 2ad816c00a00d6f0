// Messages-protocol error body: {"type":"error","error":{"type":<anthropic type>,"message"}},
// with our catalogue code and type kept alongside so operators can correlate.

import type { GatewayError } from "../../errors/gateway-error.js";

/** Anthropic's error types by HTTP status, as its SDK maps them to exception classes. */
function anthropicType(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 415:
    case 417:
      return status === 413 ? "request_too_large" : "invalid_request_error";
    case 401:
      return "authentication_error";
    case 402:
      return "billing_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    case 408:
    case 504:
      return "timeout_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

/** Renders a gateway error in the messages protocol's shape. */
export function renderAnthropicError(err: GatewayError): string {
  return JSON.stringify({
    type: "error",
    error: {
      type: anthropicType(err.status),
      message: err.message,
      code: err.code,
      gateway_type: err.type,
    },
  });
}

/** The error as a messages stream event, as the API sends one mid-stream. */
export function renderAnthropicStreamError(err: GatewayError): string {
  return `event: error\ndata: ${renderAnthropicError(err)}\n\n`;
}
