// The accounts store in this process's memory: for `store: memory:` and tests. It is the
// reference the SQL stores are held to by the contract suite (test/contract/).

import {
  IdempotencyMismatch, KeyTaken, NameTaken, NotFound, VersionConflict,
  type AccountChange, type AccountStore, type Actor, type AuditFilter, type AuditRecord, type CodeBatch, type CreditEntry,
  type ListTokens, type ListUsers, type NewCodeBatch, type NewCredit, type NewToken, type NewUser, type Page,
  type RedeemResult, type StoredToken, type StoredUser, type TokenPatch, type UserPatch,
} from "./store.js";
import { auditView, pageLimit, newTokenRecord, newUserRecord, patchToken, patchUser } from "./records.js";

interface Code {
  readonly batch: string;
  redeemed: boolean;
}

export class MemoryAccountStore implements AccountStore {
  readonly #users = new Map<string, StoredUser>();
  readonly #tokens = new Map<string, StoredToken>();
  readonly #tokenByHash = new Map<string, string>();
  readonly #credit: CreditEntry[] = [];
  readonly #creditByKey = new Map<string, CreditEntry>();
  readonly #batches = new Map<string, CodeBatch>();
  readonly #codes = new Map<string, Code>();
  readonly #audit: AuditRecord[] = [];
  readonly #changes: AccountChange[] = [];
  #now: () => number;

  constructor(opts: { readonly now?: () => number } = {}) {
    this.#now = opts.now ?? Date.now;
  }

  async tokenByHash(keyHash: string): Promise<StoredToken | undefined> {
    const name = this.#tokenByHash.get(keyHash);
    return name === undefined ? undefined : this.#tokens.get(name);
  }

  async token(name: string): Promise<StoredToken | undefined> {
    return this.#tokens.get(name);
  }

  async user(name: string): Promise<StoredUser | undefined> {
    return this.#users.get(name);
  }

  async creditOf(user: string): Promise<bigint> {
    let sum = 0n;
    for (const e of this.#credit) if (e.user === user) sum += e.amountNano;
    return sum;
  }

  async takenNames(kind: "user" | "token", names: readonly string[]): Promise<string[]> {
    const held = kind === "user" ? this.#users : this.#tokens;
    return names.filter((n) => held.has(n));
  }

  async listUsers(query: ListUsers): Promise<Page<StoredUser>> {
    return pageOf([...this.#users.values()], query, () => true);
  }

  async listTokens(query: ListTokens): Promise<Page<StoredToken>> {
    return pageOf([...this.#tokens.values()], query, (t) => query.user === undefined || t.user === query.user);
  }

  async createUser(user: NewUser, by: Actor): Promise<StoredUser> {
    if (this.#users.has(user.name)) throw new NameTaken("user", user.name, "store");
    const now = this.#now();
    const created = newUserRecord(user, now);
    this.#users.set(user.name, created);
    this.#record(by, "user.create", user.name, undefined, created, { kind: "user", name: user.name });
    const opening = user.openingCredit;
    if (opening && opening.amountNano !== 0n) {
      this.#addEntry(user.name, opening.amountNano, opening.amountNano > 0n ? "grant" : "adjustment", opening.reason, by.actor, undefined);
    }
    return created;
  }

  async updateUser(name: string, patch: UserPatch, by: Actor, expectedVersion?: number): Promise<StoredUser> {
    const before = this.#users.get(name);
    if (!before) throw new NotFound("user", name);
    if (expectedVersion !== undefined && expectedVersion !== before.version) throw new VersionConflict("user", name, expectedVersion, before.version);
    const after = patchUser(before, patch, this.#now());
    this.#users.set(name, after);
    this.#record(by, "user.update", name, before, after, { kind: "user", name });
    return after;
  }

  async createToken(token: NewToken, by: Actor): Promise<StoredToken> {
    if (this.#tokens.has(token.name)) throw new NameTaken("token", token.name, "store");
    if (this.#tokenByHash.has(token.keyHash)) throw new KeyTaken();
    if (!this.#users.has(token.user)) throw new NotFound("user", token.user);
    const now = this.#now();
    const created = newTokenRecord(token, now);
    this.#tokens.set(token.name, created);
    this.#tokenByHash.set(token.keyHash, token.name);
    this.#record(by, "token.create", token.name, undefined, created, { kind: "token", name: token.name, keyHash: token.keyHash });
    return created;
  }

  async updateToken(name: string, patch: TokenPatch, by: Actor, expectedVersion?: number): Promise<StoredToken> {
    const before = this.#tokens.get(name);
    if (!before || before.status === "revoked") throw new NotFound("token", name);
    if (expectedVersion !== undefined && expectedVersion !== before.version) throw new VersionConflict("token", name, expectedVersion, before.version);
    const after = patchToken(before, patch, this.#now());
    this.#tokens.set(name, after);
    this.#record(by, "token.update", name, before, after, { kind: "token", name, keyHash: after.keyHash });
    return after;
  }

  async revokeToken(name: string, by: Actor): Promise<StoredToken> {
    const before = this.#tokens.get(name);
    if (!before) throw new NotFound("token", name);
    if (before.status === "revoked") return before;
    const after: StoredToken = { ...before, status: "revoked", updatedAt: this.#now(), version: before.version + 1 };
    this.#tokens.set(name, after);
    this.#record(by, "token.revoke", name, before, after, { kind: "token", name, keyHash: after.keyHash });
    return after;
  }

  async addCredit(credit: NewCredit, by: Actor): Promise<{ entry: CreditEntry; created: boolean }> {
    if (credit.idempotencyKey !== undefined) {
      const seen = this.#creditByKey.get(credit.idempotencyKey);
      if (seen) {
        if (seen.user !== credit.user || seen.amountNano !== credit.amountNano) throw new IdempotencyMismatch(credit.idempotencyKey);
        return { entry: seen, created: false };
      }
    }
    const entry = this.#addEntry(credit.user, credit.amountNano, credit.amountNano > 0n ? "grant" : "adjustment", credit.reason, by.actor, credit.idempotencyKey);
    return { entry, created: true };
  }

  async creditEntries(user: string, query: { before?: number; limit?: number }): Promise<Page<CreditEntry>> {
    const limit = pageLimit(query.limit);
    const newest = this.#credit.filter((e) => e.user === user && (query.before === undefined || e.id < query.before)).reverse();
    const items = newest.slice(0, limit);
    return newest.length > limit ? { items, next: String(items.at(-1)!.id) } : { items };
  }

  async createCodes(batch: NewCodeBatch, by: Actor): Promise<CodeBatch> {
    if (this.#batches.has(batch.batch)) throw new NameTaken("batch", batch.batch, "store");
    const created: CodeBatch = {
      batch: batch.batch, count: batch.codeHashes.length, amountNano: batch.amountNano, expiresAt: batch.expiresAt,
      redeemed: 0, createdAt: this.#now(), actor: by.actor,
    };
    this.#batches.set(batch.batch, created);
    for (const hash of batch.codeHashes) this.#codes.set(hash, { batch: batch.batch, redeemed: false });
    this.#record(by, "codes.create", batch.batch, undefined, auditView.batch(created));
    return created;
  }

  async codeBatch(batch: string): Promise<CodeBatch | undefined> {
    return this.#batches.get(batch);
  }

  async listCodeBatches(query: ListUsers): Promise<Page<CodeBatch>> {
    return pageOf([...this.#batches.values()], query, () => true, (b) => b.batch);
  }

  async redeem(codeHash: string, user: string, by: Actor, now: number): Promise<RedeemResult> {
    const code = this.#codes.get(codeHash);
    if (!code) return { ok: false, reason: "unknown" };
    if (code.redeemed) return { ok: false, reason: "redeemed" };
    const batch = this.#batches.get(code.batch)!;
    if (batch.expiresAt <= now) return { ok: false, reason: "expired" };
    code.redeemed = true;
    this.#batches.set(batch.batch, { ...batch, redeemed: batch.redeemed + 1 });
    const entry = this.#addEntry(user, batch.amountNano, "redeem", `code from batch ${batch.batch}`, by.actor, undefined);
    return { ok: true, entry };
  }

  async audit(filter: AuditFilter): Promise<Page<AuditRecord>> {
    const limit = pageLimit(filter.limit);
    const matching = this.#audit.filter((r) =>
      (filter.before === undefined || r.id < filter.before) &&
      (filter.target === undefined || r.target === filter.target) &&
      (filter.actor === undefined || r.actor === filter.actor)).reverse();
    const items = matching.slice(0, limit);
    return matching.length > limit ? { items, next: String(items.at(-1)!.id) } : { items };
  }

  async recordAudit(by: Actor, action: string, target: string, before: unknown, after: unknown): Promise<void> {
    this.#record(by, action, target, before, after);
  }

  async latestChange(): Promise<number> {
    return this.#changes.length;
  }

  async changesSince(seq: number, limit: number): Promise<readonly AccountChange[]> {
    return this.#changes.slice(seq, seq + limit);
  }

  async close(): Promise<void> {}

  #addEntry(user: string, amountNano: bigint, kind: CreditEntry["kind"], reason: string, actor: string, idempotencyKey: string | undefined): CreditEntry {
    const entry: CreditEntry = {
      id: this.#credit.length + 1, user, amountNano, kind, reason, actor,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }), at: this.#now(),
    };
    this.#credit.push(entry);
    if (idempotencyKey !== undefined) this.#creditByKey.set(idempotencyKey, entry);
    this.#record({ actor }, kind === "redeem" ? "code.redeem" : "credit.add", user, undefined, auditView.credit(entry), { kind: "user", name: user });
    return entry;
  }

  #record(by: Actor, action: string, target: string, before: unknown, after: unknown, change?: Omit<AccountChange, "seq">): void {
    this.#audit.push({
      id: this.#audit.length + 1, at: this.#now(), actor: by.actor, action, target,
      ...(before === undefined ? {} : { before: auditView.of(before) }), ...(after === undefined ? {} : { after: auditView.of(after) }),
    });
    if (change) this.#changes.push({ seq: this.#changes.length + 1, ...change });
  }
}

function pageOf<T>(all: T[], query: ListUsers, keep: (item: T) => boolean, nameOf: (item: T) => string = (item) => (item as { name: string }).name): Page<T> {
  const limit = pageLimit(query.limit);
  const matching = all
    .filter((item) => keep(item) && (query.prefix === undefined || nameOf(item).startsWith(query.prefix)) && (query.after === undefined || nameOf(item) > query.after))
    .sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  const items = matching.slice(0, limit);
  return matching.length > limit ? { items, next: nameOf(items.at(-1)!) } : { items };
}
