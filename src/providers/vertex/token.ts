// OAuth access tokens for service-account key files: google-auth-library's JWT client
// signs the assertion (RS256, scope cloud-platform) and exchanges it at the key file's
// token_uri. Each key file has one holder that keeps its token, mints the next in the
// background from 5 minutes before expiry (the token in hand serves meanwhile), and lets
// one mint run at a time; the holders live in a bounded map.

import { JWT, gaxios } from "google-auth-library";
import { CredentialFailure } from "../kind.js";
import { readServiceAccountKey } from "./key-file.js";

export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** Refresh this long before expiry, at most (Google's own clients use 5 minutes)... */
const MAX_REFRESH_EARLY_MS = 5 * 60_000;
/** ...and at most this share of a token's lifetime, so a short-lived token is still used. */
const REFRESH_EARLY_SHARE = 0.25;

/** A token is not sent in its last minute (or last tenth of its lifetime, if shorter). */
const LAST_USE_MARGIN_MS = 60_000;
const LAST_USE_SHARE = 0.1;

/** After an early refresh failed, the next is tried this much later at most. */
const RETRY_MS = 30_000;

/** How long a token endpoint may take to answer before it counts as unreachable. */
const DEFAULT_MINT_TIMEOUT_MS = 10_000;

/** Key files whose tokens are kept; one more evicts the least recently used. */
const DEFAULT_MAX_FILES = 64;

interface HeldToken {
  readonly value: string;
  /** Epoch ms: the token is no good from here. */
  readonly expiresAt: number;
  /** Epoch ms: a new one is minted (in the background) from here. */
  readonly refreshAt: number;
  /** Epoch ms: from here a request waits for the new one rather than risk a token that
   * expires on its way (Google's 401 would take the credential out). */
  readonly lastUseAt: number;
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

  constructor(private readonly file: string, private readonly timeoutMs: number, private readonly clock: () => number) {}

  async token(): Promise<string> {
    const now = this.clock();
    const held = this.#held;
    if (held && now < held.refreshAt) return held.value;
    if (held && now < held.lastUseAt) {
      // Early: refreshed in the background while the token in hand still serves.
      this.#refresh().catch(() => undefined);
      return held.value;
    }
    return (await this.#refresh()).value;
  }

  #refresh(): Promise<HeldToken> {
    this.#minting ??= this.#mint().then((fresh) => {
      this.#held = fresh;
      return fresh;
    }, (err: unknown) => {
      // An early refresh that failed: the token in hand serves on; try again a little later,
      // not on every request.
      const held = this.#held;
      const now = this.clock();
      if (held && now < held.lastUseAt) this.#held = { ...held, refreshAt: now + Math.min(RETRY_MS, (held.lastUseAt - now) / 4) };
      throw err;
    }).finally(() => {
      this.#minting = undefined;
    });
    return this.#minting;
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
    const startedReal = Date.now();
    const started = this.clock();
    let credentials;
    try {
      credentials = await client.authorize();
    } catch (err) {
      throw credentialFailureOf(err, this.file);
    }
    const value = credentials.access_token;
    // The library dates expiry by Date.now(); the holder by its clock.
    const lifetime = (credentials.expiry_date ?? 0) - startedReal;
    if (typeof value !== "string" || value === "" || lifetime <= 0) {
      throw new CredentialFailure("unreachable", `the token endpoint for ${this.file} answered without a usable access token`);
    }
    const expiresAt = started + lifetime;
    return {
      value, expiresAt,
      refreshAt: expiresAt - Math.min(MAX_REFRESH_EARLY_MS, lifetime * REFRESH_EARLY_SHARE),
      lastUseAt: expiresAt - Math.min(LAST_USE_MARGIN_MS, lifetime * LAST_USE_SHARE),
    };
  }
}

export interface TokenSourceOptions {
  readonly maxFiles?: number;
  readonly mintTimeoutMs?: number;
  /** Epoch ms now (tests move it); default Date.now. */
  readonly clock?: () => number;
}

/** Access tokens by key file, for the channels of one kind manifest. */
export class ServiceAccountTokens {
  readonly #byFile = new Map<string, KeyFileToken>();
  readonly #maxFiles: number;
  readonly #timeoutMs: number;
  readonly #clock: () => number;

  constructor(opts: TokenSourceOptions = {}) {
    this.#maxFiles = opts.maxFiles ?? DEFAULT_MAX_FILES;
    this.#timeoutMs = opts.mintTimeoutMs ?? DEFAULT_MINT_TIMEOUT_MS;
    this.#clock = opts.clock ?? Date.now;
  }

  /** A valid access token for `file`; throws CredentialFailure when none can be had. */
  token(file: string): Promise<string> {
    let holder = this.#byFile.get(file);
    if (holder) {
      // Most recently used last: the first entry is the one to evict.
      this.#byFile.delete(file);
    } else {
      holder = new KeyFileToken(file, this.#timeoutMs, this.#clock);
      if (this.#byFile.size >= this.#maxFiles) this.#byFile.delete(this.#byFile.keys().next().value!);
    }
    this.#byFile.set(file, holder);
    return holder.token();
  }
}
