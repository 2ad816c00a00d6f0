// Pass-through spec of the messages route: body and headers (anthropic-version,
// anthropic-beta, cache_control, thinking) reach the upstream as sent, but for model_map.

import { answerField, renamedBody, type PassthroughSpec } from "../passthrough.js";
import { streamCost } from "../stream-cost.js";
import { portableMessages } from "./portable.js";
import { SseUsageTap } from "../usage-tap.js";
import { renderAnthropicStreamError } from "./errors.js";
import { anthropicGeneratedChars, anthropicStreamEnds, anthropicUsageReader } from "./stream-tap.js";
import { normalizeAnthropicUsage } from "./usage.js";

export const messagesPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "anthropic",
  isStream: (req) => req.json.stream === true,
  path: () => "/v1/messages",
  portable: portableMessages,
  body: (req, upstreamModel) => ({ body: renamedBody(req, upstreamModel), stripUsage: false }),
  streamTap: () => new SseUsageTap(anthropicUsageReader(), anthropicStreamEnds),
  streamError: (err) => renderAnthropicStreamError(err),
  streamCost: streamCost.messages,
  bodyUsage: (json) => normalizeAnthropicUsage(answerField(json, "usage")),
  bodyChars: (body) => anthropicGeneratedChars(body.toString("utf8")),
});
