// OpenAI-compatible vendors (DeepSeek, OpenRouter, Mistral, xAI, Groq, vLLM, Ollama): the
// openai protocol on another host. A channel names its vendor with `preset:` (presets.ts);
// the preset gives the host, whether keys are optional, paths that differ, the reasoning
// field, and key-fault rules where the vendor's differ.

import type { Channel } from "../../runtime/types.js";
import { foreignSettings, type CompiledKind, type ProviderKind, type RawKindChannel, type WireRequest } from "../kind.js";
import { openaiProvider } from "../openai/manifest.js";
import { channelUrl } from "../provider.js";
import { compatibleKeyFaults } from "./key-faults.js";
import { presetNames, presets, type Preset } from "./presets.js";

/** The one key of a channel whose preset needs none and was given none: it enables the
 * channel, and no auth header is sent for it. */
export const NO_KEY = "<no key>";

function compileCompatible(raw: RawKindChannel): CompiledKind {
  const problems = foreignSettings(raw, "openai-compatible", ["preset"]);
  const preset: Preset | undefined = raw.preset === undefined ? undefined : presets[raw.preset];
  if (raw.preset === undefined) problems.push(`preset is required for kind openai-compatible (one of ${presetNames.join(", ")})`);
  else if (!preset) problems.push(`preset ${JSON.stringify(raw.preset)} is not one of ${presetNames.join(", ")}`);
  const baseUrl = raw.base_url ?? preset?.baseUrl;
  if (preset && baseUrl === undefined) problems.push(`base_url is required for preset ${raw.preset} (the server's address)`);
  const given = (raw.keys ?? []).filter((k) => k !== "");
  return {
    settings: raw.preset === undefined ? {} : { preset: raw.preset },
    keys: given.length === 0 && preset?.keysOptional ? [NO_KEY] : given,
    baseUrl: baseUrl ?? "http://base-url.invalid",
    problems,
  };
}

function presetOf(channel: Pick<Channel, "settings">): Preset | undefined {
  return channel.settings.preset === undefined ? undefined : presets[channel.settings.preset];
}

/** The vendor's path for the request, where its preset moves it. */
function prepareCompatible(channel: Channel, _key: string, request: WireRequest): WireRequest {
  const paths = presetOf(channel)?.paths;
  if (!paths) return request;
  const q = request.path.indexOf("?");
  const bare = q === -1 ? request.path : request.path.slice(0, q);
  const moved = paths[bare];
  if (moved === undefined) return request;
  const path = q === -1 ? moved : moved + request.path.slice(q);
  return { ...request, path, url: channelUrl(channel.baseUrl, path) };
}

export const openaiCompatibleProvider: ProviderKind = Object.freeze({
  kind: "openai-compatible",
  protocol: "openai",
  requestHeaders: openaiProvider.requestHeaders,
  paths: openaiProvider.paths,
  authHeaders: (key: string): Record<string, string> => key === NO_KEY ? {} : { authorization: `Bearer ${key}` },
  privateResponseHeaders: openaiProvider.privateResponseHeaders,
  keyFaults: compatibleKeyFaults,
  compile: compileCompatible,
  prepare: prepareCompatible,
  chatReasoningField: (channel: Channel) => presetOf(channel)?.chatReasoningField,
  channelKeyFaults: (channel: Channel) => presetOf(channel)?.keyFaults,
});
