// OAuth access tokens for service-account key files: google-auth-library's JWT client
// signs the assertion (RS256, scope cloud-platform) and exchanges it at the key file's
// token_uri. Keeping, refreshing early and one mint at a time per key file are the shared
// token holder's (../token-holder.ts).

import { JWT, gaxios } from "google-auth-library";
import { CredentialFailure } from "../kind.js";
import { TokenHolder, type MintedToken } from "../token-holder.js";
import { readServiceAccountKey } from "./key-file.js";

export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** How long a token endpoint may take to answer before it counts as unreachable. */
const DEFAULT_MINT_TIMEOUT_MS = 10_000;

/**
 * The library's transport for the token exchange, aimed at the key file's token_uri: the
 * library itself always posts to oauth2.googleapis.com (and names it as the audience),
 * whatever the key file says. One try with a deadline, no retries: an endpoint that does
 * not answer fails the channel over instead of holding the request.
 */
class TokenEndpoint extends gaxios.Gaxios {
  constructor(private readonly tokenUri: string, private readonly timeoutMs: number) {
    super();
  }

  override request<T = unknown>(opts: gaxios.GaxiosOptions = {}): gaxios.GaxiosPromise<T> {
    const { retryConfig: _ignored, ...rest } = opts;
    return super.request<T>({ ...rest, url: this.tokenUri, timeout: this.timeoutMs, retry: false });
  }
}

/** Why a mint failed, as the gateway treats it: a refusal is the credential's fault. */
function credentialFailureOf(err: unknown, file: string): CredentialFailure {
  if (err instanceof CredentialFailure) return err;
  if (err instanceof gaxios.GaxiosError) {
    const status = err.response?.status;
    // 400 invalid_grant (a deleted or disabled key, a bad signature), 401, 403: refused.
    if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
      return new CredentialFailure("auth", `the token endpoint refused the key in ${file}: ${status} ${err.message}`);
    }
    return new CredentialFailure("unreachable", `the token endpoint for ${file} did not answer: ${status ?? err.code ?? ""} ${err.message}`.replace("  ", " "));
  }
  // Signing failed: the key itself is unusable.
  return new CredentialFailure("auth", `no token could be made with ${file}: ${err instanceof Error ? err.message : String(err)}`);
}

/** Mints a token for the key file: the file read afresh (a key rotated in place is picked
 * up at the next mint), the assertion signed and exchanged at its token_uri. */
async function mintServiceAccountToken(file: string, timeoutMs: number): Promise<MintedToken> {
  let key;
  try {
    key = await readServiceAccountKey(file);
  } catch (err) {
    throw new CredentialFailure("auth", (err as Error).message);
  }
  const client = new JWT({
    email: key.clientEmail,
    key: key.privateKey,
    scopes: [CLOUD_PLATFORM_SCOPE],
    // The audience is the endpoint the assertion is exchanged at.
    additionalClaims: { aud: key.tokenUri },
    transporter: new TokenEndpoint(key.tokenUri, timeoutMs),
  });
  const started = Date.now();
  let credentials;
  try {
    credentials = await client.authorize();
  } catch (err) {
    throw credentialFailureOf(err, file);
  }
  const value = credentials.access_token;
  // The library dates expiry by Date.now(): the lifetime is from when the exchange began.
  const lifetimeMs = (credentials.expiry_date ?? 0) - started;
  if (typeof value !== "string" || value === "" || lifetimeMs <= 0) {
    throw new CredentialFailure("unreachable", `the token endpoint for ${file} answered without a usable access token`);
  }
  return { value, lifetimeMs };
}

export interface TokenSourceOptions {
  readonly maxFiles?: number;
  readonly mintTimeoutMs?: number;
  /** Epoch ms now (tests move it); default Date.now. */
  readonly clock?: () => number;
}

/** Access tokens by key file, for the channels of one kind manifest. */
export class ServiceAccountTokens {
  readonly #holder: TokenHolder;
  readonly #timeoutMs: number;

  constructor(opts: TokenSourceOptions = {}) {
    this.#holder = new TokenHolder({ maxCredentials: opts.maxFiles, clock: opts.clock });
    this.#timeoutMs = opts.mintTimeoutMs ?? DEFAULT_MINT_TIMEOUT_MS;
  }

  /** A valid access token for `file`; throws CredentialFailure when none can be had. */
  token(file: string): Promise<string> {
    return this.#holder.token(file, () => mintServiceAccountToken(file, this.#timeoutMs));
  }
}
