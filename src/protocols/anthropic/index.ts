// The messages protocol's two spokes: inbound (clients speaking /v1/messages) and
// outbound (`anthropic` channels), assembled from the one-job files beside this one.

import type { InboundAdapter, OutboundAdapter } from "../adapter.js";
import { isObject } from "./fields.js";
import { decodeMessagesRequest } from "./request-decode.js";
import { encodedMaxTokens, encodeMessagesRequest } from "./request-encode.js";
import { decodeMessagesResponse, encodeMessagesResponse } from "./response.js";
import { MessagesStreamDecoder } from "./stream-decode.js";
import { MessagesStreamEncoder } from "./stream-encode.js";

/** Serves clients of the messages protocol (`POST /v1/messages`). */
export const messagesInbound: InboundAdapter = Object.freeze<InboundAdapter>({
  wire: "messages",
  decodeRequest: (json) => decodeMessagesRequest(json),
  encodeResponse: (response) => encodeMessagesResponse(response),
  streamEncoder: () => new MessagesStreamEncoder(),
  streamTrailer: "",
  fieldNames: {
    temperature: "temperature", topK: "top_k", responseFormat: "output_config.format",
    parallelToolCalls: "tool_choice.disable_parallel_tool_use",
  },
});

/** Talks to `anthropic` channels. The integrator adds the `x-api-key` and
 * `anthropic-version: 2023-06-01` headers (and passes `anthropic-beta` through). */
export const messagesOutbound: OutboundAdapter = Object.freeze<OutboundAdapter>({
  path: () => "/v1/messages",
  encodeRequest: (request, upstreamModel) => encodeMessagesRequest(request, upstreamModel),
  decodeResponse: (json) => decodeMessagesResponse(json),
  streamDecoder: () => new MessagesStreamDecoder(),
  outputCap: (request) => encodedMaxTokens(request),
  errorMessage: (json) => {
    const error = isObject(json) ? json.error : undefined;
    return isObject(error) && typeof error.message === "string" ? error.message : undefined;
  },
});
