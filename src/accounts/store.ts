// Accounts kept in the state store beside the ones gateway.yaml declares: users, their
// tokens (by key hash; the key itself is shown once and never stored), the credit ledger,
// redemption codes and the audit log. One interface, implemented on memory (tests and
// `store: memory:`), SQLite (the embedded default) and PostgreSQL (the ledger), so that
// the admin API, the CLI and the request path behave alike on each.
//
// Every change is one transaction: the row, its audit record and a change-feed row commit
// together or not at all, so an instance that follows the feed (accounts/directory.ts)
// never sees a change the store does not hold, and the audit log never misses one.

/** active: usable; disabled: refused (401) until enabled again. */
export type UserStatus = "active" | "disabled";
/** revoked is final: the token's name stays taken (its spend history keeps it). */
export type TokenStatus = "active" | "disabled" | "revoked";

/**
 * What an account sets beside its status: for a user its plan; for both, limits and budgets.
 * In gateway.yaml's own shape (snake_case keys: `{ request_rate: { max: 60, per: 1m } }`,
 * `[{ amount: 5, per: day }]`), so stored and declared accounts compile alike.
 */
export interface AccountSettings {
  /** A user's plan (plans.<name> in gateway.yaml). */
  readonly plan?: string;
  readonly limits?: Readonly<Record<string, unknown>>;
  readonly budgets?: readonly Readonly<Record<string, unknown>>[];
}

export interface StoredUser {
  readonly name: string;
  readonly status: UserStatus;
  /** Groups this user's tokens may use. */
  readonly groups: readonly string[];
  /** Free text the operator keeps beside the account (an email, a customer id). */
  readonly note?: string;
  /** Plan, limits, budgets; absent: none. */
  readonly settings?: AccountSettings;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Starts at 1; each change adds 1. A change that names the version it read is refused
   * when another landed first (VersionConflict). */
  readonly version: number;
}

export interface StoredToken {
  readonly name: string;
  /** sha256 of the key, lowercase hex. */
  readonly keyHash: string;
  /** What the key starts and ends with (e.g. "sk-gw-Ab3d…x9Qz"), so an operator can tell
   * keys apart; never enough to use one. Absent for keys imported by hash. */
  readonly keyHint?: string;
  readonly user: string;
  readonly group: string;
  readonly status: TokenStatus;
  /** Epoch ms; absent: never. */
  readonly expiresAt?: number;
  /** Most this token may spend in total, nano-units; absent: unlimited. */
  readonly quotaNano?: bigint;
  /** IP allowlist (addresses and CIDR ranges); absent: any. */
  readonly allowIps?: readonly string[];
  /** Model allowlist (names and globs); absent: every model of the group. */
  readonly models?: readonly string[];
  /** Limits and budgets; absent: none. */
  readonly settings?: AccountSettings;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly version: number;
}

/** What makes a credit entry: a grant or top-up (positive), an adjustment (negative), or a
 * redeemed code. */
export type CreditKind = "grant" | "adjustment" | "redeem";

export interface CreditEntry {
  /** Increasing with insertion. */
  readonly id: number;
  readonly user: string;
  /** Nano-units; negative for an adjustment down. Never zero. */
  readonly amountNano: bigint;
  readonly kind: CreditKind;
  readonly reason: string;
  /** Who made it: an admin key's name, "cli:<os user>", or "token:<name>" for a redemption. */
  readonly actor: string;
  /** Set by the caller (a payment id): the same key never credits twice. */
  readonly idempotencyKey?: string;
  readonly at: number;
}

export interface CodeBatch {
  readonly batch: string;
  readonly count: number;
  readonly amountNano: bigint;
  /** Epoch ms after which a code of the batch cannot be redeemed. */
  readonly expiresAt: number;
  readonly redeemed: number;
  readonly createdAt: number;
  readonly actor: string;
}

export interface AuditRecord {
  readonly id: number;
  readonly at: number;
  /** Who: an admin key's name, "cli:<os user>", "token:<name>". */
  readonly actor: string;
  /** What, as resource.verb: user.create, user.update, token.create, token.update,
   * token.revoke, credit.add, codes.create, code.redeem. */
  readonly action: string;
  /** The resource's name (user, token, batch). */
  readonly target: string;
  /** The resource before and after, as JSON-safe values (money as exact decimal strings,
   * never a key or a key hash). Absent before a creation. */
  readonly before?: unknown;
  readonly after?: unknown;
}

/** A change another instance must see: drop what it cached for this user or token. */
export interface AccountChange {
  readonly seq: number;
  readonly kind: "user" | "token";
  readonly name: string;
  /** For a token: its key hash (a cache keyed by hash drops it, and a cached "no such
   * key" answer for a new token's hash goes too). */
  readonly keyHash?: string;
}

/** Who is making a change, written to the audit log. */
export interface Actor {
  readonly actor: string;
}

export interface NewUser {
  readonly name: string;
  readonly status?: UserStatus;
  readonly groups?: readonly string[];
  readonly note?: string;
  readonly settings?: AccountSettings;
  /** A first credit entry (a grant), written in the same transaction as the user: a user
   * is never left without the grant it was created with. */
  readonly openingCredit?: { readonly amountNano: bigint; readonly reason: string };
}

export interface UserPatch {
  readonly status?: UserStatus;
  readonly groups?: readonly string[];
  /** null removes it. */
  readonly note?: string | null;
  /** Replaces the settings whole; null removes them. */
  readonly settings?: AccountSettings | null;
}

export interface NewToken {
  readonly name: string;
  readonly keyHash: string;
  readonly keyHint?: string;
  readonly user: string;
  readonly group: string;
  readonly status?: "active" | "disabled";
  readonly expiresAt?: number;
  readonly quotaNano?: bigint;
  readonly allowIps?: readonly string[];
  readonly models?: readonly string[];
  readonly settings?: AccountSettings;
}

/** A change to a token; null removes an optional setting. The key, user and name stay. */
export interface TokenPatch {
  readonly status?: "active" | "disabled";
  readonly group?: string;
  readonly expiresAt?: number | null;
  readonly quotaNano?: bigint | null;
  readonly allowIps?: readonly string[] | null;
  readonly models?: readonly string[] | null;
  /** Replaces the settings whole; null removes them. */
  readonly settings?: AccountSettings | null;
}

export interface NewCredit {
  readonly user: string;
  readonly amountNano: bigint;
  readonly reason: string;
  readonly idempotencyKey?: string;
}

export interface NewCodeBatch {
  readonly batch: string;
  readonly amountNano: bigint;
  readonly expiresAt: number;
  /** sha256 of each code, lowercase hex; the codes themselves are shown once. */
  readonly codeHashes: readonly string[];
}

export type RedeemResult =
  | { readonly ok: true; readonly entry: CreditEntry }
  | { readonly ok: false; readonly reason: "unknown" | "redeemed" | "expired" };

/** A page of a list: `next` is the cursor for the following page (absent on the last). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next?: string;
}

export interface ListUsers {
  /** Names starting with this. */
  readonly prefix?: string;
  /** A page's `next`. */
  readonly after?: string;
  /** 1..1000; default 100. */
  readonly limit?: number;
}

export interface ListTokens extends ListUsers {
  readonly user?: string;
}

export interface AuditFilter {
  readonly target?: string;
  readonly actor?: string;
  /** Records with id below this (a page's `next`). */
  readonly before?: number;
  readonly limit?: number;
}

/** A name already taken (409): by a stored user or token, or one gateway.yaml declares. */
export class NameTaken extends Error {
  constructor(readonly kind: "user" | "token" | "batch", readonly resource: string, readonly where: "store" | "gateway.yaml") {
    super(`${kind} '${resource}' exists already${where === "gateway.yaml" ? " in gateway.yaml" : ""}`);
  }
}

/** No such user, token or batch (404). */
export class NotFound extends Error {
  constructor(readonly kind: "user" | "token" | "batch" | "channel" | "key", readonly resource: string) {
    super(`no ${kind} '${resource}'`);
  }
}

/** The change named a version another change has replaced (409): read again and retry. */
export class VersionConflict extends Error {
  constructor(readonly kind: "user" | "token", readonly resource: string, readonly expected: number, readonly found: number) {
    super(`${kind} '${resource}' is at version ${found}, not ${expected}: it changed since it was read`);
  }
}

/** The same idempotency key was used before with a different request (409). */
export class IdempotencyMismatch extends Error {
  constructor(readonly key: string) {
    super(`idempotency_key '${key}' was used before for a different credit`);
  }
}

/** A key hash already belongs to a token (409; never says which). */
export class KeyTaken extends Error {
  constructor() {
    super("that key is in use by another token");
  }
}

/**
 * The accounts store. Reads are what the request path needs on a cache miss; every change
 * writes its audit record and a change-feed row in the same transaction. Methods throw
 * NameTaken, NotFound, VersionConflict, IdempotencyMismatch or KeyTaken as documented, and
 * any other error when the store cannot be reached.
 */
export interface AccountStore {
  /** The token with this key hash (any status), or undefined. */
  tokenByHash(keyHash: string): Promise<StoredToken | undefined>;
  token(name: string): Promise<StoredToken | undefined>;
  user(name: string): Promise<StoredUser | undefined>;
  /** Σ credit entries of a user (grants, adjustments, redemptions), nano-units; 0n for none. */
  creditOf(user: string): Promise<bigint>;

  /** Which of `names` the store holds as users (or tokens, revoked ones too), in any order:
   * gateway.yaml's names are checked against them at start and at each reload. */
  takenNames(kind: "user" | "token", names: readonly string[]): Promise<string[]>;

  listUsers(query: ListUsers): Promise<Page<StoredUser>>;
  listTokens(query: ListTokens): Promise<Page<StoredToken>>;

  /** Throws NameTaken. */
  createUser(user: NewUser, by: Actor): Promise<StoredUser>;
  /** Throws NotFound, VersionConflict (when `expectedVersion` is given and stale). */
  updateUser(name: string, patch: UserPatch, by: Actor, expectedVersion?: number): Promise<StoredUser>;
  /** Throws NameTaken, KeyTaken, NotFound (the user). */
  createToken(token: NewToken, by: Actor): Promise<StoredToken>;
  /** Throws NotFound, VersionConflict; a revoked token cannot change (NotFound). */
  updateToken(name: string, patch: TokenPatch, by: Actor, expectedVersion?: number): Promise<StoredToken>;
  /** Revokes for good; revoking again returns it unchanged. Throws NotFound. */
  revokeToken(name: string, by: Actor): Promise<StoredToken>;

  /**
   * Adds a grant (amount > 0) or adjustment (amount < 0). With an idempotency key seen
   * before for the same user and amount: the first entry, `created: false`, nothing added.
   * The user may be a stored one or one gateway.yaml declares (the caller checks it exists).
   * Throws IdempotencyMismatch.
   */
  addCredit(credit: NewCredit, by: Actor): Promise<{ readonly entry: CreditEntry; readonly created: boolean }>;
  /** Newest first; `before` is an entry id (a page's `next`). */
  creditEntries(user: string, query: { readonly before?: number; readonly limit?: number }): Promise<Page<CreditEntry>>;

  /** Throws NameTaken("batch", …) when the batch name is in use. */
  createCodes(batch: NewCodeBatch, by: Actor): Promise<CodeBatch>;
  codeBatch(batch: string): Promise<CodeBatch | undefined>;
  /** Batches in name order (bytewise), paged like users: `prefix` filters, `after` is a page's `next`. */
  listCodeBatches(query: ListUsers): Promise<Page<CodeBatch>>;
  /**
   * Redeems one code into `user`'s balance, atomically across every process: one code,
   * one credit entry, whatever the race. `by` is the redeeming token ("token:<name>").
   */
  redeem(codeHash: string, user: string, by: Actor, now: number): Promise<RedeemResult>;

  /** Newest first. */
  audit(filter: AuditFilter): Promise<Page<AuditRecord>>;
  /** Records an action on something the store does not keep (a channel key taken out of
   * rotation): the audit log holds every operator action, not only account changes. */
  recordAudit(by: Actor, action: string, target: string, before: unknown, after: unknown): Promise<void>;

  /** The latest change's seq (0 for none): where a follower starts. */
  latestChange(): Promise<number>;
  /** Changes after `seq`, oldest first, at most `limit`. */
  changesSince(seq: number, limit: number): Promise<readonly AccountChange[]>;

  close(): Promise<void>;
}
