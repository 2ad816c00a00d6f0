// Generate-content error body: {"error":{"code":<status>,"message","status":<RPC status>}},
// with our catalogue code in a google.rpc.ErrorInfo detail and our type alongside.

import type { GatewayError } from "../../errors/gateway-error.js";

/** The google.rpc status name Google APIs pair with each HTTP status. */
function rpcStatus(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 415:
    case 417:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 402:
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    case 408:
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return "INTERNAL";
  }
}

/** Renders a gateway error in the generate-content protocol's shape. */
export function renderGeminiError(err: GatewayError): string {
  return JSON.stringify({
    error: {
      code: err.status,
      message: err.message,
      status: rpcStatus(err.status),
      type: err.type,
      details: [
        {
          "@type": "type.googleapis.com/google.rpc.ErrorInfo",
          reason: err.code,
          domain: "gateway",
        },
      ],
    },
  });
}

/** The error as a generate-content stream chunk: an `error` object, as the API sends one
 * (CRLF-framed, like its other chunks). */
export function renderGeminiStreamError(err: GatewayError): string {
  return `data: ${renderGeminiError(err)}\r\n\r\n`;
}
