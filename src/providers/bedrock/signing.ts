// SigV4 over an InvokeModel request (service "bedrock", the channel's region): method,
// host, path, every header sent and the body. Or, for a Bedrock API key, a Bearer header.

import { NodeSha256 } from "./node-sha256.js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { BedrockCredential } from "./credentials.js";

/** The service name Bedrock's signatures are scoped to. */
export const SIGNING_SERVICE = "bedrock";

/** `headers` with the request's credentials added: a SigV4 Authorization (with
 * x-amz-date, x-amz-content-sha256 and, for temporary credentials, x-amz-security-token),
 * or a Bearer API key. `host` is signed but not returned: the HTTP client sends it, with
 * the same value (url.host). */
export async function withCredentials(
  credential: BedrockCredential, region: string, url: URL, headers: Record<string, string>, body: Buffer, signingDate = new Date(),
): Promise<Record<string, string>> {
  if (credential.type === "api-key") return { ...headers, authorization: `Bearer ${credential.apiKey}` };
  const signer = new SignatureV4({
    service: SIGNING_SERVICE, region, sha256: NodeSha256,
    credentials: {
      accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey, sessionToken: credential.sessionToken,
    },
  });
  const signed = await signer.sign({
    method: "POST", protocol: url.protocol, hostname: url.hostname, port: url.port === "" ? undefined : Number(url.port),
    path: url.pathname, query: {}, headers: { ...headers, host: url.host }, body,
  }, { signingDate });
  const { host: _host, ...sent } = signed.headers;
  return sent;
}
