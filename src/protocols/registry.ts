// Which adapters serve which route and channel protocol: the hub's wiring, as data.

import type { MultipartFile } from "../media/multipart.js";
import type { Protocol, Endpoint } from "../runtime/types.js";
import type { InboundAdapter, OutboundAdapter } from "./adapter.js";
import { targetRouteOf, type HubRoute } from "./field-policy.js";
import { messagesInbound, messagesOutbound } from "./anthropic/index.js";
import { messagesPassthrough } from "./anthropic/passthrough.js";
import { messagesCountTokens } from "./anthropic/count-tokens.js";
import type { CountTokensSpec } from "./count-tokens.js";
import { generateInbound, generateOutbound } from "./gemini/index.js";
import { generatePassthrough } from "./gemini/passthrough.js";
import { generateCountTokens } from "./gemini/count-tokens.js";
import { chatInbound, chatOutbound } from "./openai/index.js";
import { responsesInbound } from "./openai/responses-inbound.js";
import { responsesOutbound } from "./openai/responses-outbound.js";
import {
  chatPassthrough, embeddingsPassthrough, moderationsPassthrough, rerankPassthrough, rerankRules, responsesPassthrough,
} from "./openai/passthrough.js";
import {
  imageEditRules, imageEditsPassthrough, imagesPassthrough, imageRules, speechPassthrough, speechRules,
  transcriptionRules, transcriptionsPassthrough, videoRules, videosPassthrough,
} from "./openai/media-passthrough.js";
import type { PassthroughSpec } from "./passthrough.js";
import type { Units } from "./usage.js";
import { serviceTierRules } from "./variants.js";

/** How a model-calling route reaches channels: untouched to its own protocol, and (when it
 * has an inbound adapter) converted to the others. */
export interface RouteProtocol {
  readonly passthrough: PassthroughSpec;
  readonly inbound?: InboundAdapter;
  /** Checks a request the route has rules for (400 naming the field) and returns the
   * non-token units it is billed by; `tokenPriced`: the model is priced by tokens. */
  readonly rules?: (json: Record<string, unknown>, files?: readonly MultipartFile[], tokenPriced?: boolean) => Units | undefined;
}

export const routeProtocols: Readonly<Record<string, RouteProtocol>> = Object.freeze({
  // The service tier a request asks is the price's variant until the answer names one.
  "chat-completions": { passthrough: chatPassthrough, inbound: chatInbound, rules: serviceTierRules },
  messages: { passthrough: messagesPassthrough, inbound: messagesInbound, rules: serviceTierRules },
  "generate-content": { passthrough: generatePassthrough, inbound: generateInbound },
  // Passed through for models priced for responses alone; converted for models priced for
  // chat too (`endpoint: [chat, responses]`), whatever the channel (passesThrough).
  responses: { passthrough: responsesPassthrough, inbound: responsesInbound, rules: serviceTierRules },
  // OpenAI-protocol endpoints without a canonical form: OpenAI-protocol channels only.
  embeddings: { passthrough: embeddingsPassthrough },
  moderations: { passthrough: moderationsPassthrough },
  rerank: { passthrough: rerankPassthrough, rules: rerankRules },
  images: { passthrough: imagesPassthrough, rules: imageRules },
  "image-edits": { passthrough: imageEditsPassthrough, rules: imageEditRules },
  speech: { passthrough: speechPassthrough, rules: speechRules },
  transcriptions: { passthrough: transcriptionsPassthrough, rules: transcriptionRules },
  videos: { passthrough: videosPassthrough, rules: videoRules },
});

/**
 * Whether a request of a route goes untouched to a channel of this protocol: the route's
 * own protocol and, for /v1/responses, a model the OpenAI-protocol channel serves on its
 * responses API (priced for responses, not chat). A model priced for chat as well is a chat
 * model there: its responses clients are converted to chat-completions. Chat-completions
 * clients of a responses-only model are converted the other way (outboundAdapterFor).
 */
export function passesThrough(routeName: string, route: RouteProtocol, channelProtocol: Protocol, endpoints: ReadonlySet<Endpoint>): boolean {
  if (channelProtocol !== route.passthrough.channelProtocol) return false;
  if (routeName === "chat-completions") return !servedOnResponses(endpoints);
  return routeName !== "responses" || !endpoints.has("chat");
}

/** The token-counting routes: passed through to a channel of their protocol, estimated for others. */
export const countTokensProtocols: Readonly<Record<string, CountTokensSpec>> = Object.freeze({
  "messages-count-tokens": messagesCountTokens,
  "generate-content-count-tokens": generateCountTokens,
});

export const outboundAdapters: Readonly<Record<Protocol, OutboundAdapter>> = Object.freeze({
  openai: chatOutbound,
  anthropic: messagesOutbound,
  gemini: generateOutbound,
});

/** A model priced for responses but not chat: OpenAI-protocol channels serve it only on
 * /v1/responses (e.g. a codex model). */
function servedOnResponses(endpoints: ReadonlySet<Endpoint>): boolean {
  return endpoints.has("responses") && !endpoints.has("chat");
}

/** The outbound adapter a converted request uses for a channel and the model's endpoints:
 * the channel protocol's own, but the responses protocol on an OpenAI-protocol channel for
 * a model served only there. */
export function outboundAdapterFor(channelProtocol: Protocol, endpoints: ReadonlySet<Endpoint>): OutboundAdapter {
  return channelProtocol === "openai" && servedOnResponses(endpoints) ? responsesOutbound : outboundAdapters[channelProtocol];
}

/** The wire protocol outboundAdapterFor speaks, for field-policy.ts's table. */
export function targetRouteFor(channelProtocol: Protocol, endpoints: ReadonlySet<Endpoint>): HubRoute {
  return channelProtocol === "openai" && servedOnResponses(endpoints) ? "responses" : targetRouteOf(channelProtocol);
}
