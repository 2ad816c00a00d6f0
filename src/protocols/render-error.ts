// Picks the error shape of the caller's protocol; one entry point for every stage.

import { errorByCode, errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { renderAnthropicError } from "./anthropic/errors.js";
import { renderGeminiError } from "./gemini/errors.js";
import type { Protocol } from "../runtime/types.js";
import { renderOpenAIError } from "./openai/errors.js";

const renderers: Record<Protocol, (err: GatewayError) => string> = {
  openai: renderOpenAIError,
  anthropic: renderAnthropicError,
  gemini: renderGeminiError,
};

/** Serialises a gateway error in the given protocol's shape. */
export function renderError(protocol: Protocol, err: GatewayError): string {
  return renderers[protocol](err);
}

/** The gateway error a canonical stream's error event stands for: its catalogued code when
 * the gateway ended the stream, else the upstream's failure, with the event's status. */
export function streamEventError(event: { readonly status: number; readonly message: string; readonly code?: string }): GatewayError {
  return new GatewayError(errorByCode(event.code) ?? errors.upstreamError, event.message, { status: event.status });
}
