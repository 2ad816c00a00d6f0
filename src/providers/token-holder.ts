// Access tokens a kind mints for its credentials (Vertex's service accounts, Azure's Entra
// client credentials): each credential has one holder that keeps its token, mints the next
// in the background from shortly before expiry (the token in hand serves meanwhile), and
// lets one mint run at a time; the holders live in a bounded map. How a token is minted is
// the kind's (a `Mint`); when to mint is this file's.

/** A token as a mint gives it: its value and how long it lives from when the mint began. */
export interface MintedToken {
  readonly value: string;
  readonly lifetimeMs: number;
}

/** Mints a token for one credential; throws (a CredentialFailure, as a rule) when it cannot. */
export type Mint = () => Promise<MintedToken>;

/** Refresh this long before expiry, at most (Google's and Microsoft's clients use 5 minutes)... */
const MAX_REFRESH_EARLY_MS = 5 * 60_000;
/** ...and at most this share of a token's lifetime, so a short-lived token is still used. */
const REFRESH_EARLY_SHARE = 0.25;

/** A token is not sent in its last minute (or last tenth of its lifetime, if shorter). */
const LAST_USE_MARGIN_MS = 60_000;
const LAST_USE_SHARE = 0.1;

/** After an early refresh failed, the next is tried this much later at most. */
const RETRY_MS = 30_000;

/** Credentials whose tokens are kept; one more evicts the least recently used. */
const DEFAULT_MAX_CREDENTIALS = 64;

interface HeldToken {
  readonly value: string;
  /** Epoch ms (the holder's clock): the token is no good from here. */
  readonly expiresAt: number;
  /** Epoch ms: a new one is minted (in the background) from here. */
  readonly refreshAt: number;
  /** Epoch ms: from here a request waits for the new one rather than risk a token that
   * expires on its way (the provider's 401 would take the credential out). */
  readonly lastUseAt: number;
}

/** One credential's token: kept, refreshed early, one mint in flight. */
class CredentialToken {
  #held: HeldToken | undefined;
  #minting: Promise<HeldToken> | undefined;

  constructor(private readonly clock: () => number) {}

  async token(mint: Mint): Promise<string> {
    const now = this.clock();
    const held = this.#held;
    if (held && now < held.refreshAt) return held.value;
    if (held && now < held.lastUseAt) {
      // Early: refreshed in the background while the token in hand still serves.
      this.#refresh(mint).catch(() => undefined);
      return held.value;
    }
    return (await this.#refresh(mint)).value;
  }

  #refresh(mint: Mint): Promise<HeldToken> {
    this.#minting ??= this.#timed(mint).then((fresh) => {
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

  /** The mint's token, dated from when the mint began (so the time it took counts against it). */
  async #timed(mint: Mint): Promise<HeldToken> {
    const started = this.clock();
    const { value, lifetimeMs } = await mint();
    const expiresAt = started + lifetimeMs;
    return {
      value, expiresAt,
      refreshAt: expiresAt - Math.min(MAX_REFRESH_EARLY_MS, lifetimeMs * REFRESH_EARLY_SHARE),
      lastUseAt: expiresAt - Math.min(LAST_USE_MARGIN_MS, lifetimeMs * LAST_USE_SHARE),
    };
  }
}

export interface TokenHolderOptions {
  /** Credentials whose tokens are kept (least recently used evicted); default 64. */
  readonly maxCredentials?: number;
  /** Epoch ms now (tests move it); default Date.now. */
  readonly clock?: () => number;
}

/** Access tokens by credential id, for the channels of one kind. */
export class TokenHolder {
  readonly #byId = new Map<string, CredentialToken>();
  readonly #max: number;
  readonly #clock: () => number;

  constructor(opts: TokenHolderOptions = {}) {
    this.#max = opts.maxCredentials ?? DEFAULT_MAX_CREDENTIALS;
    this.#clock = opts.clock ?? Date.now;
  }

  /** A valid token for credential `id`, minted with `mint` when none is held (or it is due);
   * throws what `mint` throws when none can be had. */
  token(id: string, mint: Mint): Promise<string> {
    let holder = this.#byId.get(id);
    if (holder) {
      // Most recently used last: the first entry is the one to evict.
      this.#byId.delete(id);
    } else {
      holder = new CredentialToken(this.#clock);
      if (this.#byId.size >= this.#max) this.#byId.delete(this.#byId.keys().next().value!);
    }
    this.#byId.set(id, holder);
    return holder.token(mint);
  }
}
