// What an OpenAI-protocol upstream needs from us: its paths and how it authenticates.

import type { ProviderSpec } from "./provider.js";

export const openaiProvider: ProviderSpec = Object.freeze({
  protocol: "openai",
  paths: Object.freeze({ chat: "/v1/chat/completions" }),
  authHeaders: (key: string) => ({ authorization: `Bearer ${key}` }),
  /** Response headers that describe our upstream account; clients never see them. */
  privateResponseHeaders: Object.freeze(["openai-organization", "openai-project"]),
});
