// Vertex AI: Claude (protocol anthropic, the default) and Gemini (protocol gemini) under a
// Google Cloud project, authorized by a service account's OAuth token. Requests are built
// as for the first-party API of the channel's protocol, then made Vertex's (request.ts);
// Google's errors are read into that protocol's shape (errors.ts).

import { COMMON_PASSED_HEADERS } from "../provider.js";
import type { Channel } from "../../runtime/types.js";
import type { ProviderKind, RawKindChannel, WireAnswer, WireRequest } from "../kind.js";
import { DEFAULT_ANTHROPIC_VERSION, KNOWN_ANTHROPIC_BETAS } from "../anthropic/manifest.js";
import { vertexAnswer, vertexKeyFaults } from "./errors.js";
import { vertexRequest } from "./request.js";
import { compileVertex } from "./settings.js";
import { ServiceAccountTokens } from "./token.js";

/** Tokens by key file: bounded, one mint in flight per file (token.ts). */
const tokens = new ServiceAccountTokens();

export const vertexProvider: ProviderKind = Object.freeze({
  kind: "vertex",
  protocol: "anthropic",
  protocols: Object.freeze(["anthropic", "gemini"] as const),
  requestHeaders: Object.freeze({
    // anthropic-version is read by the exchanges (the client's Messages version) and
    // dropped in prepare: Vertex takes its own, in the body. Betas pass as on Anthropic.
    passed: new Set([...COMMON_PASSED_HEADERS, "anthropic-version"]),
    fixed: Object.freeze({ "anthropic-version": DEFAULT_ANTHROPIC_VERSION }),
    betaHeader: "anthropic-beta",
    defaultBetas: new Set(KNOWN_ANTHROPIC_BETAS),
  }),
  paths: Object.freeze({}),
  // The key is a file path: never a header. The token goes on in prepare.
  authHeaders: () => ({}),
  privateResponseHeaders: Object.freeze([]),
  keyFaults: vertexKeyFaults,
  compile: (raw: RawKindChannel) => compileVertex(raw),
  prepare: async (channel: Channel, key: string, request: WireRequest) => vertexRequest(channel, request, await tokens.token(key)),
  answer: (channel: Channel, answer: WireAnswer) => vertexAnswer(channel, answer),
});
