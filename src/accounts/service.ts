// The operator's account actions, one place for the admin API and the CLI: they check
// what only the running config knows (a name gateway.yaml declares, a group that exists),
// make keys and codes, and show accounts with their money. Everything they change goes
// through the AccountStore, which writes the audit log in the same transaction.

import { formatNano } from "../billing/cost.js";
import { sha256Hex } from "../config/hash.js";
import { accountSettingsIssues } from "../config/crossref.js";
import { compileIpMatcher } from "../config/matchers.js";
import { schemaIssues } from "../config/schema.js";
import type { Runtime } from "../runtime/types.js";
import { makeCode, makeTokenKey } from "./keys.js";
import { pageLimit } from "./records.js";
import { InvalidField } from "./money-input.js";
import {
  NameTaken, NotFound, VersionConflict,
  type AccountSettings, type Actor, type AccountStore, type CodeBatch, type CreditEntry, type ListTokens, type ListUsers, type Page,
  type NewToken, type RedeemResult, type StoredToken, type StoredUser, type TokenPatch, type UserPatch,
} from "./store.js";

/** Settled spend and money held by requests in flight: Accounts answers both; a CLI that
 * only has the usage log answers spend, and reserved is then unknown. */
export interface SpendSource {
  spentByUser(user: string): Promise<bigint>;
  spentByToken(token: string): Promise<bigint>;
  reservedByUser?(user: string): Promise<bigint>;
}

/** A change made here, for the directory of this process to apply at once (the others
 * follow the store's change feed). */
export type ChangeHook = () => Promise<void>;

/** A user as the API and the CLI show it: money as exact decimals of the currency. */
export interface UserView {
  readonly name: string;
  readonly source: "store" | "gateway.yaml";
  readonly status: "active" | "disabled";
  readonly groups: readonly string[];
  readonly note?: string;
  readonly plan?: string;
  /** In gateway.yaml's shape. */
  readonly limits?: Readonly<Record<string, unknown>>;
  readonly budgets?: readonly Readonly<Record<string, unknown>>[];
  /** gateway.yaml's credit (the opening grant) plus every credit entry. */
  readonly credit: string;
  readonly spent: string;
  /** Absent where this process cannot see reservations (the CLI on an embedded store). */
  readonly reserved?: string;
  /** credit − spent − reserved. */
  readonly balance: string;
  readonly version?: number;
  readonly created_at?: string;
  readonly updated_at?: string;
}

export interface TokenView {
  readonly name: string;
  readonly source: "store" | "gateway.yaml";
  readonly user: string;
  readonly group: string;
  readonly status: "active" | "disabled" | "revoked";
  readonly key_hint?: string;
  readonly expires?: string;
  readonly quota?: string;
  readonly spent?: string;
  readonly allow_ips?: readonly string[];
  readonly models?: readonly string[];
  readonly limits?: Readonly<Record<string, unknown>>;
  readonly budgets?: readonly Readonly<Record<string, unknown>>[];
  readonly version?: number;
  readonly created_at?: string;
  readonly updated_at?: string;
}

export interface CreditView {
  readonly id: number;
  readonly user: string;
  readonly amount: string;
  readonly kind: CreditEntry["kind"];
  readonly reason: string;
  readonly actor: string;
  readonly idempotency_key?: string;
  readonly at: string;
}

export interface BatchView {
  readonly batch: string;
  readonly count: number;
  readonly amount: string;
  readonly expires: string;
  readonly redeemed: number;
  readonly created_at: string;
  readonly actor: string;
}

export interface NewUserInput {
  readonly name: string;
  readonly groups?: readonly string[];
  readonly status?: "active" | "disabled";
  readonly note?: string;
  /** An opening grant, nano-units. */
  readonly creditNano?: bigint;
  /** Plan, limits and budgets (checked here against gateway.yaml's plans and rules). */
  readonly settings?: AccountSettings;
}

/** A token to create: the store's NewToken but for its key (made here) and its group,
 * which defaults to the user's only group (an error naming `group` when it has several or
 * none). Limits and budgets only: a plan is a user's, not a token's. */
export type NewTokenInput = Omit<NewToken, "keyHash" | "keyHint" | "group"> & { readonly group?: string };

export interface NewCodesInput {
  readonly count: number;
  readonly amountNano: bigint;
  readonly expiresAt: number;
  /** Default: a name from the time. */
  readonly batch?: string;
}

/** Most codes one batch may hold (they are returned in one answer). */
export const MAX_CODES_PER_BATCH = 10_000;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;

const iso = (ms: number): string => new Date(ms).toISOString();

export class AccountService {
  constructor(
    private readonly store: AccountStore,
    private readonly live: () => Runtime,
    private readonly spend: SpendSource,
    private readonly changed: ChangeHook = async () => {},
    private readonly now: () => number = Date.now,
  ) {}

  // ── users ──

  async user(name: string): Promise<UserView> {
    const declared = this.live().users.get(name);
    if (declared) {
      return this.#userView({ name, source: "gateway.yaml", status: declared.active ? "active" : "disabled", groups: [...declared.groups] }, declared.creditNano);
    }
    const stored = await this.store.user(name);
    if (!stored) throw new NotFound("user", name);
    return this.#userView(storedUserFields(stored), 0n);
  }

  /** Stored users and gateway.yaml's, merged in name order, one page at a time. */
  async users(query: ListUsers): Promise<Page<UserView>> {
    const limit = pageLimit(query.limit);
    const page = await this.store.listUsers({ ...query, limit });
    // Declared names past the store page's last one belong to a later page (when there is one).
    const last = page.next === undefined ? undefined : page.items.at(-1)?.name;
    const declared = [...this.live().users.keys()].filter((n) =>
      (query.prefix === undefined || n.startsWith(query.prefix)) && (query.after === undefined || n > query.after) && (last === undefined || n <= last));
    const merged = [...page.items.map((u) => u.name), ...declared].sort(bytewise);
    const shown = merged.slice(0, limit);
    const stored = new Map(page.items.map((u) => [u.name, u] as const));
    const items = await Promise.all(shown.map((n) => {
      const u = stored.get(n);
      return u ? this.#userView(storedUserFields(u), 0n) : this.user(n);
    }));
    const more = page.next !== undefined || merged.length > limit;
    return more && items.length > 0 ? { items, next: items.at(-1)!.name } : { items };
  }

  async createUser(input: NewUserInput, by: Actor): Promise<UserView> {
    this.#checkName(input.name, "name");
    if (this.live().users.has(input.name)) throw new NameTaken("user", input.name, "gateway.yaml");
    this.#checkGroups(input.groups ?? [], "groups");
    this.#checkSettings(input.settings, "user");
    await this.store.createUser({
      name: input.name, groups: input.groups, status: input.status, note: input.note, settings: input.settings,
      ...(input.creditNano === undefined || input.creditNano === 0n ? {} : { openingCredit: { amountNano: input.creditNano, reason: "opening grant" } }),
    }, by);
    await this.changed();
    return this.user(input.name);
  }

  /** Changes a stored user; `settings` changes its plan, limits or budgets one by one
   * (null removes one), merged with what is stored in the same versioned change. */
  async updateUser(name: string, patch: UserPatch, by: Actor, expectedVersion?: number, settings?: SettingsPatch): Promise<UserView> {
    this.#refuseDeclared("user", name);
    if (patch.groups) this.#checkGroups(patch.groups, "groups");
    this.#checkSettings(patch.settings ?? undefined, "user");
    if (!settings || Object.keys(settings).length === 0) {
      await this.store.updateUser(name, patch, by, expectedVersion);
    } else {
      await this.#merged(expectedVersion, async () => {
        const current = await this.store.user(name);
        if (!current) throw new NotFound("user", name);
        return current;
      }, async (current, version) => {
        const merged = mergeSettings(current.settings, settings);
        this.#checkSettings(merged, "user");
        await this.store.updateUser(name, { ...patch, settings: merged ?? null }, by, version);
      });
    }
    await this.changed();
    return this.user(name);
  }

  /** Reads, merges and writes at the version read; a race lost without an expected version
   * is retried on what is there now (a few times), one with it is the caller's 409. */
  async #merged<T extends { readonly version: number }>(expectedVersion: number | undefined, read: () => Promise<T>, write: (current: T, version: number) => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const current = await read();
      if (expectedVersion !== undefined && expectedVersion !== current.version) {
        throw new VersionConflict(kindOf(current), (current as unknown as { name: string }).name, expectedVersion, current.version);
      }
      try {
        await write(current, current.version);
        return;
      } catch (err) {
        if (!(err instanceof VersionConflict) || expectedVersion !== undefined || attempt >= 5) throw err;
      }
    }
  }

  // ── credit ──

  /** A grant (amount > 0) or adjustment (< 0) to a stored user or one gateway.yaml declares. */
  async addCredit(user: string, amountNano: bigint, reason: string, by: Actor, idempotencyKey?: string): Promise<{ entry: CreditView; created: boolean; user: UserView }> {
    await this.user(user); // NotFound for a user nobody declares
    if (reason.trim() === "") throw new InvalidField("reason", "must say why (it is kept in the ledger)");
    const { entry, created } = await this.store.addCredit({ user, amountNano, reason, idempotencyKey }, by);
    if (created) await this.changed();
    return { entry: creditView(entry), created, user: await this.user(user) };
  }

  async creditEntries(user: string, query: { before?: number; limit?: number }): Promise<Page<CreditView>> {
    await this.user(user);
    const page = await this.store.creditEntries(user, query);
    return { items: page.items.map(creditView), ...(page.next === undefined ? {} : { next: page.next }) };
  }

  // ── tokens ──

  async token(name: string): Promise<TokenView> {
    for (const t of this.live().tokensByHash.values()) {
      if (t.name === name) {
        return {
          name, source: "gateway.yaml", user: t.user, group: t.group, status: t.active ? "active" : "disabled",
          ...(t.expiresAt === undefined ? {} : { expires: iso(t.expiresAt) }),
          ...(t.quotaNano === undefined ? {} : { quota: formatNano(t.quotaNano) }),
          spent: formatNano(await this.spend.spentByToken(name)),
        };
      }
    }
    const stored = await this.store.token(name);
    if (!stored) throw new NotFound("token", name);
    return tokenView(stored, await this.spend.spentByToken(name));
  }

  async tokens(query: ListTokens): Promise<Page<TokenView>> {
    const page = await this.store.listTokens(query);
    return { items: page.items.map((t) => tokenView(t)), ...(page.next === undefined ? {} : { next: page.next }) };
  }

  /** Creates a token; its key is in the answer and nowhere else, ever. */
  async createToken(input: NewTokenInput, by: Actor): Promise<{ token: TokenView; key: string }> {
    this.#checkName(input.name, "name");
    if (this.#declaredToken(input.name)) throw new NameTaken("token", input.name, "gateway.yaml");
    const owner = await this.user(input.user).catch((err: unknown) => {
      throw err instanceof NotFound ? new InvalidField("user", `no user '${input.user}'`) : err;
    });
    if (owner.source === "gateway.yaml") throw new InvalidField("user", `user '${input.user}' is declared in gateway.yaml: declare its tokens there too`);
    const group = input.group ?? (owner.groups.length === 1 ? owner.groups[0] : undefined);
    if (group === undefined) throw new InvalidField("group", `name one of user '${input.user}'s groups (${owner.groups.join(", ") || "it has none"})`);
    this.#checkGroups([group], "group");
    this.#checkTokenLists(input.allowIps, input.models);
    this.#checkSettings(input.settings, "token");
    const key = makeTokenKey();
    const created = await this.store.createToken({
      name: input.name, keyHash: key.hash, keyHint: key.hint, user: input.user, group, status: input.status,
      expiresAt: input.expiresAt, quotaNano: input.quotaNano, allowIps: input.allowIps, models: input.models, settings: input.settings,
    }, by);
    await this.changed();
    return { token: tokenView(created, 0n), key: key.secret };
  }

  /** Changes a stored token; `settings` changes its limits or budgets one by one (null
   * removes one), merged with what is stored in the same versioned change. */
  async updateToken(name: string, patch: TokenPatch, by: Actor, expectedVersion?: number, settings?: SettingsPatch): Promise<TokenView> {
    this.#refuseDeclared("token", name);
    if (patch.group !== undefined) this.#checkGroups([patch.group], "group");
    this.#checkTokenLists(patch.allowIps ?? undefined, patch.models ?? undefined);
    this.#checkSettings(patch.settings ?? undefined, "token");
    let after: StoredToken | undefined;
    if (!settings || Object.keys(settings).length === 0) {
      after = await this.store.updateToken(name, patch, by, expectedVersion);
    } else {
      await this.#merged(expectedVersion, async () => {
        const current = await this.store.token(name);
        if (!current || current.status === "revoked") throw new NotFound("token", name);
        return current;
      }, async (current, version) => {
        const merged = mergeSettings(current.settings, settings);
        this.#checkSettings(merged, "token");
        after = await this.store.updateToken(name, { ...patch, settings: merged ?? null }, by, version);
      });
    }
    await this.changed();
    return tokenView(after!, await this.spend.spentByToken(name));
  }

  async revokeToken(name: string, by: Actor): Promise<TokenView> {
    this.#refuseDeclared("token", name);
    const after = await this.store.revokeToken(name, by);
    await this.changed();
    return tokenView(after);
  }

  // ── codes ──

  /** A batch of single-use codes; the codes are in the answer and nowhere else, ever. */
  async createCodes(input: NewCodesInput, by: Actor): Promise<{ batch: BatchView; codes: string[] }> {
    if (!Number.isInteger(input.count) || input.count < 1 || input.count > MAX_CODES_PER_BATCH) {
      throw new InvalidField("count", `must be a whole number from 1 to ${MAX_CODES_PER_BATCH}`);
    }
    if (input.amountNano <= 0n) throw new InvalidField("amount", "must be more than zero");
    if (input.expiresAt <= this.now()) throw new InvalidField("expires", "must be in the future");
    const batchName = input.batch ?? `batch-${new Date(this.now()).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}`;
    this.#checkName(batchName, "batch");
    const made = Array.from({ length: input.count }, makeCode);
    const batch = await this.store.createCodes({ batch: batchName, amountNano: input.amountNano, expiresAt: input.expiresAt, codeHashes: made.map((c) => c.hash) }, by);
    return { batch: batchView(batch), codes: made.map((c) => c.secret) };
  }

  async codeBatch(name: string): Promise<BatchView> {
    const batch = await this.store.codeBatch(name);
    if (!batch) throw new NotFound("batch", name);
    return batchView(batch);
  }

  /** Batches in name order, paged; never their codes (the store keeps only hashes). */
  async codeBatches(query: ListUsers): Promise<{ items: BatchView[]; next?: string }> {
    const page = await this.store.listCodeBatches(query);
    return { items: page.items.map(batchView), ...(page.next === undefined ? {} : { next: page.next }) };
  }

  /** A token holder redeems a code into their own user's balance. */
  async redeem(code: string, user: string, token: string): Promise<RedeemResult> {
    const result = await this.store.redeem(sha256Hex(code.trim()), user, { actor: `token:${token}` }, this.now());
    if (result.ok) await this.changed();
    return result;
  }

  // ── helpers ──

  async #userView(u: Omit<UserView, "credit" | "spent" | "balance" | "reserved">, declaredCreditNano: bigint): Promise<UserView> {
    const [granted, spent, reserved] = await Promise.all([
      this.store.creditOf(u.name), this.spend.spentByUser(u.name), this.spend.reservedByUser?.(u.name),
    ]);
    const credit = declaredCreditNano + granted;
    return {
      ...u, credit: formatNano(credit), spent: formatNano(spent),
      ...(reserved === undefined ? {} : { reserved: formatNano(reserved) }),
      balance: formatNano(credit - spent - (reserved ?? 0n)),
    };
  }

  #declaredToken(name: string): boolean {
    for (const t of this.live().tokensByHash.values()) if (t.name === name) return true;
    return false;
  }

  #refuseDeclared(kind: "user" | "token", name: string): void {
    const declared = kind === "user" ? this.live().users.has(name) : this.#declaredToken(name);
    if (declared) throw new InvalidField("name", `${kind} '${name}' is declared in gateway.yaml: change it there`);
  }

  #checkName(name: string, field: string): void {
    if (!NAME.test(name) || name.length > 128) {
      throw new InvalidField(field, "must be a name of letters, digits and . _ - : @ (starting with a letter or digit), at most 128 characters");
    }
  }

  #checkGroups(groups: readonly string[], field: string): void {
    const known = this.live().groups;
    for (const g of groups) if (!known.has(g)) throw new InvalidField(field, `no group '${g}' in gateway.yaml (groups: ${[...known.keys()].join(", ")})`);
  }

  /** A plan gateway.yaml declares (a user's only); limits and budgets as gateway.yaml
   * accepts them. InvalidField names the first problem. */
  #checkSettings(settings: AccountSettings | undefined, kind: "user" | "token"): void {
    if (!settings) return;
    if (settings.plan !== undefined) {
      if (kind === "token") throw new InvalidField("plan", "a plan is a user's: set it on the token's user");
      const plans = this.live().plans;
      if (!plans.has(settings.plan)) throw new InvalidField("plan", `no plan '${settings.plan}' in gateway.yaml (plans: ${[...plans.keys()].join(", ") || "none"})`);
    }
    // The shape through gateway.yaml's own schema (as a user or token entry: paths start
    // users.u. / tokens.0., cut off), then the values as `gateway check` judges them.
    const shaped = JSON.parse(JSON.stringify({ limits: settings.limits, budgets: settings.budgets })) as Record<string, unknown>;
    const wrapped = kind === "user" ? { users: { u: shaped } } : { tokens: [{ name: "t", key: "k", user: "u", group: "g", ...shaped }] };
    const [shapeIssue] = schemaIssues(wrapped);
    if (shapeIssue) throw new InvalidField(shapeIssue.path.slice(2).join(".") || "settings", shapeIssue.message);
    const [valueIssue] = accountSettingsIssues(shaped);
    if (valueIssue) throw new InvalidField(valueIssue.path.join("."), valueIssue.message);
  }

  #checkTokenLists(allowIps: readonly string[] | undefined, models: readonly string[] | undefined): void {
    if (allowIps) {
      try {
        compileIpMatcher(allowIps);
      } catch (err) {
        throw new InvalidField("allow_ips", (err as Error).message);
      }
    }
    if (models && models.some((m) => typeof m !== "string" || m === "")) throw new InvalidField("models", "must be model names or globs");
  }
}

/** A change to an account's settings, one by one: a value replaces, null removes. */
export interface SettingsPatch {
  readonly plan?: string | null;
  readonly limits?: Readonly<Record<string, unknown>> | null;
  readonly budgets?: readonly Readonly<Record<string, unknown>>[] | null;
}

function mergeSettings(current: AccountSettings | undefined, patch: SettingsPatch): AccountSettings | undefined {
  const merged: Record<string, unknown> = { ...current };
  for (const key of ["plan", "limits", "budgets"] as const) {
    const value = patch[key];
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return Object.keys(merged).length === 0 ? undefined : (merged as AccountSettings);
}

function kindOf(record: object): "user" | "token" {
  return "keyHash" in record ? "token" : "user";
}

function bytewise(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function storedUserFields(u: StoredUser): Omit<UserView, "credit" | "spent" | "balance" | "reserved"> {
  return {
    name: u.name, source: "store", status: u.status, groups: u.groups, ...(u.note === undefined ? {} : { note: u.note }),
    ...(u.settings?.plan === undefined ? {} : { plan: u.settings.plan }),
    ...(u.settings?.limits === undefined ? {} : { limits: u.settings.limits }),
    ...(u.settings?.budgets === undefined ? {} : { budgets: u.settings.budgets }),
    version: u.version, created_at: iso(u.createdAt), updated_at: iso(u.updatedAt),
  };
}

export function tokenView(t: StoredToken, spentNano?: bigint): TokenView {
  return {
    name: t.name, source: "store", user: t.user, group: t.group, status: t.status,
    ...(t.keyHint === undefined ? {} : { key_hint: t.keyHint }),
    ...(t.expiresAt === undefined ? {} : { expires: iso(t.expiresAt) }),
    ...(t.quotaNano === undefined ? {} : { quota: formatNano(t.quotaNano) }),
    ...(spentNano === undefined ? {} : { spent: formatNano(spentNano) }),
    ...(t.allowIps === undefined ? {} : { allow_ips: t.allowIps }),
    ...(t.models === undefined ? {} : { models: t.models }),
    ...(t.settings?.limits === undefined ? {} : { limits: t.settings.limits }),
    ...(t.settings?.budgets === undefined ? {} : { budgets: t.settings.budgets }),
    version: t.version, created_at: iso(t.createdAt), updated_at: iso(t.updatedAt),
  };
}

export function creditView(e: CreditEntry): CreditView {
  return {
    id: e.id, user: e.user, amount: formatNano(e.amountNano), kind: e.kind, reason: e.reason, actor: e.actor,
    ...(e.idempotencyKey === undefined ? {} : { idempotency_key: e.idempotencyKey }), at: iso(e.at),
  };
}

export function batchView(b: CodeBatch): BatchView {
  return {
    batch: b.batch, count: b.count, amount: formatNano(b.amountNano), expires: iso(b.expiresAt), redeemed: b.redeemed,
    created_at: iso(b.createdAt), actor: b.actor,
  };
}
