// Who a key belongs to, as the request path asks it: gateway.yaml's tokens first (a map
// lookup), then the store's, through a bounded cache so authentication costs the same
// with a million stored tokens as with ten. A user's credit is gateway.yaml's (the opening
// grant) plus the store's ledger, cached the same way.
//
// Every instance follows the store's change feed (AccountStore.changesSince), polled every
// `pollMs`: a created, revoked, disabled or topped-up account drops out of every cache
// within that time. Polling a sequence cannot miss a change the way a notification lost in
// a reconnect would, which for a revoked key would leave it working.

import { LRUCache } from "lru-cache";
import { compileAccountLimits, compileBudgets, withPlan, type OwnSettings } from "../config/compile.js";
import { compileIpMatcher, compileNameMatcher } from "../config/matchers.js";
import type { RawAccountLimits, RawBudget } from "../config/raw.js";
import { errorText, log } from "../observability/log.js";
import type { IpMatcher, NameMatcher, Runtime, Token, User } from "../runtime/types.js";
import type { AccountChange, AccountSettings, AccountStore, StoredToken, StoredUser } from "./store.js";

export interface DirectoryOptions {
  /** Stored tokens kept in memory; default 100,000. */
  readonly maxTokens?: number;
  /** Key hashes known to be nobody's, kept so a flood of bad keys does not reach the
   * store; default 10,000 (apart from the tokens, so it cannot push them out). */
  readonly maxUnknown?: number;
  /** Users (credit and stored records) kept; default 100,000. */
  readonly maxUsers?: number;
  /** How often the change feed is read; default 250 ms. */
  readonly pollMs?: number;
}

/** What the cache holds for a user: the stored record (absent for a gateway.yaml user)
 * and the ledger's sum, and the combined User for the config generation it was made for. */
interface UserEntry {
  readonly stored: StoredUser | undefined;
  readonly grantedNano: bigint;
  made?: { readonly generation: number; readonly user: User | undefined };
}

const FEED_PAGE = 1000;
/** The store keeps an hour of changes (sqlite-store.ts CHANGE_RETENTION_MS): a follower that
 * could not read the feed for longer than this may have missed some, and forgets all it cached. */
const FEED_GAP_MS = 10 * 60_000;

export class AccountDirectory {
  readonly #store: AccountStore;
  readonly #tokens: LRUCache<string, Token>;
  readonly #unknown: LRUCache<string, true>;
  readonly #users: LRUCache<string, UserEntry>;
  /** Loads in flight, so a burst of requests with one new key asks the store once. */
  readonly #loadingTokens = new Map<string, Promise<Token | undefined>>();
  readonly #loadingUsers = new Map<string, Promise<UserEntry>>();
  readonly #ipMatchers = new Map<string, IpMatcher>();
  readonly #nameMatchers = new Map<string, NameMatcher>();
  readonly #pollMs: number;
  #seq = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  /** Bumped by each change seen: a load that began before it is not cached. */
  #epoch = 0;
  /** When the feed was last read (epoch ms). */
  #lastRead = Date.now();

  constructor(store: AccountStore, opts: DirectoryOptions = {}) {
    this.#store = store;
    this.#tokens = new LRUCache({ max: opts.maxTokens ?? 100_000 });
    this.#unknown = new LRUCache({ max: opts.maxUnknown ?? 10_000 });
    this.#users = new LRUCache({ max: opts.maxUsers ?? 100_000 });
    this.#pollMs = opts.pollMs ?? 250;
  }

  /** Starts following the change feed from its current end. */
  async start(): Promise<void> {
    this.#seq = await this.#store.latestChange();
    this.#schedule();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Reads the change feed now (a change made by this process applies before its answer). */
  refresh(): Promise<void> {
    this.#polling ??= this.#poll().finally(() => {
      this.#polling = undefined;
    });
    return this.#polling;
  }

  /**
   * The token with this key hash: gateway.yaml's, else a stored one that is not revoked.
   * Synchronous when known (the common case), a promise when the store must be asked.
   */
  token(runtime: Runtime, keyHash: string): Token | undefined | Promise<Token | undefined> {
    const declared = runtime.tokensByHash.get(keyHash);
    if (declared) return declared;
    const cached = this.#tokens.get(keyHash);
    if (cached) return cached;
    if (this.#unknown.has(keyHash)) return undefined;
    let loading = this.#loadingTokens.get(keyHash);
    if (!loading) {
      loading = this.#loadToken(keyHash);
      this.#loadingTokens.set(keyHash, loading);
    }
    return loading;
  }

  /**
   * The user a token belongs to, with its credit (gateway.yaml's plus the ledger's);
   * undefined when nobody declares or stores it. Synchronous when cached.
   */
  user(runtime: Runtime, name: string): User | undefined | Promise<User | undefined> {
    const entry = this.#users.get(name);
    if (entry) return this.#made(runtime, name, entry);
    let loading = this.#loadingUsers.get(name);
    if (!loading) {
      loading = this.#loadUser(name);
      this.#loadingUsers.set(name, loading);
    }
    return loading.then((e) => this.#made(runtime, name, e));
  }

  /** Applies changes (what polling does; tests and the admin API of this process call it). */
  apply(changes: readonly AccountChange[]): void {
    for (const c of changes) {
      if (c.kind === "user") {
        this.#users.delete(c.name);
      } else if (c.keyHash !== undefined) {
        this.#tokens.delete(c.keyHash);
        this.#unknown.delete(c.keyHash);
      }
      if (c.seq > this.#seq) this.#seq = c.seq;
    }
    if (changes.length > 0) this.#epoch++;
  }

  /** Drops everything cached (it may be stale beyond what the feed still holds). */
  #forgetAll(): void {
    this.#tokens.clear();
    this.#unknown.clear();
    this.#users.clear();
    this.#epoch++;
  }

  #schedule(): void {
    this.#timer = setTimeout(() => {
      void this.refresh().finally(() => {
        if (this.#timer) this.#schedule();
      });
    }, this.#pollMs);
    this.#timer.unref();
  }

  async #poll(): Promise<void> {
    try {
      if (Date.now() - this.#lastRead > FEED_GAP_MS) this.#forgetAll();
      for (;;) {
        const changes = await this.#store.changesSince(this.#seq, FEED_PAGE);
        this.apply(changes);
        if (changes.length < FEED_PAGE) break;
      }
      this.#lastRead = Date.now();
    } catch (err) {
      // The store is unreachable: cached accounts keep answering; the next poll retries.
      log.warn("accounts: could not read the change feed", { error: errorText(err) });
    }
  }

  async #loadToken(keyHash: string): Promise<Token | undefined> {
    const epoch = this.#epoch;
    try {
      const stored = await this.#store.tokenByHash(keyHash);
      const token = stored && stored.status !== "revoked" ? this.#compile(stored) : undefined;
      if (epoch === this.#epoch) {
        if (token) this.#tokens.set(keyHash, token);
        else this.#unknown.set(keyHash, true);
      }
      return token;
    } finally {
      this.#loadingTokens.delete(keyHash);
    }
  }

  async #loadUser(name: string): Promise<UserEntry> {
    const epoch = this.#epoch;
    try {
      const [stored, grantedNano] = await Promise.all([this.#store.user(name), this.#store.creditOf(name)]);
      const entry: UserEntry = { stored, grantedNano };
      if (epoch === this.#epoch) this.#users.set(name, entry);
      return entry;
    } finally {
      this.#loadingUsers.delete(name);
    }
  }

  /** The User for this config generation: gateway.yaml's (its credit plus the ledger's),
   * else the stored one; made once per generation and entry. */
  #made(runtime: Runtime, name: string, entry: UserEntry): User | undefined {
    if (entry.made?.generation === runtime.generation) return entry.made.user;
    const declared = runtime.users.get(name);
    let user: User | undefined;
    if (declared) {
      user = entry.grantedNano === 0n ? declared : { ...declared, creditNano: declared.creditNano + entry.grantedNano };
    } else if (entry.stored) {
      const s = entry.stored;
      const base = { name, creditNano: entry.grantedNano, groups: new Set(s.groups), active: s.status === "active" };
      const plan = s.settings?.plan === undefined ? undefined : runtime.plans.get(s.settings.plan);
      user = withPlan(base, plan, ownSettings(s.settings));
    }
    entry.made = { generation: runtime.generation, user };
    return user;
  }

  /** A stored token as the request path knows tokens; one matcher per distinct list. */
  #compile(s: StoredToken): Token {
    const own = ownSettings(s.settings);
    return {
      ...(own.limits === undefined ? {} : { limits: own.limits }),
      ...(own.budgets === undefined ? {} : { budgets: own.budgets }),
      name: s.name, keyHash: s.keyHash, user: s.user, group: s.group,
      ...(s.expiresAt === undefined ? {} : { expiresAt: s.expiresAt }),
      ...(s.quotaNano === undefined ? {} : { quotaNano: s.quotaNano }),
      ...(s.allowIps === undefined ? {} : { allowIp: shared(this.#ipMatchers, s.allowIps, compileIpMatcher) }),
      ...(s.models === undefined ? {} : { allowModel: shared(this.#nameMatchers, s.models, compileNameMatcher) }),
      active: s.status === "active",
    };
  }
}

/** A stored account's limits and budgets, compiled as gateway.yaml's are (the service
 * checked them when they were written). */
function ownSettings(settings: AccountSettings | undefined): OwnSettings {
  if (!settings) return {};
  return {
    limits: compileAccountLimits(settings.limits as RawAccountLimits | undefined),
    budgets: compileBudgets(settings.budgets as RawBudget[] | undefined),
  };
}

function shared<M>(built: Map<string, M>, list: readonly string[], build: (list: readonly string[]) => M): M {
  const id = list.join("\n");
  let matcher = built.get(id);
  if (matcher === undefined) {
    // Bounded: a handful of lists in practice; past this, matchers are simply not shared.
    matcher = build(list);
    if (built.size < 10_000) built.set(id, matcher);
  }
  return matcher;
}
