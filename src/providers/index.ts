// Provider kinds by name (gateway.yaml's channels[].kind), and the first-party ones by the
// protocol they speak (a channel that names only `protocol:`).

import type { Channel, KindName, Protocol } from "../runtime/types.js";
import { anthropicProvider } from "./anthropic/manifest.js";
import { azureOpenaiProvider } from "./azure-openai/manifest.js";
import { bedrockProvider } from "./bedrock/manifest.js";
import { geminiProvider } from "./gemini/manifest.js";
import type { ProviderKind } from "./kind.js";
import type { KeyFaultRules } from "./provider.js";
import { openaiCompatibleProvider } from "./openai-compatible/manifest.js";
import { openaiProvider } from "./openai/manifest.js";
import { vertexProvider } from "./vertex/manifest.js";

export const providerKinds: Readonly<Record<KindName, ProviderKind>> = Object.freeze({
  openai: openaiProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
  "azure-openai": azureOpenaiProvider,
  "openai-compatible": openaiCompatibleProvider,
  bedrock: bedrockProvider,
  vertex: vertexProvider,
});

/** The first-party kind of each protocol. */
export const providers: Readonly<Record<Protocol, ProviderKind>> = Object.freeze({
  openai: openaiProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
});

/** How the channel's provider says its key is at fault: the rules its settings pick, else
 * its kind's. */
export function keyFaultsOf(channel: Channel): KeyFaultRules {
  const kind = kindOf(channel);
  return kind.channelKeyFaults?.(channel) ?? kind.keyFaults;
}

/** The kind a channel names (the config refused a kind it does not know). */
export function kindOf(channel: Pick<Channel, "kind">): ProviderKind {
  const kind = providerKinds[channel.kind];
  if (!kind) throw new Error(`no provider kind ${channel.kind}`);
  return kind;
}
