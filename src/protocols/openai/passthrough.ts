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
