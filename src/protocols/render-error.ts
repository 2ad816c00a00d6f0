// Picks the error shape of the caller's wire family; one entry point for every stage.

import type { GatewayError } from "../errors/gateway-error.js";
import { renderAnthropicError } from "./anthropic/errors.js";
import { renderGeminiError } from "./gemini/errors.js";
import { renderOpenAIError } from "./openai/errors.js";

/** The three error/auth families a route can belong to. */
export type WireFamily = "openai" | "anthropic" | "gemini";

const renderers: Record<WireFamily, (err: GatewayError) => string> = {
  openai: renderOpenAIError,
  anthropic: renderAnthropicError,
  gemini: renderGeminiError,
};

/** Serialises a gateway error for the given wire family. */
export function renderError(family: WireFamily, err: GatewayError): string {
  return renderers[family](err);
}
