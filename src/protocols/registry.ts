// Which adapters serve which route and channel protocol: the hub's wiring, as data.

import type { Units } from "../billing/cost.js";
import type { MultipartFile } from "../media/multipart.js";
import type { ChannelProtocol } from "../runtime/types.js";
import type { InboundAdapter, OutboundAdapter } from "./adapter.js";
import { messagesInbound, messagesOutbound } from "./anthropic/index.js";
import { messagesPassthrough } from "./anthropic/passthrough.js";
import { generateInbound, generateOutbound } from "./gemini/index.js";
import { generatePassthrough } from "./gemini/passthrough.js";
import { chatInbound, chatOutbound } from "./openai/index.js";
import {
  chatPassthrough, embeddingsPassthrough, moderationsPassthrough, rerankPassthrough, rerankRules, responsesPassthrough,
} from "./openai/passthrough.js";
import {
  imageEditRules, imageEditsPassthrough, imagesPassthrough, imageRules, speechPassthrough, speechRules,
  transcriptionRules, transcriptionsPassthrough, videoRules, videosPassthrough,
} from "./openai/media-passthrough.js";
import type { PassthroughSpec } from "./passthrough.js";

/** How a model-calling route reaches channels: untouched to its own protocol, and (when it
 * has an inbound adapter) converted to the others. */
export interface RouteProtocol {
  readonly passthrough: PassthroughSpec;
  readonly inbound?: InboundAdapter;
  /** Checks a request the route has rules for (400 naming the field) and returns the
   * non-token units it is billed by. */
  readonly rules?: (json: Record<string, unknown>, files?: readonly MultipartFile[]) => Units | undefined;
}

export const routeProtocols: Readonly<Record<string, RouteProtocol>> = Object.freeze({
  "chat-completions": { passthrough: chatPassthrough, inbound: chatInbound },
  messages: { passthrough: messagesPassthrough, inbound: messagesInbound },
  "generate-content": { passthrough: generatePassthrough, inbound: generateInbound },
  // The responses protocol has no canonical mapping yet: OpenAI-protocol channels only.
  responses: { passthrough: responsesPassthrough },
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

export const outboundAdapters: Readonly<Record<ChannelProtocol, OutboundAdapter>> = Object.freeze({
  openai: chatOutbound,
  anthropic: messagesOutbound,
  gemini: generateOutbound,
});
