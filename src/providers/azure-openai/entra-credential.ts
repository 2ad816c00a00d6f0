// Microsoft Entra ID client credentials (an app registration's tenant, client id and
// secret) as one channel key string, the form every key takes: `credentials:` in
// gateway.yaml is compiled into one, and prepare reads it back to mint tokens. The prefix
// tells it apart from an `api-key` value (hex) and a `bearer:` token.

/** Where Entra ID issues tokens in Azure's public cloud (sovereign clouds have their own). */
export const DEFAULT_AUTHORITY_HOST = "https://login.microsoftonline.com";

const PREFIX = "entra:";

export interface EntraCredential {
  /** The authority's origin (and any path before the tenant), without a trailing slash. */
  readonly authorityHost: string;
  readonly tenantId: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** The key string of a credential. */
export function entraKeyString(credential: EntraCredential): string {
  const { authorityHost, tenantId, clientId, clientSecret } = credential;
  return PREFIX + JSON.stringify([authorityHost, tenantId, clientId, clientSecret]);
}

/** Whether a key string is of the form entraKeyString writes (well formed or not). */
export function isEntraKey(key: string): boolean {
  return key.startsWith(PREFIX);
}

/** The credential a key string holds; undefined when it is not one. */
export function entraCredentialOf(key: string): EntraCredential | undefined {
  if (!isEntraKey(key)) return undefined;
  let parts: unknown;
  try {
    parts = JSON.parse(key.slice(PREFIX.length));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || parts.length !== 4 || !parts.every((p) => typeof p === "string" && p !== "")) return undefined;
  const [authorityHost, tenantId, clientId, clientSecret] = parts as string[];
  return { authorityHost, tenantId, clientId, clientSecret };
}

/** The credential's token endpoint (OAuth 2.0, v2). */
export function entraTokenUrl(credential: EntraCredential): URL {
  return new URL(`${credential.authorityHost}/${encodeURIComponent(credential.tenantId)}/oauth2/v2.0/token`);
}
