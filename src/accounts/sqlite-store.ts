// The accounts store in SQLite (better-sqlite3), in the same file as the usage log (tables
// of migration 7). Every change is one IMMEDIATE transaction holding the row, its audit
// record and its change-feed row: IMMEDIATE takes the file's write lock before reading, so
// a check (a taken name, a version, a code not yet redeemed) holds until the commit, across
// every process that opens the file. Money is INTEGER nano-units read back as bigint.

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { configureConnection, whileBusy } from "../state/sqlite-commit.js";
import { migrate } from "../state/migrations.js";
import { auditView, pageLimit, newTokenRecord, newUserRecord, patchToken, patchUser } from "./records.js";
import {
  IdempotencyMismatch, KeyTaken, NameTaken, NotFound, VersionConflict,
  type AccountChange, type AccountSettings, type AccountStore, type Actor, type AuditFilter, type AuditRecord, type CodeBatch, type CreditEntry,
  type ListTokens, type ListUsers, type NewCodeBatch, type NewCredit, type NewToken, type NewUser, type Page,
  type RedeemResult, type StoredToken, type StoredUser, type TokenPatch, type UserPatch,
} from "./store.js";

export interface SqliteAccountStoreOptions {
  /** How long a change waits for another connection's write lock; default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** The clock for createdAt, updatedAt and `at` (tests inject one). */
  readonly now?: () => number;
}

/** How long the change feed keeps a change: a follower further behind reloads instead. */
export const CHANGE_RETENTION_MS = 60 * 60 * 1000;

/**
 * Opens the accounts store in the SQLite file at `path` (created, with its parent folders,
 * when missing; ":memory:" for a private database) and migrates its schema. Any number of
 * processes may open the same file at once.
 */
export function openSqliteAccountStore(path: string, opts: SqliteAccountStoreOptions = {}): AccountStore {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    // The busy timeout first: another process may hold the file's lock while this one
    // switches it to WAL (readers never block the writer) or migrates it.
    configureConnection(db, opts.busyTimeoutMs ?? 5000);
    // Switching a fresh file to WAL can answer SQLITE_BUSY at once, without the busy handler,
    // while another process is switching or migrating it: wait and try again, within the
    // busy timeout.
    whileBusy(opts.busyTimeoutMs ?? 5000, () => db.pragma("journal_mode = WAL"));
    migrate(db);
    return new SqliteAccountStore(db, opts.now ?? Date.now);
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Rows as better-sqlite3 returns them with safe integers on: every INTEGER is a bigint. */
type Row = Record<string, unknown>;

const int = (v: unknown): number => Number(v as bigint);
const text = (v: unknown): string | undefined => (v === null ? undefined : (v as string));
const list = (v: unknown): string[] | undefined => (v === null ? undefined : (JSON.parse(v as string) as string[]));
const jsonOrNull = (v: readonly string[] | undefined): string | null => (v === undefined ? null : JSON.stringify(v));

const settingsOf = (v: unknown): AccountSettings | undefined => (v === null || v === undefined ? undefined : (JSON.parse(v as string) as AccountSettings));
const settingsText = (s: AccountSettings | undefined): string | null => (s === undefined ? null : JSON.stringify(s));

function userOf(r: Row): StoredUser {
  const note = text(r.note);
  const settings = settingsOf(r.settings);
  return {
    name: r.name as string, status: r.status as StoredUser["status"], groups: list(r.groups) ?? [],
    ...(note === undefined ? {} : { note }),
    ...(settings === undefined ? {} : { settings }),
    createdAt: int(r.created_at), updatedAt: int(r.updated_at), version: int(r.version),
  };
}

function tokenOf(r: Row): StoredToken {
  const keyHint = text(r.key_hint);
  const allowIps = list(r.allow_ips);
  const models = list(r.models);
  const settings = settingsOf(r.settings);
  return {
    name: r.name as string, keyHash: r.key_hash as string, ...(keyHint === undefined ? {} : { keyHint }),
    user: r.user as string, group: r.grp as string, status: r.status as StoredToken["status"],
    ...(r.expires_at === null ? {} : { expiresAt: int(r.expires_at) }),
    ...(r.quota_nano === null ? {} : { quotaNano: r.quota_nano as bigint }),
    ...(allowIps === undefined ? {} : { allowIps }),
    ...(models === undefined ? {} : { models }),
    ...(settings === undefined ? {} : { settings }),
    createdAt: int(r.created_at), updatedAt: int(r.updated_at), version: int(r.version),
  };
}

function entryOf(r: Row): CreditEntry {
  const idempotencyKey = text(r.idempotency_key);
  return {
    id: int(r.id), user: r.user as string, amountNano: r.amount_nano as bigint, kind: r.kind as CreditEntry["kind"],
    reason: r.reason as string, actor: r.actor as string, ...(idempotencyKey === undefined ? {} : { idempotencyKey }), at: int(r.at),
  };
}

function batchOf(r: Row): CodeBatch {
  return {
    batch: r.batch as string, count: int(r.count), amountNano: r.amount_nano as bigint, expiresAt: int(r.expires_at),
    redeemed: int(r.redeemed), createdAt: int(r.created_at), actor: r.actor as string,
  };
}

function auditOf(r: Row): AuditRecord {
  return {
    id: int(r.id), at: int(r.at), actor: r.actor as string, action: r.action as string, target: r.target as string,
    ...(r.before === null ? {} : { before: JSON.parse(r.before as string) as unknown }),
    ...(r.after === null ? {} : { after: JSON.parse(r.after as string) as unknown }),
  };
}

function changeOf(r: Row): AccountChange {
  return { seq: int(r.seq), kind: r.kind as AccountChange["kind"], name: r.name as string, ...(r.key_hash === null ? {} : { keyHash: r.key_hash as string }) };
}

/** The least string above every string starting with `prefix` in code point (= UTF-8
 * byte) order, or undefined when there is none: `prefix` with its last code point one up. */
export function prefixEnd(prefix: string): string | undefined {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) {
      points.push(last === 0xd7ff ? 0xe000 : last + 1); // surrogates are not characters
      return String.fromCodePoint(...points);
    }
  }
  return undefined;
}

class SqliteAccountStore implements AccountStore {
  readonly #db: Database.Database;
  readonly #now: () => number;
  /** Statements by their SQL: the list queries are composed from the filters given. */
  readonly #statements = new Map<string, Database.Statement>();

  constructor(db: Database.Database, now: () => number) {
    this.#db = db;
    this.#now = now;
  }

  async tokenByHash(keyHash: string): Promise<StoredToken | undefined> {
    const row = this.#get("SELECT * FROM account_tokens WHERE key_hash = ?", keyHash);
    return row && tokenOf(row);
  }

  async token(name: string): Promise<StoredToken | undefined> {
    const row = this.#get("SELECT * FROM account_tokens WHERE name = ?", name);
    return row && tokenOf(row);
  }

  async user(name: string): Promise<StoredUser | undefined> {
    const row = this.#get("SELECT * FROM account_users WHERE name = ?", name);
    return row && userOf(row);
  }

  async creditOf(user: string): Promise<bigint> {
    return this.#get("SELECT COALESCE(SUM(amount_nano), 0) AS sum FROM credit_entries WHERE user = ?", user)!.sum as bigint;
  }

  async takenNames(kind: "user" | "token", names: readonly string[]): Promise<string[]> {
    const table = kind === "user" ? "account_users" : "account_tokens";
    const taken: string[] = [];
    // SQLite binds at most 32766 parameters a statement: 500 a batch is far below.
    for (let i = 0; i < names.length; i += 500) {
      const batch = names.slice(i, i + 500);
      const rows = this.#db.prepare(`SELECT name FROM ${table} WHERE name IN (${batch.map(() => "?").join(",")})`).all(...batch) as Row[];
      for (const r of rows) taken.push(r.name as string);
    }
    return taken;
  }

  async listUsers(query: ListUsers): Promise<Page<StoredUser>> {
    return this.#namePage("account_users", query, undefined, userOf);
  }

  async listTokens(query: ListTokens): Promise<Page<StoredToken>> {
    return this.#namePage("account_tokens", query, query.user, tokenOf);
  }

  async createUser(user: NewUser, by: Actor): Promise<StoredUser> {
    return this.#change(() => {
      if (this.#get("SELECT 1 FROM account_users WHERE name = ?", user.name)) throw new NameTaken("user", user.name, "store");
      const now = this.#now();
      const created = newUserRecord(user, now);
      this.#run(`INSERT INTO account_users (name, status, groups, note, settings, created_at, updated_at, version)
        VALUES (:name, :status, :groups, :note, :settings, :createdAt, :updatedAt, :version)`, userParams(created));
      this.#record(now, by, "user.create", user.name, undefined, created, { kind: "user", name: user.name });
      const opening = user.openingCredit;
      if (opening && opening.amountNano !== 0n) {
        this.#addEntry(user.name, opening.amountNano, opening.amountNano > 0n ? "grant" : "adjustment", opening.reason, by.actor, undefined);
      }
      return created;
    });
  }

  async updateUser(name: string, patch: UserPatch, by: Actor, expectedVersion?: number): Promise<StoredUser> {
    return this.#change(() => {
      const row = this.#get("SELECT * FROM account_users WHERE name = ?", name);
      if (!row) throw new NotFound("user", name);
      const before = userOf(row);
      if (expectedVersion !== undefined && expectedVersion !== before.version) throw new VersionConflict("user", name, expectedVersion, before.version);
      const now = this.#now();
      const after = patchUser(before, patch, now);
      this.#run(`UPDATE account_users SET status = :status, groups = :groups, note = :note, settings = :settings, updated_at = :updatedAt, version = :version
        WHERE name = :name`, userParams(after));
      this.#record(now, by, "user.update", name, before, after, { kind: "user", name });
      return after;
    });
  }

  async createToken(token: NewToken, by: Actor): Promise<StoredToken> {
    return this.#change(() => {
      if (this.#get("SELECT 1 FROM account_tokens WHERE name = ?", token.name)) throw new NameTaken("token", token.name, "store");
      if (this.#get("SELECT 1 FROM account_tokens WHERE key_hash = ?", token.keyHash)) throw new KeyTaken();
      if (!this.#get("SELECT 1 FROM account_users WHERE name = ?", token.user)) throw new NotFound("user", token.user);
      const now = this.#now();
      const created = newTokenRecord(token, now);
      this.#run(`INSERT INTO account_tokens (name, key_hash, key_hint, user, grp, status, expires_at, quota_nano, allow_ips, models, settings, created_at, updated_at, version)
        VALUES (:name, :keyHash, :keyHint, :user, :group, :status, :expiresAt, :quotaNano, :allowIps, :models, :settings, :createdAt, :updatedAt, :version)`, tokenParams(created));
      this.#record(now, by, "token.create", token.name, undefined, created, { kind: "token", name: token.name, keyHash: token.keyHash });
      return created;
    });
  }

  async updateToken(name: string, patch: TokenPatch, by: Actor, expectedVersion?: number): Promise<StoredToken> {
    return this.#change(() => {
      const row = this.#get("SELECT * FROM account_tokens WHERE name = ?", name);
      if (!row || row.status === "revoked") throw new NotFound("token", name);
      const before = tokenOf(row);
      if (expectedVersion !== undefined && expectedVersion !== before.version) throw new VersionConflict("token", name, expectedVersion, before.version);
      const now = this.#now();
      const after = patchToken(before, patch, now);
      this.#writeToken(after);
      this.#record(now, by, "token.update", name, before, after, { kind: "token", name, keyHash: after.keyHash });
      return after;
    });
  }

  async revokeToken(name: string, by: Actor): Promise<StoredToken> {
    return this.#change(() => {
      const row = this.#get("SELECT * FROM account_tokens WHERE name = ?", name);
      if (!row) throw new NotFound("token", name);
      const before = tokenOf(row);
      if (before.status === "revoked") return before;
      const now = this.#now();
      const after: StoredToken = { ...before, status: "revoked", updatedAt: now, version: before.version + 1 };
      this.#writeToken(after);
      this.#record(now, by, "token.revoke", name, before, after, { kind: "token", name, keyHash: after.keyHash });
      return after;
    });
  }

  async addCredit(credit: NewCredit, by: Actor): Promise<{ entry: CreditEntry; created: boolean }> {
    return this.#change(() => {
      if (credit.idempotencyKey !== undefined) {
        const row = this.#get("SELECT * FROM credit_entries WHERE idempotency_key = ?", credit.idempotencyKey);
        if (row) {
          const seen = entryOf(row);
          if (seen.user !== credit.user || seen.amountNano !== credit.amountNano) throw new IdempotencyMismatch(credit.idempotencyKey);
          return { entry: seen, created: false };
        }
      }
      const kind = credit.amountNano > 0n ? "grant" : "adjustment";
      const entry = this.#addEntry(credit.user, credit.amountNano, kind, credit.reason, by.actor, credit.idempotencyKey);
      return { entry, created: true };
    });
  }

  async creditEntries(user: string, query: { before?: number; limit?: number }): Promise<Page<CreditEntry>> {
    const limit = pageLimit(query.limit);
    const rows = this.#all(`SELECT * FROM credit_entries WHERE user = :user${query.before === undefined ? "" : " AND id < :before"}
      ORDER BY id DESC LIMIT :limit`, { user, ...(query.before === undefined ? {} : { before: query.before }), limit: limit + 1 });
    return idPage(rows.map(entryOf), limit);
  }

  async createCodes(batch: NewCodeBatch, by: Actor): Promise<CodeBatch> {
    return this.#change(() => {
      if (this.#get("SELECT 1 FROM code_batches WHERE batch = ?", batch.batch)) throw new NameTaken("batch", batch.batch, "store");
      const now = this.#now();
      const created: CodeBatch = {
        batch: batch.batch, count: batch.codeHashes.length, amountNano: batch.amountNano, expiresAt: batch.expiresAt,
        redeemed: 0, createdAt: now, actor: by.actor,
      };
      this.#run(`INSERT INTO code_batches (batch, count, amount_nano, expires_at, redeemed, created_at, actor)
        VALUES (:batch, :count, :amountNano, :expiresAt, :redeemed, :createdAt, :actor)`, { ...created });
      const insert = this.#statement("INSERT INTO redemption_codes (code_hash, batch) VALUES (?, ?)");
      for (const hash of batch.codeHashes) insert.run(hash, batch.batch);
      this.#record(now, by, "codes.create", batch.batch, undefined, auditView.batch(created));
      return created;
    });
  }

  async codeBatch(batch: string): Promise<CodeBatch | undefined> {
    const row = this.#get("SELECT * FROM code_batches WHERE batch = ?", batch);
    return row && batchOf(row);
  }

  async listCodeBatches(query: ListUsers): Promise<Page<CodeBatch>> {
    return this.#namePage("code_batches", query, undefined, batchOf, "batch");
  }

  async redeem(codeHash: string, user: string, by: Actor, now: number): Promise<RedeemResult> {
    return this.#change((): RedeemResult => {
      const code = this.#get(`SELECT c.redeemed_at, b.batch, b.amount_nano, b.expires_at FROM redemption_codes c
        JOIN code_batches b ON b.batch = c.batch WHERE c.code_hash = ?`, codeHash);
      if (!code) return { ok: false, reason: "unknown" };
      if (code.redeemed_at !== null) return { ok: false, reason: "redeemed" };
      if (int(code.expires_at) <= now) return { ok: false, reason: "expired" };
      // The write lock makes the read above hold already; the condition keeps a code
      // single-use even if this ever runs outside one.
      const claimed = this.#run("UPDATE redemption_codes SET redeemed_at = ?, redeemed_by = ? WHERE code_hash = ? AND redeemed_at IS NULL", now, by.actor, codeHash);
      if (claimed.changes !== 1) return { ok: false, reason: "redeemed" };
      const batch = code.batch as string;
      this.#run("UPDATE code_batches SET redeemed = redeemed + 1 WHERE batch = ?", batch);
      const entry = this.#addEntry(user, code.amount_nano as bigint, "redeem", `code from batch ${batch}`, by.actor, undefined);
      return { ok: true, entry };
    });
  }

  async audit(filter: AuditFilter): Promise<Page<AuditRecord>> {
    const limit = pageLimit(filter.limit);
    const where = [
      filter.before === undefined ? "" : "id < :before",
      filter.target === undefined ? "" : "target = :target",
      filter.actor === undefined ? "" : "actor = :actor",
    ].filter(Boolean);
    const params = {
      ...(filter.before === undefined ? {} : { before: filter.before }),
      ...(filter.target === undefined ? {} : { target: filter.target }),
      ...(filter.actor === undefined ? {} : { actor: filter.actor }),
      limit: limit + 1,
    };
    const rows = this.#all(`SELECT * FROM audit_log${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT :limit`, params);
    return idPage(rows.map(auditOf), limit);
  }

  async recordAudit(by: Actor, action: string, target: string, before: unknown, after: unknown): Promise<void> {
    this.#change(() => this.#record(this.#now(), by, action, target, before, after));
  }

  async latestChange(): Promise<number> {
    // The sequence, not MAX(seq): it holds even when every change has aged out.
    const row = this.#get("SELECT seq FROM sqlite_sequence WHERE name = 'account_changes'");
    return row ? int(row.seq) : 0;
  }

  async changesSince(seq: number, limit: number): Promise<readonly AccountChange[]> {
    return this.#all("SELECT seq, kind, name, key_hash FROM account_changes WHERE seq > ? ORDER BY seq LIMIT ?", seq, limit).map(changeOf);
  }

  async close(): Promise<void> {
    this.#db.close();
  }

  /** Runs `body` as one IMMEDIATE transaction: the write lock first, then the reads. */
  #change<T>(body: () => T): T {
    return this.#db.transaction(body).immediate();
  }

  #addEntry(user: string, amountNano: bigint, kind: CreditEntry["kind"], reason: string, actor: string, idempotencyKey: string | undefined): CreditEntry {
    const at = this.#now();
    const { lastInsertRowid } = this.#run(`INSERT INTO credit_entries (user, amount_nano, kind, reason, actor, idempotency_key, at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`, user, amountNano, kind, reason, actor, idempotencyKey ?? null, at);
    const entry: CreditEntry = {
      id: Number(lastInsertRowid), user, amountNano, kind, reason, actor,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }), at,
    };
    this.#record(at, { actor }, kind === "redeem" ? "code.redeem" : "credit.add", user, undefined, auditView.credit(entry), { kind: "user", name: user });
    return entry;
  }

  #writeToken(token: StoredToken): void {
    this.#run(`UPDATE account_tokens SET status = :status, grp = :group, expires_at = :expiresAt, quota_nano = :quotaNano,
      allow_ips = :allowIps, models = :models, settings = :settings, updated_at = :updatedAt, version = :version WHERE name = :name`, tokenParams(token));
  }

  /** The audit record and, for a user or token, the change-feed row (pruning what aged out). */
  #record(at: number, by: Actor, action: string, target: string, before: unknown, after: unknown, change?: Omit<AccountChange, "seq">): void {
    this.#run("INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)",
      at, by.actor, action, target,
      before === undefined ? null : JSON.stringify(auditView.of(before)), after === undefined ? null : JSON.stringify(auditView.of(after)));
    if (!change) return;
    // Cheap on every change: the index on `at` finds the few rows that aged out since the last.
    this.#run("DELETE FROM account_changes WHERE at < ?", at - CHANGE_RETENTION_MS);
    this.#run("INSERT INTO account_changes (kind, name, key_hash, at) VALUES (?, ?, ?, ?)", change.kind, change.name, change.keyHash ?? null, at);
  }

  /** A page of users or tokens by name, bytewise (BINARY): a prefix is a range of the index. */
  #namePage<T>(table: string, query: ListUsers, user: string | undefined, of: (row: Row) => T, column = "name"): Page<T> {
    const limit = pageLimit(query.limit);
    const end = query.prefix === undefined ? undefined : prefixEnd(query.prefix);
    const where = [
      user === undefined ? "" : "user = :user",
      query.prefix === undefined ? "" : `${column} >= :prefix`,
      end === undefined ? "" : `${column} < :end`,
      query.after === undefined ? "" : `${column} > :after`,
    ].filter(Boolean);
    const params = {
      ...(user === undefined ? {} : { user }),
      ...(query.prefix === undefined ? {} : { prefix: query.prefix }),
      ...(end === undefined ? {} : { end }),
      ...(query.after === undefined ? {} : { after: query.after }),
      limit: limit + 1,
    };
    const rows = this.#all(`SELECT * FROM ${table}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${column} LIMIT :limit`, params);
    const items = rows.slice(0, limit).map(of);
    return rows.length > limit ? { items, next: rows[limit - 1][column] as string } : { items };
  }

  #statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #get(sql: string, ...params: unknown[]): Row | undefined {
    return this.#statement(sql).get(...params) as Row | undefined;
  }

  #all(sql: string, ...params: unknown[]): Row[] {
    return this.#statement(sql).all(...params) as Row[];
  }

  #run(sql: string, ...params: unknown[]): Database.RunResult {
    return this.#statement(sql).run(...params);
  }
}

function userParams(u: StoredUser): Record<string, unknown> {
  return {
    name: u.name, status: u.status, groups: JSON.stringify(u.groups), note: u.note ?? null, settings: settingsText(u.settings),
    createdAt: u.createdAt, updatedAt: u.updatedAt, version: u.version,
  };
}

function tokenParams(t: StoredToken): Record<string, unknown> {
  return {
    name: t.name, keyHash: t.keyHash, keyHint: t.keyHint ?? null, user: t.user, group: t.group, status: t.status,
    expiresAt: t.expiresAt ?? null, quotaNano: t.quotaNano ?? null, allowIps: jsonOrNull(t.allowIps), models: jsonOrNull(t.models),
    settings: settingsText(t.settings),
    createdAt: t.createdAt, updatedAt: t.updatedAt, version: t.version,
  };
}

/** A page newest first by id: `next` is the last item's id when more follow. */
function idPage<T extends { readonly id: number }>(rows: readonly T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return rows.length > limit ? { items, next: String(items.at(-1)!.id) } : { items };
}
