// POST /v1/messages/count_tokens: passed through to anthropic channels' own endpoint;
// for other channels the body is read as a messages request (it is one without max_tokens)
// and estimated, answered as Anthropic's MessageTokensCount.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { countPassthrough, type CountTokensSpec } from "../count-tokens.js";
import { renamedBody } from "../passthrough.js";
import { array } from "./fields.js";
import { portableMessages } from "./portable.js";
import { messagesInbound } from "./index.js";

export const messagesCountTokens: CountTokensSpec = Object.freeze<CountTokensSpec>({
  passthrough: countPassthrough({
    channelProtocol: "anthropic",
    path: () => "/v1/messages/count_tokens",
    // Counted as it will be sent: without other providers' signatures.
    portable: portableMessages,
    body: (req, upstreamModel) => ({ body: renamedBody(req, upstreamModel), stripUsage: false }),
  }),
  check(json) {
    if (json.messages == null) throw new GatewayError(errors.missingParameter, "messages: is required");
    array(json.messages, "messages");
  },
  // A count names no output cap; the decoder requires one, and it does not change the count.
  canonical: (json) => messagesInbound.decodeRequest(json.max_tokens == null ? { ...json, max_tokens: 1 } : json, {}),
  answer: (estimate) => ({ input_tokens: estimate.text + estimate.image }),
});
