// The chat-completions protocol as a spoke of the canonical hub: the inbound adapter for
// clients that call /v1/chat/completions, the outbound adapter for OpenAI-protocol channels.

import type { InboundAdapter, OutboundAdapter } from "../adapter.js";
import { isObject } from "./chat-common.js";
import { decodeChatRequest } from "./chat-decode-request.js";
import { encodeChatRequest } from "./chat-encode-request.js";
import { decodeChatResponse, encodeChatResponse } from "./chat-response.js";
import { chatStreamDecoder } from "./chat-stream-decode.js";
import { CHAT_STREAM_TRAILER, chatStreamEncoder } from "./chat-stream-encode.js";

/** Serves chat-completions clients whose model lives on a channel of another protocol. */
export const chatInbound: InboundAdapter = {
  wire: "chat-completions",
  decodeRequest: (json) => decodeChatRequest(json),
  encodeResponse: encodeChatResponse,
  streamEncoder: chatStreamEncoder,
  streamTrailer: CHAT_STREAM_TRAILER,
  fieldNames: {
    candidates: "n", frequencyPenalty: "frequency_penalty", presencePenalty: "presence_penalty", seed: "seed",
    temperature: "temperature", topK: "top_k", responseFormat: "response_format", parallelToolCalls: "parallel_tool_calls",
  },
};

/** Talks chat-completions to an OpenAI-protocol channel on behalf of another protocol's client. */
export const chatOutbound: OutboundAdapter = {
  path: () => "/v1/chat/completions",
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  streamDecoder: chatStreamDecoder,
  errorMessage(json) {
    if (!isObject(json)) return undefined;
    const err = json.error;
    if (isObject(err) && typeof err.message === "string") return err.message;
    if (typeof err === "string") return err;
    return typeof json.message === "string" ? json.message : undefined;
  },
};
