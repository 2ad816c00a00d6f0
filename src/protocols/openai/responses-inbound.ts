// The responses protocol as an inbound spoke of the hub: serves /v1/responses clients whose
// model is priced for responses and chat (`endpoint: [chat, responses]`) on a channel that
// does not speak the responses protocol for it.

import type { InboundAdapter } from "../adapter.js";
import { decodeResponsesRequest } from "./responses-request-decode.js";
import { encodeResponsesResponse } from "./responses-response-encode.js";
import { responsesStreamEncoder } from "./responses-stream-encode.js";

export const responsesInbound: InboundAdapter = {
  wire: "responses",
  decodeRequest: (json) => decodeResponsesRequest(json),
  encodeResponse: encodeResponsesResponse,
  streamEncoder: responsesStreamEncoder,
  // The API ends a stream with its response.completed event: no trailer.
  streamTrailer: "",
  fieldNames: {
    maxTokens: "max_output_tokens", temperature: "temperature", topP: "top_p", tools: "tools", toolChoice: "tool_choice",
    parallelToolCalls: "parallel_tool_calls", reasoning: "reasoning.effort", responseFormat: "text.format", user: "user",
    system: "instructions", messages: "input",
  },
};
