// OAuth access tokens for service-account key files: google-auth-library's JWT client
// signs the assertion (RS256, scope cloud-platform) and exchanges it at the key file's
// token_uri. Each key file has one holder that keeps its token until shortly before it
// expires and lets one mint run at a time; the holders live in a bounded map.

import { JWT, gaxios } from "google-auth-library";
import { CredentialFailure } from "../kind.js";
import { readServiceAccountKey } from "./key-file.js";

export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** Refresh this long before expiry, at most (Google's own clients use 5 minutes)... */
const MAX_REFRESH_EARLY_MS = 5 * 60_000;
/** ...and at most this share of a token's lifetime, so a short-lived token is still used. */
const REFRESH_EARLY_SHARE = 0.25;

/** How long a token endpoint may take to answer before it counts as unreachable. */
const DEFAULT_MINT_TIMEOUT_MS = 10_000;

/** Key files whose tokens are kept; one more evicts the least recently used. */
const DEFAULT_MAX_FILES = 64;

interface HeldToken {
  readonly value: string;
  /** Epoch ms: the token is no good from here. */
  readonly expiresAt: number;
  /** Epoch ms: a new one is minted from here. */
  readonly refreshAt: number;
}

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

/** One key file's token: kept, refreshed early, one mint in flight. */
class KeyFileToken {
  #held: HeldToken | undefined;
  #minting: Promise<HeldToken> | undefined;

  constructor(private readonly file: string, private readonly timeoutMs: number) {}

  async token(now = Date.now()): Promise<string> {
    const held = this.#held;
    if (held && now < held.refreshAt) return held.value;
    this.#minting ??= this.#mint().finally(() => {
      this.#minting = undefined;
    });
    try {
      this.#held = await this.#minting;
      return this.#held.value;
    } catch (err) {
      // A refresh that failed early: the token in hand still serves until it expires.
      if (held && Date.now() < held.expiresAt) return held.value;
      throw err;
    }
  }

  async #mint(): Promise<HeldToken> {
    let key;
    try {
      key = await readServiceAccountKey(this.file);
    } catch (err) {
      throw new CredentialFailure("auth", (err as Error).message);
    }
    const client = new JWT({
      email: key.clientEmail,
      key: key.privateKey,
      scopes: [CLOUD_PLATFORM_SCOPE],
      // The audience is the endpoint the assertion is exchanged at.
      additionalClaims: { aud: key.tokenUri },
      transporter: new TokenEndpoint(key.tokenUri, this.timeoutMs),
    });
    const started = Date.now();
    let credentials;
    try {
      credentials = await client.authorize();
    } catch (err) {
      throw credentialFailureOf(err, this.file);
    }
    const value = credentials.access_token;
    const expiresAt = credentials.expiry_date ?? 0;
    if (typeof value !== "string" || value === "" || expiresAt <= started) {
      throw new CredentialFailure("unreachable", `the token endpoint for ${this.file} answered without a usable access token`);
    }
    const early = Math.min(MAX_REFRESH_EARLY_MS, (expiresAt - started) * REFRESH_EARLY_SHARE);
    return { value, expiresAt, refreshAt: expiresAt - early };
  }
}

export interface TokenSourceOptions {
  readonly maxFiles?: number;
  readonly mintTimeoutMs?: number;
}

/** Access tokens by key file, for the channels of one kind manifest. */
export class ServiceAccountTokens {
  readonly #byFile = new Map<string, KeyFileToken>();
  readonly #maxFiles: number;
  readonly #timeoutMs: number;

  constructor(opts: TokenSourceOptions = {}) {
    this.#maxFiles = opts.maxFiles ?? DEFAULT_MAX_FILES;
    this.#timeoutMs = opts.mintTimeoutMs ?? DEFAULT_MINT_TIMEOUT_MS;
  }

  /** A valid access token for `file`; throws CredentialFailure when none can be had. */
  token(file: string): Promise<string> {
    let holder = this.#byFile.get(file);
    if (holder) {
      // Most recently used last: the first entry is the one to evict.
      this.#byFile.delete(file);
    } else {
      holder = new KeyFileToken(file, this.#timeoutMs);
      if (this.#byFile.size >= this.#maxFiles) this.#byFile.delete(this.#byFile.keys().next().value!);
    }
    this.#byFile.set(file, holder);
    return holder.token();
  }
}
