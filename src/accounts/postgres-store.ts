// The accounts store on PostgreSQL (node-postgres), for gateways sharing a `ledger:`
// database. Each change is one transaction writing the row(s), the audit record and a
// change-feed row; versions are optimistic (UPDATE … WHERE version = the one read); a code
// is claimed by a conditional UPDATE, so it redeems once across any number of processes.

import pg from "pg";
import { log } from "../observability/log.js";
import { describePostgresUrl, openMigratedPool } from "../state/postgres-pool.js";
import { auditView, pageLimit, patchToken, patchUser, settingsOrNone } from "./records.js";
import {
  IdempotencyMismatch, KeyTaken, NameTaken, NotFound, VersionConflict,
  type AccountChange, type AccountSettings, type AccountStore, type Actor, type AuditFilter, type AuditRecord, type CodeBatch, type CreditEntry,
  type ListTokens, type ListUsers, type NewCodeBatch, type NewCredit, type NewToken, type NewUser, type Page,
  type RedeemResult, type StoredToken, type StoredUser, type TokenPatch, type UserPatch,
} from "./store.js";

export interface PostgresAccountStoreOptions {
  /** Connections in this store's own pool; default 4. */
  readonly poolSize?: number;
  /** How long opening (or waiting for) a connection may take; default 3000 ms. */
  readonly connectTimeoutMs?: number;
  /** How long a statement may take before it fails; default 5000 ms. */
  readonly statementTimeoutMs?: number;
  /** The clock for createdAt, updatedAt and `at` (epoch ms); tests inject one. */
  readonly now?: () => number;
}

/** How long change-feed rows are kept: a follower further behind reloads instead. */
const CHANGE_RETENTION_MS = 3_600_000;
/** Held from writing a change-feed row until commit, so seqs become visible in order:
 * a follower that has read seq n never later finds a smaller one committed (an arbitrary
 * fixed key, beside the migration lock's). */
const CHANGE_FEED_LOCK = "7351200913";
/** Attempts of a change that keeps losing races (an update without an expected version, a redemption). */
const MAX_ATTEMPTS = 50;

/**
 * Connects to the database at `url`, migrates its schema and returns the store. Throws an
 * Error naming postgres and the address (never the password) when it cannot.
 */
export async function openPostgresAccountStore(url: string, opts: PostgresAccountStoreOptions = {}): Promise<AccountStore> {
  const pool = await openMigratedPool(url, "accounts", "llm-gateway-accounts", opts);
  // An idle connection the server dropped: without a listener this would crash the process.
  // The next query opens another connection and fails on its own if the server is gone.
  pool.on("error", (error) => log.warn("accounts: a postgres connection was lost", { where: describePostgresUrl(url), error: error.message }));
  return new PostgresAccountStore(pool, opts.now ?? Date.now);
}

/** The unique constraint a statement broke (23505), or undefined for any other error. */
function uniqueViolation(error: unknown): string | undefined {
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === "23505" && typeof e.constraint === "string" ? e.constraint : undefined;
}

type Row = Record<string, unknown>;
type Query = (text: string, values?: readonly unknown[]) => Promise<Row[]>;

const USER_COLUMNS = "name, status, groups, note, created_at, updated_at, version, settings";
const TOKEN_COLUMNS = `name, key_hash, key_hint, "user", grp, status, expires_at, quota_nano, allow_ips, models, created_at, updated_at, version, settings`;
const CREDIT_COLUMNS = `id, "user", amount_nano, kind, reason, actor, idempotency_key, at`;
const BATCH_COLUMNS = "batch, count, amount_nano, expires_at, redeemed, created_at, actor";

// bigint columns come back as strings (node-postgres' default): money through BigInt,
// epoch ms and ids through Number (both well inside 2^53).
const num = (v: unknown): number => Number(v);
/** Settings as a jsonb parameter (node-postgres sends text; the cast reads it). */
const jsonb = (s: AccountSettings | undefined): string | null => (s === undefined ? null : JSON.stringify(s));

function userOf(r: Row): StoredUser {
  return {
    name: r.name as string, status: r.status as StoredUser["status"], groups: r.groups as string[],
    ...(r.note === null ? {} : { note: r.note as string }),
    ...(r.settings === null || r.settings === undefined ? {} : { settings: r.settings as AccountSettings }),
    createdAt: num(r.created_at), updatedAt: num(r.updated_at), version: r.version as number,
  };
}

function tokenOf(r: Row): StoredToken {
  return {
    name: r.name as string, keyHash: r.key_hash as string,
    ...(r.key_hint === null ? {} : { keyHint: r.key_hint as string }),
    user: r.user as string, group: r.grp as string, status: r.status as StoredToken["status"],
    ...(r.expires_at === null ? {} : { expiresAt: num(r.expires_at) }),
    ...(r.quota_nano === null ? {} : { quotaNano: BigInt(r.quota_nano as string) }),
    ...(r.allow_ips === null ? {} : { allowIps: r.allow_ips as string[] }),
    ...(r.models === null ? {} : { models: r.models as string[] }),
    ...(r.settings === null || r.settings === undefined ? {} : { settings: r.settings as AccountSettings }),
    createdAt: num(r.created_at), updatedAt: num(r.updated_at), version: r.version as number,
  };
}

function creditOf(r: Row): CreditEntry {
  return {
    id: num(r.id), user: r.user as string, amountNano: BigInt(r.amount_nano as string), kind: r.kind as CreditEntry["kind"],
    reason: r.reason as string, actor: r.actor as string,
    ...(r.idempotency_key === null ? {} : { idempotencyKey: r.idempotency_key as string }), at: num(r.at),
  };
}

function batchOf(r: Row): CodeBatch {
  return {
    batch: r.batch as string, count: r.count as number, amountNano: BigInt(r.amount_nano as string), expiresAt: num(r.expires_at),
    redeemed: r.redeemed as number, createdAt: num(r.created_at), actor: r.actor as string,
  };
}

function auditOf(r: Row): AuditRecord {
  return {
    id: num(r.id), at: num(r.at), actor: r.actor as string, action: r.action as string, target: r.target as string,
    ...(r.before === null ? {} : { before: r.before }), ...(r.after === null ? {} : { after: r.after }),
  };
}

function changeOf(r: Row): AccountChange {
  return { seq: num(r.seq), kind: r.kind as AccountChange["kind"], name: r.name as string, ...(r.key_hash === null ? {} : { keyHash: r.key_hash as string }) };
}

/** A page from rows fetched with limit + 1: the extra row only says there is more. */
function pageOf<T>(rows: readonly T[], limit: number, cursor: (last: T) => string): Page<T> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: cursor(items.at(-1)!) };
}

/** Optional values as SQL parameters: undefined is NULL, money is its exact decimal. */
const opt = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
const money = (v: bigint | undefined): string | null => (v === undefined ? null : v.toString());

class PostgresAccountStore implements AccountStore {
  readonly #pool: pg.Pool;
  readonly #now: () => number;
  #closed: Promise<void> | undefined;

  constructor(pool: pg.Pool, now: () => number) {
    this.#pool = pool;
    this.#now = now;
  }

  async tokenByHash(keyHash: string): Promise<StoredToken | undefined> {
    const [row] = await this.#query(`SELECT ${TOKEN_COLUMNS} FROM account_tokens WHERE key_hash = $1`, [keyHash]);
    return row && tokenOf(row);
  }

  async token(name: string): Promise<StoredToken | undefined> {
    const [row] = await this.#query(`SELECT ${TOKEN_COLUMNS} FROM account_tokens WHERE name = $1`, [name]);
    return row && tokenOf(row);
  }

  async user(name: string): Promise<StoredUser | undefined> {
    const [row] = await this.#query(`SELECT ${USER_COLUMNS} FROM account_users WHERE name = $1`, [name]);
    return row && userOf(row);
  }

  async creditOf(user: string): Promise<bigint> {
    // sum(bigint) is numeric: read as text, so no float ever holds it.
    const [row] = await this.#query(`SELECT coalesce(sum(amount_nano), 0)::text AS total FROM credit_entries WHERE "user" = $1`, [user]);
    return BigInt(row!.total as string);
  }

  // A prefix is text, not a LIKE pattern: starts_with matches it exactly, and `name >= prefix`
  // lets the scan start at it in the index.
  async listUsers(query: ListUsers): Promise<Page<StoredUser>> {
    const limit = pageLimit(query.limit);
    const rows = await this.#query(
      `SELECT ${USER_COLUMNS} FROM account_users
        WHERE ($1::text IS NULL OR (name >= $1 COLLATE "C" AND starts_with(name, $1))) AND ($2::text IS NULL OR name > $2 COLLATE "C")
        ORDER BY name COLLATE "C" LIMIT $3`,
      [opt(query.prefix), opt(query.after), limit + 1]);
    return pageOf(rows.map(userOf), limit, (u) => u.name);
  }

  async listTokens(query: ListTokens): Promise<Page<StoredToken>> {
    const limit = pageLimit(query.limit);
    const rows = await this.#query(
      `SELECT ${TOKEN_COLUMNS} FROM account_tokens
        WHERE ($1::text IS NULL OR (name >= $1 COLLATE "C" AND starts_with(name, $1))) AND ($2::text IS NULL OR name > $2 COLLATE "C")
          AND ($3::text IS NULL OR "user" = $3)
        ORDER BY name COLLATE "C" LIMIT $4`,
      [opt(query.prefix), opt(query.after), opt(query.user), limit + 1]);
    return pageOf(rows.map(tokenOf), limit, (t) => t.name);
  }

  async createUser(user: NewUser, by: Actor): Promise<StoredUser> {
    const now = this.#now();
    return this.#transaction(async (q) => {
      const rows = await q(
        `INSERT INTO account_users (${USER_COLUMNS}) VALUES ($1, $2, $3::text[], $4, $5, $5, 1, $6::jsonb)
         ON CONFLICT (name) DO NOTHING RETURNING ${USER_COLUMNS}`,
        [user.name, user.status ?? "active", [...(user.groups ?? [])], opt(user.note), now, jsonb(settingsOrNone(user.settings))]);
      if (rows.length === 0) throw new NameTaken("user", user.name, "store");
      const created = userOf(rows[0]!);
      await this.#record(q, by, "user.create", user.name, undefined, created, { kind: "user", name: user.name });
      const opening = user.openingCredit;
      if (opening && opening.amountNano !== 0n) {
        const [entry] = await q(
          `INSERT INTO credit_entries ("user", amount_nano, kind, reason, actor, idempotency_key, at)
           VALUES ($1, $2::bigint, $3, $4, $5, NULL, $6) RETURNING ${CREDIT_COLUMNS}`,
          [user.name, opening.amountNano.toString(), opening.amountNano > 0n ? "grant" : "adjustment", opening.reason, by.actor, now]);
        await this.#record(q, by, "credit.add", user.name, undefined, auditView.credit(creditOf(entry!)), { kind: "user", name: user.name });
      }
      return created;
    });
  }

  async updateUser(name: string, patch: UserPatch, by: Actor, expectedVersion?: number): Promise<StoredUser> {
    return this.#transaction(async (q) => {
      for (let attempt = 1; ; attempt++) {
        const [row] = await q(`SELECT ${USER_COLUMNS} FROM account_users WHERE name = $1`, [name]);
        if (!row) throw new NotFound("user", name);
        const before = userOf(row);
        if (expectedVersion !== undefined && expectedVersion !== before.version) throw new VersionConflict("user", name, expectedVersion, before.version);
        const after = patchUser(before, patch, this.#now());
        // The version read, not the expected one: a change landing between the read and
        // here is caught either way, and the patch applies to what was read.
        const updated = await q(
          `UPDATE account_users SET status = $2, groups = $3::text[], note = $4, updated_at = $5, version = $6, settings = $8::jsonb
            WHERE name = $1 AND version = $7 RETURNING ${USER_COLUMNS}`,
          [name, after.status, [...after.groups], opt(after.note), after.updatedAt, after.version, before.version, jsonb(after.settings)]);
        if (updated.length === 1) {
          const stored = userOf(updated[0]!);
          await this.#record(q, by, "user.update", name, before, stored, { kind: "user", name });
          return stored;
        }
        if (expectedVersion === undefined && attempt < MAX_ATTEMPTS) continue; // lost a race: patch what is there now
        const [now] = await q("SELECT version FROM account_users WHERE name = $1", [name]);
        if (!now) throw new NotFound("user", name);
        throw new VersionConflict("user", name, expectedVersion ?? before.version, now.version as number);
      }
    });
  }

  async createToken(token: NewToken, by: Actor): Promise<StoredToken> {
    const now = this.#now();
    return this.#transaction(async (q) => {
      let rows: Row[];
      try {
        rows = await q(
          `INSERT INTO account_tokens (${TOKEN_COLUMNS})
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::bigint, $9::text[], $10::text[], $11, $11, 1, $12::jsonb) RETURNING ${TOKEN_COLUMNS}`,
          [token.name, token.keyHash, opt(token.keyHint), token.user, token.group, token.status ?? "active", opt(token.expiresAt),
            money(token.quotaNano), token.allowIps ? [...token.allowIps] : null, token.models ? [...token.models] : null, now,
            jsonb(settingsOrNone(token.settings))]);
      } catch (error) {
        const constraint = uniqueViolation(error);
        if (constraint === "account_tokens_pkey") throw new NameTaken("token", token.name, "store");
        if (constraint === "account_tokens_key_hash_key") throw new KeyTaken();
        throw error;
      }
      // Checked after the insert, as the memory store does: a taken name or key is reported first.
      // Users are never deleted, so one seen here stays.
      const [owner] = await q("SELECT 1 FROM account_users WHERE name = $1", [token.user]);
      if (!owner) throw new NotFound("user", token.user);
      const created = tokenOf(rows[0]!);
      await this.#record(q, by, "token.create", token.name, undefined, created, { kind: "token", name: token.name, keyHash: token.keyHash });
      return created;
    });
  }

  async updateToken(name: string, patch: TokenPatch, by: Actor, expectedVersion?: number): Promise<StoredToken> {
    return this.#transaction(async (q) => {
      for (let attempt = 1; ; attempt++) {
        const before = await this.#tokenIn(q, name);
        if (!before || before.status === "revoked") throw new NotFound("token", name);
        if (expectedVersion !== undefined && expectedVersion !== before.version) throw new VersionConflict("token", name, expectedVersion, before.version);
        const after = patchToken(before, patch, this.#now());
        const updated = await q(
          `UPDATE account_tokens SET status = $2, grp = $3, expires_at = $4, quota_nano = $5::bigint, allow_ips = $6::text[],
                  models = $7::text[], updated_at = $8, version = $9, settings = $11::jsonb
            WHERE name = $1 AND version = $10 RETURNING ${TOKEN_COLUMNS}`,
          [name, after.status, after.group, opt(after.expiresAt), money(after.quotaNano), after.allowIps ? [...after.allowIps] : null,
            after.models ? [...after.models] : null, after.updatedAt, after.version, before.version, jsonb(after.settings)]);
        if (updated.length === 1) {
          const stored = tokenOf(updated[0]!);
          await this.#record(q, by, "token.update", name, before, stored, { kind: "token", name, keyHash: stored.keyHash });
          return stored;
        }
        if (expectedVersion === undefined && attempt < MAX_ATTEMPTS) continue;
        const now = await this.#tokenIn(q, name);
        if (!now || now.status === "revoked") throw new NotFound("token", name);
        throw new VersionConflict("token", name, expectedVersion ?? before.version, now.version);
      }
    });
  }

  async revokeToken(name: string, by: Actor): Promise<StoredToken> {
    return this.#transaction(async (q) => {
      for (;;) {
        const before = await this.#tokenIn(q, name);
        if (!before) throw new NotFound("token", name);
        if (before.status === "revoked") return before;
        // Revoking wins over any change: it retries until it lands, whatever version it meets.
        const updated = await q(
          `UPDATE account_tokens SET status = 'revoked', updated_at = $2, version = version + 1
            WHERE name = $1 AND version = $3 RETURNING ${TOKEN_COLUMNS}`,
          [name, this.#now(), before.version]);
        if (updated.length === 0) continue;
        const after = tokenOf(updated[0]!);
        await this.#record(q, by, "token.revoke", name, before, after, { kind: "token", name, keyHash: after.keyHash });
        return after;
      }
    });
  }

  async addCredit(credit: NewCredit, by: Actor): Promise<{ entry: CreditEntry; created: boolean }> {
    const kind = credit.amountNano > 0n ? "grant" : "adjustment";
    const at = this.#now();
    const added = await this.#transaction(async (q) => {
      // A concurrent insert of the same key makes this wait for its commit, then do nothing.
      const rows = await q(
        `INSERT INTO credit_entries ("user", amount_nano, kind, reason, actor, idempotency_key, at)
         VALUES ($1, $2::bigint, $3, $4, $5, $6, $7) ON CONFLICT (idempotency_key) DO NOTHING RETURNING ${CREDIT_COLUMNS}`,
        [credit.user, credit.amountNano.toString(), kind, credit.reason, by.actor, opt(credit.idempotencyKey), at]);
      if (rows.length === 0) return undefined;
      const entry = creditOf(rows[0]!);
      await this.#record(q, by, "credit.add", credit.user, undefined, auditView.credit(entry), { kind: "user", name: credit.user });
      return entry;
    });
    if (added) return { entry: added, created: true };
    // The key was used before (a fresh statement sees the committed row).
    const key = credit.idempotencyKey!;
    const [row] = await this.#query(`SELECT ${CREDIT_COLUMNS} FROM credit_entries WHERE idempotency_key = $1`, [key]);
    const seen = creditOf(row!);
    if (seen.user !== credit.user || seen.amountNano !== credit.amountNano) throw new IdempotencyMismatch(key);
    return { entry: seen, created: false };
  }

  async recordAudit(by: Actor, action: string, target: string, before: unknown, after: unknown): Promise<void> {
    await this.#transaction((q) => this.#record(q, by, action, target, before, after));
  }

  async takenNames(kind: "user" | "token", names: readonly string[]): Promise<string[]> {
    const table = kind === "user" ? "account_users" : "account_tokens";
    const taken: string[] = [];
    for (let i = 0; i < names.length; i += 10_000) {
      const rows = await this.#query(`SELECT name FROM ${table} WHERE name = ANY($1::text[])`, [names.slice(i, i + 10_000)]);
      for (const r of rows) taken.push(r.name as string);
    }
    return taken;
  }

  async creditEntries(user: string, query: { before?: number; limit?: number }): Promise<Page<CreditEntry>> {
    const limit = pageLimit(query.limit);
    const rows = await this.#query(
      `SELECT ${CREDIT_COLUMNS} FROM credit_entries WHERE "user" = $1 AND ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
      [user, opt(query.before), limit + 1]);
    return pageOf(rows.map(creditOf), limit, (e) => String(e.id));
  }

  async createCodes(batch: NewCodeBatch, by: Actor): Promise<CodeBatch> {
    const now = this.#now();
    return this.#transaction(async (q) => {
      const rows = await q(
        `INSERT INTO code_batches (${BATCH_COLUMNS}) VALUES ($1, $2, $3::bigint, $4, 0, $5, $6)
         ON CONFLICT (batch) DO NOTHING RETURNING ${BATCH_COLUMNS}`,
        [batch.batch, batch.codeHashes.length, batch.amountNano.toString(), batch.expiresAt, now, by.actor]);
      if (rows.length === 0) throw new NameTaken("batch", batch.batch, "store");
      try {
        await q("INSERT INTO redemption_codes (code_hash, batch) SELECT unnest($1::text[]), $2", [[...batch.codeHashes], batch.batch]);
      } catch (error) {
        // Random codes never collide; a caller passing one twice gets a plain error.
        if (uniqueViolation(error) === "redemption_codes_pkey") throw new Error(`batch '${batch.batch}': a code is listed twice or belongs to another batch`);
        throw error;
      }
      const created = batchOf(rows[0]!);
      await this.#record(q, by, "codes.create", batch.batch, undefined, auditView.batch(created));
      return created;
    });
  }

  async codeBatch(batch: string): Promise<CodeBatch | undefined> {
    const [row] = await this.#query(`SELECT ${BATCH_COLUMNS} FROM code_batches WHERE batch = $1`, [batch]);
    return row && batchOf(row);
  }

  async listCodeBatches(query: ListUsers): Promise<Page<CodeBatch>> {
    const limit = pageLimit(query.limit);
    const rows = await this.#query(
      `SELECT ${BATCH_COLUMNS} FROM code_batches
        WHERE ($1::text IS NULL OR starts_with(batch, $1)) AND ($2::text IS NULL OR batch > $2 COLLATE "C")
        ORDER BY batch COLLATE "C" LIMIT $3`,
      [opt(query.prefix), opt(query.after), limit + 1]);
    return pageOf(rows.map(batchOf), limit, (b) => b.batch);
  }

  async redeem(codeHash: string, user: string, by: Actor, now: number): Promise<RedeemResult> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const result = await this.#transaction(async (q): Promise<RedeemResult | undefined> => {
        // The claim: of any number of these racing, one updates the row; the others wait
        // for it to commit, re-check `redeemed_at IS NULL` and update nothing.
        const [claimed] = await q(
          `UPDATE redemption_codes c SET redeemed_at = $2, redeemed_by = $3
             FROM code_batches b
            WHERE c.code_hash = $1 AND c.redeemed_at IS NULL AND b.batch = c.batch AND b.expires_at > $2
           RETURNING c.batch, b.amount_nano`,
          [codeHash, now, by.actor]);
        if (!claimed) {
          const [row] = await q(
            "SELECT c.redeemed_at, b.expires_at FROM redemption_codes c JOIN code_batches b USING (batch) WHERE c.code_hash = $1",
            [codeHash]);
          if (!row) return { ok: false, reason: "unknown" };
          if (row.redeemed_at !== null) return { ok: false, reason: "redeemed" };
          if (num(row.expires_at) <= now) return { ok: false, reason: "expired" };
          return undefined; // a claim that rolled back between the two reads: try again
        }
        const batch = claimed.batch as string;
        await q("UPDATE code_batches SET redeemed = redeemed + 1 WHERE batch = $1", [batch]);
        const [row] = await q(
          `INSERT INTO credit_entries ("user", amount_nano, kind, reason, actor, at)
           VALUES ($1, $2::bigint, 'redeem', $3, $4, $5) RETURNING ${CREDIT_COLUMNS}`,
          [user, claimed.amount_nano, `code from batch ${batch}`, by.actor, this.#now()]);
        const entry = creditOf(row!);
        await this.#record(q, by, "code.redeem", user, undefined, auditView.credit(entry), { kind: "user", name: user });
        return { ok: true, entry };
      });
      if (result) return result;
    }
    throw new Error(`redeeming a code: it stayed claimable yet could not be claimed ${MAX_ATTEMPTS} times`);
  }

  async audit(filter: AuditFilter): Promise<Page<AuditRecord>> {
    const limit = pageLimit(filter.limit);
    const rows = await this.#query(
      `SELECT id, at, actor, action, target, before, after FROM audit_log
        WHERE ($1::text IS NULL OR target = $1) AND ($2::text IS NULL OR actor = $2) AND ($3::bigint IS NULL OR id < $3)
        ORDER BY id DESC LIMIT $4`,
      [opt(filter.target), opt(filter.actor), opt(filter.before), limit + 1]);
    return pageOf(rows.map(auditOf), limit, (r) => String(r.id));
  }

  async latestChange(): Promise<number> {
    // Old rows are deleted only by a change, which leaves its own: the newest always stays.
    const [row] = await this.#query("SELECT coalesce(max(seq), 0) AS seq FROM account_changes");
    return num(row!.seq);
  }

  async changesSince(seq: number, limit: number): Promise<readonly AccountChange[]> {
    const rows = await this.#query("SELECT seq, kind, name, key_hash FROM account_changes WHERE seq > $1 ORDER BY seq LIMIT $2", [seq, limit]);
    return rows.map(changeOf);
  }

  close(): Promise<void> {
    this.#closed ??= this.#pool.end();
    return this.#closed;
  }

  async #tokenIn(q: Query, name: string): Promise<StoredToken | undefined> {
    const [row] = await q(`SELECT ${TOKEN_COLUMNS} FROM account_tokens WHERE name = $1`, [name]);
    return row && tokenOf(row);
  }

  /**
   * The audit record and, for a user or token, the change-feed row of a change, in its
   * transaction. The feed row goes last, under a lock held to commit: seqs are handed out
   * in commit order, so a follower never skips one that commits after a later one.
   */
  async #record(q: Query, by: Actor, action: string, target: string, before: unknown, after: unknown, change?: Omit<AccountChange, "seq">): Promise<void> {
    const at = this.#now();
    const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(auditView.of(v)));
    await q("INSERT INTO audit_log (at, actor, action, target, before, after) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)",
      [at, by.actor, action, target, json(before), json(after)]);
    if (!change) return;
    await q("SELECT pg_advisory_xact_lock($1::bigint)", [CHANGE_FEED_LOCK]);
    await q("INSERT INTO account_changes (kind, name, key_hash, at) VALUES ($1, $2, $3, $4)", [change.kind, change.name, opt(change.keyHash), at]);
    // Cheap through the index on `at`; the row just written is never this old.
    await q("DELETE FROM account_changes WHERE at < $1", [at - CHANGE_RETENTION_MS]);
  }

  async #query(text: string, values: readonly unknown[] = []): Promise<Row[]> {
    const result = await this.#pool.query<Row>(text, values as unknown[]);
    return result.rows;
  }

  /** Runs `body` in one transaction on one connection: COMMIT when it returns, ROLLBACK when it throws. */
  async #transaction<T>(body: (q: Query) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    // A connection lost between statements is reported by the next one; without a
    // listener the client's error event would crash the process.
    const onError = () => {};
    client.on("error", onError);
    let reusable = true;
    try {
      await client.query("BEGIN");
      const result = await body(async (text, values = []) => (await client.query<Row>(text, values as unknown[])).rows);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      // A connection that cannot even roll back is in an unknown state: close it, not reuse it.
      await client.query("ROLLBACK").catch(() => { reusable = false; });
      throw error;
    } finally {
      client.off("error", onError);
      client.release(!reusable);
    }
  }
}
