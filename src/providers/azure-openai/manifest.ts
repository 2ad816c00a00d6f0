// Azure OpenAI: OpenAI's API on an Azure resource. It speaks the openai protocol; what
// differs is the URL (deployment URLs with an api-version, or the v1 API: urls.ts), the
// key's header (`api-key`), and its error codes (key-faults.ts).

import type { Channel } from "../../runtime/types.js";
import { foreignSettings, type CompiledKind, type ProviderKind, type RawKindChannel, type WireRequest } from "../kind.js";
import { openaiProvider } from "../openai/manifest.js";
import { azureKeyFaults } from "./key-faults.js";
import { azureUrl } from "./urls.js";

/** A key written `bearer:<token>` is a Microsoft Entra ID access token, sent as
 * `Authorization: Bearer` (the operator refreshes it by reloading the config). */
const BEARER_PREFIX = "bearer:";

function azureAuthHeaders(key: string): Record<string, string> {
  return key.startsWith(BEARER_PREFIX) ? { authorization: `Bearer ${key.slice(BEARER_PREFIX.length)}` } : { "api-key": key };
}

function compileAzure(raw: RawKindChannel): CompiledKind {
  const problems = foreignSettings(raw, "azure-openai", ["api_version"]);
  if (raw.base_url === undefined) problems.push("base_url is required for kind azure-openai (the resource's endpoint, e.g. https://NAME.openai.azure.com)");
  if (raw.api_version !== undefined && !/^[0-9A-Za-z.-]+$/.test(raw.api_version)) problems.push(`api_version ${JSON.stringify(raw.api_version)} is not an api-version (e.g. 2024-10-21)`);
  return {
    settings: raw.api_version === undefined ? {} : { apiVersion: raw.api_version },
    keys: (raw.keys ?? []).filter((k) => k !== ""),
    baseUrl: raw.base_url ?? "http://base-url.invalid",
    problems,
  };
}

function prepareAzure(channel: Channel, _key: string, request: WireRequest): WireRequest {
  return { ...request, url: azureUrl(channel.baseUrl, request.path, request.upstreamModel, channel.settings.apiVersion) };
}

export const azureOpenaiProvider: ProviderKind = Object.freeze({
  kind: "azure-openai",
  protocol: "openai",
  requestHeaders: openaiProvider.requestHeaders,
  paths: openaiProvider.paths,
  authHeaders: azureAuthHeaders,
  // Headers naming the operator's deployment, region and serving session: they describe
  // the operator's Azure resource. apim-request-id is relayed: it names the request (as
  // OpenAI's x-request-id does), not the account, and is what Azure support asks for.
  privateResponseHeaders: Object.freeze(["x-ms-deployment-name", "x-ms-region", "azureml-model-session", "azureml-model-group"]),
  keyFaults: azureKeyFaults,
  compile: compileAzure,
  prepare: prepareAzure,
});
