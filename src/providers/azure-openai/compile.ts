// An azure-openai channel's settings: base_url (the resource's endpoint, required), an
// optional api_version, and its credentials: `keys` (api-key values, or `bearer:` Entra
// tokens) and `credentials:`, Entra ID client credentials the gateway mints tokens with,
// compiled into one key. Problems name the key, never a secret.

import { foreignSettings, type CompiledKind, type RawKindChannel } from "../kind.js";
import { DEFAULT_AUTHORITY_HOST, entraKeyString, isEntraKey } from "./entra-credential.js";

/** The fields `credentials:` takes on this kind. */
const CREDENTIAL_FIELDS = ["tenant_id", "client_id", "client_secret", "authority_host"];

/** A tenant as Entra names it in the authority's path: a GUID or a domain. */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;

export function compileAzure(raw: RawKindChannel): CompiledKind {
  const problems = foreignSettings(raw, "azure-openai", ["api_version", "credentials"]);
  if (raw.base_url === undefined) problems.push("base_url is required for kind azure-openai (the resource's endpoint, e.g. https://NAME.openai.azure.com)");
  if (raw.api_version !== undefined && !/^[0-9A-Za-z.-]+$/.test(raw.api_version)) problems.push(`api_version ${JSON.stringify(raw.api_version)} is not an api-version (e.g. 2024-10-21)`);
  const keys: string[] = [];
  const fromCredentials = credentialsKey(raw.credentials, problems);
  if (fromCredentials !== undefined) keys.push(fromCredentials);
  (raw.keys ?? []).forEach((key, i) => {
    if (key === "") return; // an unset ${VAR:-}, as on every kind
    // The form credentials: compiles to is not written by hand: it would be read as one.
    if (isEntraKey(key)) problems.push(`keys[${i}] starts with "entra:": give Entra ID client credentials in credentials (tenant_id, client_id, client_secret)`);
    else keys.push(key);
  });
  return {
    settings: raw.api_version === undefined ? {} : { apiVersion: raw.api_version },
    keys,
    baseUrl: raw.base_url ?? "http://base-url.invalid",
    problems,
  };
}

/** The key string `credentials:` gives; undefined when it gives none (absent, or every
 * value empty: unset ${VAR:-} references). */
function credentialsKey(credentials: Readonly<Record<string, string>> | undefined, problems: string[]): string | undefined {
  if (credentials === undefined) return undefined;
  const foreign = Object.keys(credentials).filter((field) => !CREDENTIAL_FIELDS.includes(field));
  for (const field of foreign) problems.push(`credentials.${field} is not a credential of kind azure-openai (it takes tenant_id, client_id, client_secret and authority_host)`);
  const { tenant_id: tenantId = "", client_id: clientId = "", client_secret: clientSecret = "", authority_host: authority = "" } = credentials;
  if (tenantId === "" && clientId === "" && clientSecret === "") return undefined;
  const missing = ([["tenant_id", tenantId], ["client_id", clientId], ["client_secret", clientSecret]] as const)
    .filter(([, value]) => value === "").map(([name]) => `credentials.${name}`);
  for (const name of missing) problems.push(`${name} is required for Entra ID client credentials (tenant_id, client_id and client_secret go together; is its \${VAR} set?)`);
  if (tenantId !== "" && !TENANT.test(tenantId)) problems.push("credentials.tenant_id is not a tenant id (a GUID) or a tenant domain (e.g. contoso.onmicrosoft.com)");
  const authorityHost = authorityHostOf(authority, problems);
  if (missing.length > 0 || foreign.length > 0 || authorityHost === undefined || !TENANT.test(tenantId)) return undefined;
  return entraKeyString({ authorityHost, tenantId, clientId, clientSecret });
}

/** authority_host (default Azure's public cloud) without a trailing slash; undefined, with a
 * problem, when it is not an http(s) URL. */
function authorityHostOf(value: string, problems: string[]): string | undefined {
  if (value === "") return DEFAULT_AUTHORITY_HOST;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    url = new URL("invalid:");
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    problems.push(`credentials.authority_host ${JSON.stringify(value)} is not an http(s) URL (e.g. https://login.microsoftonline.us)`);
    return undefined;
  }
  return url.href.replace(/\/+$/, "");
}
