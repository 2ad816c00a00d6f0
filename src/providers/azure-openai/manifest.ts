// Azure OpenAI: OpenAI's API on an Azure resource. It speaks the openai protocol; what
// differs is the URL (deployment URLs with an api-version, or the v1 API: urls.ts), the
// credential (an `api-key`, a `bearer:` Entra token, or Entra client credentials the
// gateway mints tokens with: entra-token.ts), and its error codes (key-faults.ts).

import type { Channel } from "../../runtime/types.js";
import { CredentialFailure, type ProviderKind, type WireRequest } from "../kind.js";
import { openaiProvider } from "../openai/manifest.js";
import { TokenHolder } from "../token-holder.js";
import { compileAzure } from "./compile.js";
import { entraCredentialOf, isEntraKey } from "./entra-credential.js";
import { mintEntraToken } from "./entra-token.js";
import { azureKeyFaults } from "./key-faults.js";
import { azureUrl } from "./urls.js";

/** A key written `bearer:<token>` is a Microsoft Entra ID access token, sent as
 * `Authorization: Bearer` (the operator refreshes it by reloading the config). */
const BEARER_PREFIX = "bearer:";

/** The key's header: none for Entra client credentials (prepare sends the token minted
 * with them; the secret itself never goes in a header). */
function azureAuthHeaders(key: string): Record<string, string> {
  if (isEntraKey(key)) return {};
  return key.startsWith(BEARER_PREFIX) ? { authorization: `Bearer ${key.slice(BEARER_PREFIX.length)}` } : { "api-key": key };
}

/** Entra ID tokens by credential (the key string): kept across reloads, refreshed before
 * they expire, one mint at a time per credential (../token-holder.ts). */
const entraTokens = new TokenHolder();

/** The request on Azure's URL; for Entra client credentials, with a token minted for them
 * (the exchange set no auth header: authHeaders gives none for such a key). */
function prepareAzure(channel: Channel, key: string, request: WireRequest): WireRequest | Promise<WireRequest> {
  const url = azureUrl(channel.baseUrl, request.path, request.upstreamModel, channel.settings.apiVersion);
  if (!isEntraKey(key)) return { ...request, url };
  const credential = entraCredentialOf(key);
  if (credential === undefined) return Promise.reject(new CredentialFailure("auth", "the key is not a well-formed Entra ID client credential"));
  return entraTokens.token(key, () => mintEntraToken(credential)).then((token) => ({ ...request, url, headers: withBearer(request.headers, token) }));
}

/** The headers with `token` as the only credential. */
function withBearer(headers: Record<string, string | string[]>, token: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower !== "authorization" && lower !== "api-key") out[name] = value;
  }
  out.authorization = `Bearer ${token}`;
  return out;
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
