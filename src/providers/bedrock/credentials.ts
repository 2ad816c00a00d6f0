// A Bedrock channel key is one string: an AWS access key as ACCESS_KEY_ID:SECRET, with
// :SESSION_TOKEN for temporary credentials, or a Bedrock API key (sent as a Bearer token).
// Neither an access key id, a secret access key, a session token nor an API key holds a
// colon, so the colon tells them apart.

/** An access key signed with SigV4, or an API key sent as `Authorization: Bearer`. */
export type BedrockCredential =
  | { readonly type: "sigv4"; readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string }
  | { readonly type: "api-key"; readonly apiKey: string };

/** The credential a key string holds; undefined when it is neither form. */
export function credentialOf(key: string): BedrockCredential | undefined {
  if (key === "") return undefined;
  if (!key.includes(":")) return { type: "api-key", apiKey: key };
  const parts = key.split(":");
  if (parts.length > 3 || parts.some((part) => part === "")) return undefined;
  const [accessKeyId, secretAccessKey, sessionToken] = parts;
  return sessionToken === undefined
    ? { type: "sigv4", accessKeyId, secretAccessKey }
    : { type: "sigv4", accessKeyId, secretAccessKey, sessionToken };
}

/** The key string of an access key (the form `keys` entries take). */
export function accessKeyString(accessKeyId: string, secretAccessKey: string, sessionToken?: string): string {
  return sessionToken ? `${accessKeyId}:${secretAccessKey}:${sessionToken}` : `${accessKeyId}:${secretAccessKey}`;
}
