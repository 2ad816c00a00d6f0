// Pass-through specs of the OpenAI-protocol routes: chat-completions and responses.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { answerField, limitedBody, wholeBody, type PassthroughSpec } from "../passthrough.js";
import { streamCost } from "../stream-cost.js";
import { portableInput } from "./portable.js";
import { SseUsageTap } from "../usage-tap.js";
import { renderOpenAIStreamError, renderResponsesStreamError } from "./errors.js";
import { isStream, prepareChatBody } from "./chat-request.js";
import { ChatStreamTap, generatedChars } from "./chat-stream-tap.js";
import { responseUsage, responsesGeneratedChars, responsesStreamEnds, responsesUsageReader } from "./responses-usage.js";
import { chatStoredReference, responsesStoredReference } from "./stored-references.js";
import { chatAnswerUsage } from "./usage.js";

export const chatPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "openai",
  isStream: (req) => isStream(req.json),
  path: () => "/v1/chat/completions",
  body: (req, upstreamModel) => prepareChatBody(req, upstreamModel),
  storedReference: chatStoredReference,
  streamTap: (strip) => new ChatStreamTap(strip),
  streamError: (err) => renderOpenAIStreamError(err),
  streamCost: streamCost["chat-completions"],
  bodyUsage: chatAnswerUsage,
  bodyChars: (body) => generatedChars(body.toString("utf8")),
});

export const responsesPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "openai",
  isStream: (req) => req.json.stream === true,
  path: () => "/v1/responses",
  portable: portableInput,
  body: (req, upstreamModel) => ({ body: limitedBody(req, upstreamModel, ["max_output_tokens"], req.members), stripUsage: false }),
  storedReference: responsesStoredReference,
  streamTap: () => new SseUsageTap(responsesUsageReader(), responsesStreamEnds),
  streamError: renderResponsesStreamError,
  streamCost: streamCost.responses,
  bodyUsage: (json) => responseUsage(json),
  bodyChars: (body) => responsesGeneratedChars(body.toString("utf8")),
  bodyAnswerId: (json) => {
    const id = answerField(json, "id");
    return typeof id === "string" ? id : undefined;
  },
});

/** /v1/embeddings: usage.prompt_tokens is the input billed. */
export const embeddingsPassthrough = wholeBody("/v1/embeddings");
/** /v1/moderations: usually free; billed by the model's price like any other. OpenAI's
 * answers carry no usage: a priced one is billed by estimate. */
export const moderationsPassthrough = wholeBody("/v1/moderations", { usageOptional: true });

interface RerankUsage {
  total_tokens?: number;
  prompt_tokens?: number;
}

/** /v1/rerank in the common (Jina, Cohere-compatible) shape: usage, when reported, is a
 * token count billed as input; models priced per_request are billed per call. */
export const rerankPassthrough = wholeBody("/v1/rerank", {
  bodyUsage: (json) => {
    const u = answerField(json, "usage") as RerankUsage | undefined;
    const tokens = u?.prompt_tokens ?? u?.total_tokens;
    const input = typeof tokens === "number" && tokens > 0 ? Math.floor(tokens) : 0;
    return { input, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
  },
});

/** A rerank request needs a query and at least one document. */
export function rerankRules(json: Record<string, unknown>): undefined {
  if (typeof json.query !== "string" || json.query === "") {
    throw new GatewayError(errors.missingParameter, "The 'query' parameter is required.");
  }
  if (!Array.isArray(json.documents) || json.documents.length === 0) {
    throw new GatewayError(errors.missingParameter, "The 'documents' parameter is required (a non-empty list).");
  }
  return undefined;
}
