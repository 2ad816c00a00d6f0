// Pass-through specs of the OpenAI-protocol routes: chat-completions and responses.

import { lastObjectField } from "../json-tail.js";
import { renamedBody, type PassthroughSpec } from "../passthrough.js";
import { SseUsageTap } from "../usage-tap.js";
import { isStream, prepareChatBody } from "./chat-request.js";
import { ChatStreamTap, generatedChars } from "./chat-stream-tap.js";
import { normalizeResponsesUsage, responsesGeneratedChars, responsesUsageReader } from "./responses-usage.js";
import { normalizeOpenAIUsage } from "./usage.js";

export const chatPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "openai",
  isStream: (req) => isStream(req.json),
  path: () => "/v1/chat/completions",
  body: (req, upstreamModel) => prepareChatBody(req.raw, req.json, upstreamModel),
  streamTap: (strip) => new ChatStreamTap(strip),
  bodyUsage: (body) => normalizeOpenAIUsage(lastObjectField(body, "usage")),
  bodyChars: (body) => generatedChars(body.toString("utf8")),
});

export const responsesPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "openai",
  isStream: (req) => req.json.stream === true,
  path: () => "/v1/responses",
  body: (req, upstreamModel) => ({ body: renamedBody(req, upstreamModel), stripUsage: false }),
  streamTap: () => new SseUsageTap(responsesUsageReader()),
  bodyUsage: (body) => normalizeResponsesUsage(lastObjectField(body, "usage")),
  bodyChars: (body) => responsesGeneratedChars(body.toString("utf8")),
});

/** Whole-body OpenAI endpoints: no stream, usage (if any) in the body's `usage`. */
function wholeBody(path: string): PassthroughSpec {
  return Object.freeze<PassthroughSpec>({
    channelProtocol: "openai",
    isStream: () => false,
    path: () => path,
    body: (req, upstreamModel) => ({ body: renamedBody(req, upstreamModel), stripUsage: false }),
    streamTap: () => new ChatStreamTap(false), // never streamed; present for the interface
    bodyUsage: (body) => normalizeOpenAIUsage(lastObjectField(body, "usage")),
    bodyChars: () => 0,
  });
}

/** /v1/embeddings: usage.prompt_tokens is the input billed. */
export const embeddingsPassthrough = wholeBody("/v1/embeddings");
/** /v1/moderations: usually free; billed by the model's price like any other. */
export const moderationsPassthrough = wholeBody("/v1/moderations");
