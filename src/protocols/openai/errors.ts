// OpenAI-style error body, the shape every OpenAI SDK parses: {"error":{message,type,code,param}}.

import type { GatewayError } from "../../errors/gateway-error.js";

/** Renders a gateway error as an OpenAI-style JSON body. */
export function renderOpenAIError(err: GatewayError): string {
  return JSON.stringify({
    error: { message: err.message, type: err.type, code: err.code, param: null },
  });
}
