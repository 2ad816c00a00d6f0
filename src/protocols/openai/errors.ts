// OpenAI-style error body, the shape every OpenAI SDK parses: {"error":{message,type,code,param}}.

import type { GatewayError } from "../../errors/gateway-error.js";

/** Renders a gateway error as an OpenAI-style JSON body. */
export function renderOpenAIError(err: GatewayError): string {
  return JSON.stringify({
    error: { message: err.message, type: err.type, code: err.code, param: null },
  });
}

/** The error as a chat-completions stream event: a data line with the `error` object, which
 * the OpenAI SDKs raise as an APIError. */
export function renderOpenAIStreamError(err: GatewayError): string {
  return `data: ${renderOpenAIError(err)}\n\n`;
}

/** The error as a responses stream event (`type: "error"`, numbered like the events before it). */
export function renderResponsesStreamError(err: GatewayError, sequenceNumber: number): string {
  const data = JSON.stringify({ type: "error", code: err.code, message: err.message, param: null, sequence_number: sequenceNumber });
  return `event: error\ndata: ${data}\n\n`;
}
