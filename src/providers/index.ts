// Provider manifests by channel protocol.

import type { Protocol } from "../runtime/types.js";
import { anthropicProvider } from "./anthropic.js";
import { geminiProvider } from "./gemini.js";
import { openaiProvider } from "./openai.js";
import type { ProviderSpec } from "./provider.js";

export const providers: Readonly<Record<Protocol, ProviderSpec>> = Object.freeze({
  openai: openaiProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
});
