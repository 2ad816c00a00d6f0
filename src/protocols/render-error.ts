// Picks the error shape of the caller's wire family; one entry point for every stage.

import { errorByCode, errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { renderAnthropicError } from "./anthropic/errors.js";
import { renderGeminiError } from "./gemini/errors.js";
import type { Protocol } from "../runtime/types.js";
import { renderOpenAIError } from "./openai/errors.js";

/** @deprecated The same as Protocol (runtime/types.ts); its uses are renamed to it. */
export type WireFamily = Protocol;

const renderers: Record<WireFamily, (err: GatewayError) => string> = {
  openai: renderOpenAIError,
  anthropic: renderAnthropicError,
  gemini: renderGeminiError,
};

/** Serialises a gateway error for the given wire family. */
export function renderError(family: WireFamily, err: GatewayError): string {
  return renderers[family](err);
}

/** The gateway error a canonical stream's error event stands for: its catalogued code when
 * the gateway ended the stream, else the upstream's failure, with the event's status. */
export function streamEventError(event: { readonly status: number; readonly message: string; readonly code?: string }): GatewayError {
  return new GatewayError(errorByCode(event.code) ?? errors.upstreamError, event.message, { status: event.status });
}
