// A bedrock channel's settings: the region (required: it is in the host and in every
// signature), an optional base_url replacing the regional host, and its credentials, from
// `credentials:` (an access key or an API key) and `keys`. Problems name the key, never
// its secret.

import { foreignSettings, type CompiledKind, type RawKindChannel } from "../kind.js";
import { accessKeyString, credentialOf } from "./credentials.js";

/** The fields `credentials:` takes on this kind. */
const CREDENTIAL_FIELDS = ["access_key_id", "secret_access_key", "session_token", "api_key"];

/** Bedrock Runtime's regional host. */
export function regionalBaseUrl(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

export function compileBedrock(raw: RawKindChannel): CompiledKind {
  const problems = foreignSettings(raw, "bedrock", ["region", "credentials"]);
  const region = raw.region;
  if (region === undefined || region === "") problems.push("region is required for kind bedrock (e.g. us-east-1)");
  const keys: string[] = [];
  const fromCredentials = credentialsKey(raw.credentials, problems);
  if (fromCredentials !== undefined) keys.push(fromCredentials);
  (raw.keys ?? []).forEach((key, i) => {
    if (key === "") return; // an unset ${VAR:-}, as on every kind
    if (credentialOf(key) === undefined) problems.push(`keys[${i}] is neither ACCESS_KEY_ID:SECRET[:SESSION_TOKEN] nor a Bedrock API key`);
    else keys.push(key);
  });
  return {
    settings: region ? { region } : {},
    keys,
    baseUrl: raw.base_url ?? regionalBaseUrl(region || "region-missing"),
    problems,
  };
}

/** The key string `credentials:` gives; undefined when it gives none (absent, or every
 * value empty: unset ${VAR:-} references). */
function credentialsKey(credentials: Readonly<Record<string, string>> | undefined, problems: string[]): string | undefined {
  if (credentials === undefined) return undefined;
  // The schema's credentials are every kind's (Azure's Entra fields too): refuse the others'.
  const foreign = Object.keys(credentials).filter((field) => !CREDENTIAL_FIELDS.includes(field));
  for (const field of foreign) problems.push(`credentials.${field} is not a credential of kind bedrock (it takes access_key_id, secret_access_key, session_token or api_key)`);
  if (foreign.length > 0) return undefined;
  const { access_key_id: id = "", secret_access_key: secret = "", session_token: session = "", api_key: apiKey = "" } = credentials;
  const pair = id !== "" || secret !== "" || session !== "";
  if (apiKey !== "" && pair) {
    problems.push("credentials: either api_key or access_key_id and secret_access_key, not both");
    return undefined;
  }
  if (apiKey !== "") {
    if (apiKey.includes(":")) {
      problems.push("credentials.api_key is not a Bedrock API key (it holds a colon)");
      return undefined;
    }
    return apiKey;
  }
  if (!pair) return undefined;
  if (id === "" || secret === "") {
    problems.push("credentials: access_key_id and secret_access_key go together (one is missing or empty)");
    return undefined;
  }
  for (const [name, value] of [["access_key_id", id], ["secret_access_key", secret], ["session_token", session]] as const) {
    if (value.includes(":")) {
      problems.push(`credentials.${name} holds a colon, which no AWS credential does`);
      return undefined;
    }
  }
  return accessKeyString(id, secret, session || undefined);
}
