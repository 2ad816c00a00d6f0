// SigV4 over a Bedrock request (service "bedrock", the channel's region): method, host,
// path, every header sent and the body. Or, for a Bedrock API key, a Bearer header.
//
// Signed with aws4, the field's small synchronous signer on node:crypto: the AWS SDK's
// (@smithy/signature-v4) took about 110 µs of gateway CPU per request through its chain of
// promises, aws4 a fraction of that (bench/kinds.ts, bench/RESULTS.md). The tests' fake
// Bedrock checks every signature with the AWS SDK's signer, so the two agree on the wire.

import aws4 from "aws4";
import type { BedrockCredential } from "./credentials.js";

/** The service name Bedrock's signatures are scoped to. */
export const SIGNING_SERVICE = "bedrock";

/** `headers` with the request's credentials added: a SigV4 Authorization (with
 * X-Amz-Date and, for temporary credentials, X-Amz-Security-Token), or a Bearer API key.
 * `Host` is signed but not returned: the HTTP client sends it, with the same value. */
export function withCredentials(
  credential: BedrockCredential, region: string, url: URL, headers: Record<string, string>, body: Buffer,
): Record<string, string> {
  if (credential.type === "api-key") return { ...headers, authorization: `Bearer ${credential.apiKey}` };
  const signed = aws4.sign(
    { host: url.host, path: url.pathname + url.search, method: "POST", service: SIGNING_SERVICE, region, headers, body },
    { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey, sessionToken: credential.sessionToken },
  );
  const { Host: _host, ...sent } = signed.headers as Record<string, string>;
  return sent;
}
