// Access tokens for Entra ID client credentials: the OAuth 2.0 client-credentials grant at
// the tenant's token endpoint, for Azure OpenAI's scope. One POST with node's fetch and a
// deadline: @azure/identity would do the same at the size of a large dependency tree (and
// with retries that hold a request the gateway would rather fail over).

import { CredentialFailure } from "../kind.js";
import type { MintedToken } from "../token-holder.js";
import { entraTokenUrl, type EntraCredential } from "./entra-credential.js";

/** The scope of Azure OpenAI (Cognitive Services) tokens. */
export const COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default";

/** How long the token endpoint may take to answer before it counts as unreachable. */
export const DEFAULT_MINT_TIMEOUT_MS = 10_000;

/** An answer this long is not a token answer (Entra's are well under 10 KB). */
const MAX_ANSWER_CHARS = 64 * 1024;

/** Mints a token for `credential`; a refusal is a CredentialFailure "auth" (the key goes out
 * of rotation), an endpoint that does not answer (or not usably) one "unreachable" (the
 * next channel). Messages name the tenant and client, never the secret. */
export async function mintEntraToken(credential: EntraCredential, timeoutMs = DEFAULT_MINT_TIMEOUT_MS): Promise<MintedToken> {
  const who = `client ${credential.clientId} of tenant ${credential.tenantId}`;
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: credential.clientId,
    client_secret: credential.clientSecret,
    scope: COGNITIVE_SERVICES_SCOPE,
  });
  let status: number;
  let text: string;
  try {
    const res = await fetch(entraTokenUrl(credential), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: form.toString(),
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    throw new CredentialFailure("unreachable", `the Entra token endpoint for ${who} did not answer: ${failureOf(err)}`);
  }
  const answer = objectOf(text);
  if (status >= 200 && status < 300) return tokenOf(answer, who);
  // Throttled or failing on its side: another channel may do; the credential is not at fault.
  if (status === 408 || status === 429 || status >= 500 || status < 400) {
    throw new CredentialFailure("unreachable", `the Entra token endpoint for ${who} answered ${status}`);
  }
  // 400 invalid_client (a wrong or expired secret), unauthorized_client, invalid_request
  // (an unknown tenant), 401, 403: the credential is refused; every mint would be.
  throw new CredentialFailure("auth", `the Entra token endpoint refused ${who}: ${status}${refusalOf(answer)}`);
}

/** The token of a 2xx answer: `{ token_type: "Bearer", expires_in, access_token }`. */
function tokenOf(answer: Record<string, unknown> | undefined, who: string): MintedToken {
  const value = answer?.access_token;
  const type = answer?.token_type;
  // expires_in is a number of seconds (v1 endpoints and ADFS write it as a string).
  const expiresIn = Number(answer?.expires_in);
  if (typeof value !== "string" || value === "" || (type !== undefined && String(type).toLowerCase() !== "bearer") || !(expiresIn > 0)) {
    throw new CredentialFailure("unreachable", `the Entra token endpoint for ${who} answered without a usable access token`);
  }
  return { value, lifetimeMs: expiresIn * 1000 };
}

/** The answer's JSON object, or undefined. */
function objectOf(text: string): Record<string, unknown> | undefined {
  if (text.length > MAX_ANSWER_CHARS) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

/** " invalid_client (AADSTS7000215)": the OAuth error code and Entra's AADSTS number, the
 * parts of a refusal an operator looks up (its description is left out: it is long). */
function refusalOf(answer: Record<string, unknown> | undefined): string {
  const code = typeof answer?.error === "string" ? ` ${answer.error}` : "";
  const description = typeof answer?.error_description === "string" ? answer.error_description : "";
  const aadsts = /^AADSTS\d+/.exec(description)?.[0];
  return code + (aadsts ? ` (${aadsts})` : "");
}

/** What fetch's failure was: the socket's error code, or a timeout. */
function failureOf(err: unknown): string {
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) return "no answer in time";
  const cause = err instanceof Error ? (err as Error & { cause?: { code?: unknown } }).cause : undefined;
  if (typeof cause?.code === "string") return cause.code;
  return err instanceof Error ? err.message : String(err);
}
