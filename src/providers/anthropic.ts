// What a messages-protocol upstream needs from us: its path, its key header, and the
// protocol version it requires.

import type { ProviderSpec } from "./provider.js";

/** The version sent when the client did not choose one (conversions from other protocols). */
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

export const anthropicProvider: ProviderSpec = Object.freeze({
  protocol: "anthropic",
  paths: Object.freeze({ messages: "/v1/messages" }),
  authHeaders: (key: string) => ({ "x-api-key": key }),
  privateResponseHeaders: Object.freeze(["anthropic-organization-id"]),
});
