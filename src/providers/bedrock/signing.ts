// SigV4 over an InvokeModel request (service "bedrock", the channel's region): method,
// host, path, every header sent and the body. Or, for a Bedrock API key, a Bearer header.

import { NodeSha256 } from "./node-sha256.js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { BedrockCredential } from "./credentials.js";

type AccessKeyCredential = Exclude<BedrockCredential, { type: "api-key" }>;

/** The service name Bedrock's signatures are scoped to. */
export const SIGNING_SERVICE = "bedrock";

/** Signers by channel (as provider.ts memoises channel URLs: each lives as long as its
 * Runtime), then by credential and region. A signer keeps the day's derived signing key,
 * which saves four of the five HMACs of a signature (bench/kinds.ts); at most
 * MAX_SIGNERS a channel. */
const signers = new WeakMap<object, Map<string, SignatureV4>>();
const MAX_SIGNERS = 256;

function signerOf(owner: object | undefined, credential: AccessKeyCredential, region: string): SignatureV4 {
  const id = `${region}\n${credential.accessKeyId}\n${credential.secretAccessKey}\n${credential.sessionToken ?? ""}`;
  let byCredential = owner === undefined ? undefined : signers.get(owner);
  const known = byCredential?.get(id);
  if (known) return known;
  const signer = new SignatureV4({
    service: SIGNING_SERVICE, region, sha256: NodeSha256,
    credentials: { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey, sessionToken: credential.sessionToken },
  });
  if (owner !== undefined) {
    if (!byCredential) signers.set(owner, (byCredential = new Map()));
    if (byCredential.size < MAX_SIGNERS) byCredential.set(id, signer);
  }
  return signer;
}

/** `headers` with the request's credentials added: a SigV4 Authorization (with
 * x-amz-date, x-amz-content-sha256 and, for temporary credentials, x-amz-security-token),
 * or a Bearer API key. `host` is signed but not returned: the HTTP client sends it, with
 * the same value (url.host). `owner` (the channel) keeps its signers for the next request. */
export async function withCredentials(
  credential: BedrockCredential, region: string, url: URL, headers: Record<string, string>, body: Buffer, signingDate = new Date(),
  owner?: object,
): Promise<Record<string, string>> {
  if (credential.type === "api-key") return { ...headers, authorization: `Bearer ${credential.apiKey}` };
  const signed = await signerOf(owner, credential, region).sign({
    method: "POST", protocol: url.protocol, hostname: url.hostname, port: url.port === "" ? undefined : Number(url.port),
    path: url.pathname, query: {}, headers: { ...headers, host: url.host }, body,
  }, { signingDate });
  const { host: _host, ...sent } = signed.headers;
  return sent;
}
