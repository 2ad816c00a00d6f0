// The responses protocol as an outbound spoke: how an OpenAI-protocol channel is spoken to
// for a model it serves only on /v1/responses (e.g. a codex model), whatever protocol the
// client speaks.

import type { OutboundAdapter } from "../adapter.js";
import { chatOutbound } from "./index.js";
import { encodedMaxOutputTokens, encodeResponsesRequest } from "./responses-request-encode.js";
import { decodeResponsesResponse } from "./responses-response-decode.js";
import { responsesStreamDecoder } from "./responses-stream-decode.js";

/** Talks the responses protocol to an OpenAI-protocol channel on behalf of another protocol's client. */
export const responsesOutbound: OutboundAdapter = {
  path: () => "/v1/responses",
  encodeRequest: encodeResponsesRequest,
  decodeResponse: decodeResponsesResponse,
  streamDecoder: responsesStreamDecoder,
  outputCap: (request) => (request.maxTokens === undefined ? undefined : encodedMaxOutputTokens(request.maxTokens)),
  // The responses API's error body is chat-completions' one: {"error":{"message",…}}.
  errorMessage: (json) => chatOutbound.errorMessage(json),
};
