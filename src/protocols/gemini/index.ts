// The generate-content protocol's two sides of the hub: `geminiInbound` serves Gemini clients
// whose requests go to other protocols' channels, `geminiOutbound` talks to gemini channels.

import type { InboundAdapter, OutboundAdapter } from "../adapter.js";
import { generateStreamFraming } from "./json-array-stream.js";
import { decodeGeminiRequest } from "./request-decode.js";
import { encodeGeminiRequest, geminiPath } from "./request-encode.js";
import { decodeGeminiResponse, encodeGeminiResponse, geminiErrorMessage } from "./response.js";
import { geminiStreamDecoder } from "./stream-decode.js";
import { geminiStreamEncoder } from "./stream-encode.js";

/**
 * Gemini clients (`/v1beta/models/{model}:generateContent` and `:streamGenerateContent`,
 * SSE with `?alt=sse`, else a JSON array). The model and stream flag come from the URL.
 */
export const generateInbound: InboundAdapter = {
  wire: "generate-content",
  decodeRequest: decodeGeminiRequest,
  encodeResponse: (response) => encodeGeminiResponse(response),
  streamEncoder: () => geminiStreamEncoder(),
  streamTrailer: "",
  streamFraming: generateStreamFraming,
  fieldNames: {
    candidates: "generationConfig.candidateCount", frequencyPenalty: "generationConfig.frequencyPenalty",
    presencePenalty: "generationConfig.presencePenalty", seed: "generationConfig.seed",
    temperature: "generationConfig.temperature", topK: "generationConfig.topK",
    responseFormat: "generationConfig.responseMimeType",
  },
};

/** Gemini channels: `x-goog-api-key` auth; streams need `?alt=sse` (in the path). */
export const generateOutbound: OutboundAdapter = {
  path: geminiPath,
  encodeRequest: encodeGeminiRequest,
  decodeResponse: decodeGeminiResponse,
  streamDecoder: geminiStreamDecoder,
  errorMessage: geminiErrorMessage,
};
