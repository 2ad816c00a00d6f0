// From new-api's records to what the gateway will hold: users, tokens and opening credits
// for the accounts store, and groups, channels and priced models for gateway.yaml. Pure:
// whether a name is already in the store is found later (existing.ts), so the same
// database always gives the same plan.

import { sha256Hex } from "../../config/hash.js";
import { keyHint } from "../../accounts/keys.js";
import type { NewToken, NewUser } from "../../accounts/store.js";
import { channelTypeName, channelTypeTarget } from "./channel-types.js";
import { decimalText } from "./decimal.js";
import { guessEndpoint } from "./endpoints.js";
import { isGatewayName, slug } from "./names.js";
import { modelPriceOf, priceOptions, quotaToNano, type ImportedPrice } from "./prices.js";
import type { NewApiChannel, NewApiData, NewApiToken, NewApiUser } from "./records.js";

/** A user to create, with its opening credit (new-api's remaining quota). */
export interface PlannedUser {
  readonly newApiId: number;
  readonly user: Required<Pick<NewUser, "name" | "status" | "groups">> & NewUser;
  /** Nano-units; 0n: no credit entry. */
  readonly creditNano: bigint;
  /** The credit's idempotency key: `new-api:user:<id>:opening`. */
  readonly creditKey: string;
  /** How the user's note starts (`new-api user #<id>`): a stored user of the same name
   * whose note does not start so is someone else. */
  readonly origin: string;
}

/** True when `note` (a stored user's) says it came from the planned user. */
export function importedFrom(note: string | undefined, planned: PlannedUser): boolean {
  return note === planned.origin || (note?.startsWith(`${planned.origin};`) ?? false);
}

/** A token to create, by the hash of its original key. */
export interface PlannedToken {
  readonly newApiId: number;
  readonly token: NewToken;
}

/** A channel of the generated gateway.yaml. */
export interface PlannedChannel {
  readonly name: string;
  readonly protocol: "openai" | "anthropic" | "gemini";
  readonly base_url: string;
  readonly keys: readonly string[];
  readonly groups: readonly string[];
  readonly models: readonly string[];
  readonly model_map?: Readonly<Record<string, string>>;
  readonly priority: number;
  readonly weight: number;
  readonly status: "enabled" | "disabled";
}

/** A model of the generated price list. */
export interface PlannedModel {
  /** Absent: chat. */
  readonly endpoint?: NonNullable<ReturnType<typeof guessEndpoint>>;
  readonly price: ImportedPrice;
}

/** Something not imported, and why. */
export interface SkippedItem {
  readonly kind: "user" | "token" | "channel" | "model" | "option";
  readonly what: string;
  readonly reason: string;
}

/** Everything the import will do. */
export interface ImportPlan {
  readonly users: readonly PlannedUser[];
  readonly tokens: readonly PlannedToken[];
  /** Group → multiplier (new-api's GroupRatio; 1 when it names none). */
  readonly groups: ReadonlyMap<string, number>;
  readonly channels: readonly PlannedChannel[];
  readonly models: ReadonlyMap<string, PlannedModel>;
  readonly skipped: readonly SkippedItem[];
  /** Changes made on the way that the operator should know of (a weight raised to 1). */
  readonly notes: readonly string[];
}

/** The key a client sends: new-api stores it without the `sk-` it hands out. */
export function clientKeyOf(storedKey: string): string {
  return storedKey.startsWith("sk-") ? storedKey : `sk-${storedKey}`;
}

/** Group names as the gateway takes them; the invalid ones reported once each. */
class Groups {
  readonly used = new Set<string>();
  readonly #reported = new Set<string>();

  constructor(private readonly skipped: SkippedItem[]) {}

  /** `name` when it can be a group (and marks it used), else undefined. */
  take(name: string, where: string): string | undefined {
    if (isGatewayName(name)) {
      this.used.add(name);
      return name;
    }
    if (!this.#reported.has(name)) this.skipped.push({ kind: "option", what: `group '${name}'`, reason: `not a valid gateway name (used by ${where})` });
    this.#reported.add(name);
    return undefined;
  }
}

function planUsers(data: NewApiData, quotaPerUnit: number, groups: Groups, skipped: SkippedItem[], notes: string[]): Map<number, PlannedUser> {
  const byId = new Map<number, PlannedUser>();
  const tokenGroups = new Map<number, string[]>();
  for (const t of data.tokens) if (t.group && t.group !== "auto" && !t.deleted) tokenGroups.set(t.userId, [...(tokenGroups.get(t.userId) ?? []), t.group]);
  for (const u of data.users) {
    const what = `${u.username || "(no name)"} (#${u.id})`;
    if (u.deleted) {
      skipped.push({ kind: "user", what, reason: "deleted in new-api" });
      continue;
    }
    if (!isGatewayName(u.username)) {
      skipped.push({ kind: "user", what, reason: "the username is not a valid gateway name (letters, digits and . _ - : @)" });
      continue;
    }
    const own = groups.take(u.group, `user ${u.username}`);
    const extra = (tokenGroups.get(u.id) ?? []).map((g) => groups.take(g, `a token of ${u.username}`));
    const userGroups = [...new Set([own, ...extra].filter((g): g is string => g !== undefined))];
    const used = decimalText(quotaToNano(u.usedQuota, quotaPerUnit), 9);
    byId.set(u.id, {
      newApiId: u.id,
      user: {
        name: u.username, status: u.status === 1 ? "active" : "disabled", groups: userGroups,
        note: [`new-api user #${u.id}`, u.email, `used ${used} there`].filter(Boolean).join("; "),
      },
      creditNano: quotaToNano(u.quota, quotaPerUnit),
      creditKey: `new-api:user:${u.id}:opening`,
      origin: `new-api user #${u.id}`,
    });
    if (u.quota < 0) notes.push(`user ${u.username}: new-api quota ${u.quota} is negative; no opening credit`);
  }
  return byId;
}

function planToken(t: NewApiToken, owner: PlannedUser, quotaPerUnit: number, groups: Groups, notes: string[]): NewToken {
  const clientKey = clientKeyOf(t.key);
  let group = t.group || owner.user.groups[0] || "default";
  if (t.group === "auto") {
    group = owner.user.groups[0] ?? "default";
    notes.push(`token #${t.id} of ${owner.user.name}: group 'auto' (new-api picks a group per request) became ${group}`);
  }
  group = groups.take(group, `token #${t.id}`) ?? "default";
  groups.used.add(group);
  const name = `${owner.user.name}-${slug(t.name) || "token"}-${t.id}`;
  return {
    name, keyHash: sha256Hex(clientKey), keyHint: keyHint(clientKey), user: owner.user.name, group,
    // expired (3) and exhausted (4) tokens come over disabled, as new-api refuses them.
    status: t.status === 1 ? "active" : "disabled",
    ...(t.expiredTime > 0 ? { expiresAt: t.expiredTime * 1000 } : {}),
    ...(t.unlimitedQuota ? {} : { quotaNano: quotaToNano(t.remainQuota, quotaPerUnit) }),
    ...(t.allowIps.length > 0 ? { allowIps: t.allowIps } : {}),
    ...(t.modelLimits.length > 0 ? { models: t.modelLimits } : {}),
  };
}

function planTokens(data: NewApiData, users: Map<number, PlannedUser>, quotaPerUnit: number, groups: Groups, skipped: SkippedItem[], notes: string[]): PlannedToken[] {
  const out: PlannedToken[] = [];
  const usernames = new Map(data.users.map((u: NewApiUser) => [u.id, u.username]));
  for (const t of data.tokens) {
    const what = `${t.name || "(no name)"} (#${t.id}) of ${usernames.get(t.userId) ?? `user #${t.userId}`}`;
    const owner = users.get(t.userId);
    if (t.deleted) skipped.push({ kind: "token", what, reason: "deleted in new-api" });
    else if (!owner) skipped.push({ kind: "token", what, reason: "its user is not imported" });
    else if (!t.key) skipped.push({ kind: "token", what, reason: "no key" });
    else out.push({ newApiId: t.id, token: planToken(t, owner, quotaPerUnit, groups, notes) });
  }
  return out;
}

/** The model_map of a channel: new-api's model_mapping JSON, for the models it keeps. */
function modelMapOf(c: NewApiChannel, models: readonly string[], notes: string[]): Record<string, string> | undefined {
  if (!c.modelMapping.trim() || c.modelMapping.trim() === "{}") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(c.modelMapping);
  } catch {
    notes.push(`channel ${c.name} (#${c.id}): model_mapping is not JSON; left out`);
    return undefined;
  }
  const map: Record<string, string> = {};
  for (const [from, to] of Object.entries((parsed ?? {}) as Record<string, unknown>)) {
    if (typeof to === "string" && to !== "" && models.includes(from)) map[from] = to;
  }
  return Object.keys(map).length > 0 ? map : undefined;
}

/** A priced model with its endpoint guessed from the name; a fixed price on an image
 * model is per image (new-api charges its ModelPrice per image made). */
function modelOf(model: string, price: ImportedPrice, notes: string[]): PlannedModel {
  const endpoint = guessEndpoint(model);
  if (!endpoint) return { price };
  notes.push(`model ${model}: endpoint ${endpoint} (guessed from its name)`);
  if (endpoint === "image" && price.per_request !== undefined) return { endpoint, price: { per_image: price.per_request } };
  return { endpoint, price };
}

interface ChannelContext {
  readonly data: NewApiData;
  readonly prices: ReturnType<typeof priceOptions>;
  readonly groups: Groups;
  readonly models: Map<string, PlannedModel>;
  readonly skipped: SkippedItem[];
  readonly notes: string[];
  readonly taken: Set<string>;
}

function planChannel(c: NewApiChannel, ctx: ChannelContext): PlannedChannel | undefined {
  const what = `${c.name || "(no name)"} (#${c.id})`;
  const target = channelTypeTarget(c.type);
  if (!target) return void ctx.skipped.push({ kind: "channel", what, reason: `type ${channelTypeName(c.type)} (${c.type}) has no protocol here` });
  const abilities = ctx.data.abilities.filter((a) => a.channelId === c.id);
  const wanted = [...new Set(c.models.length > 0 ? c.models : abilities.map((a) => a.model))];
  const groupNames = [...new Set(c.groups.length > 0 ? c.groups : abilities.map((a) => a.group))];
  const models: string[] = [];
  for (const model of wanted) {
    const price = modelPriceOf(model, ctx.prices);
    if (/\s/.test(model)) ctx.skipped.push({ kind: "model", what: `${model} on ${what}`, reason: "a model name with spaces" });
    else if (!price) ctx.skipped.push({ kind: "model", what: `${model} on ${what}`, reason: "no ModelRatio or ModelPrice in new-api's options (its built-in default is not imported)" });
    else {
      if (!ctx.models.has(model)) ctx.models.set(model, modelOf(model, price, ctx.notes));
      models.push(model);
    }
  }
  const groups = groupNames.map((g) => ctx.groups.take(g, `channel ${what}`)).filter((g): g is string => g !== undefined);
  const baseUrl = (c.baseUrl || target.defaultBaseUrl || "").replace(/\/+$/, "");
  if (models.length === 0) return void ctx.skipped.push({ kind: "channel", what, reason: "none of its models has a price" });
  if (groups.length === 0) return void ctx.skipped.push({ kind: "channel", what, reason: "no group" });
  if (!baseUrl) return void ctx.skipped.push({ kind: "channel", what, reason: "no base URL" });
  if (c.keys.length === 0) ctx.notes.push(`channel ${what}: no key`);
  let name = slug(c.name) || `channel-${c.id}`;
  if (ctx.taken.has(name)) name = `${name}-${c.id}`;
  ctx.taken.add(name);
  if (c.weight < 1) ctx.notes.push(`channel ${name}: weight ${c.weight} became 1 (the least the gateway takes)`);
  const modelMap = modelMapOf(c, models, ctx.notes);
  return {
    name, protocol: target.protocol, base_url: baseUrl, keys: c.keys, groups, models,
    ...(modelMap ? { model_map: modelMap } : {}),
    priority: Math.trunc(c.priority), weight: Math.max(1, Math.trunc(c.weight)), status: c.status === 1 ? "enabled" : "disabled",
  };
}

/** The whole plan for `data`. */
export function planImport(data: NewApiData): ImportPlan {
  const skipped: SkippedItem[] = [];
  const notes: string[] = [];
  const prices = priceOptions(data.options);
  for (const problem of prices.problems) skipped.push({ kind: "option", what: "price option", reason: problem });
  const groups = new Groups(skipped);
  const users = planUsers(data, prices.quotaPerUnit, groups, skipped, notes);
  const tokens = planTokens(data, users, prices.quotaPerUnit, groups, skipped, notes);
  const models = new Map<string, PlannedModel>();
  const ctx: ChannelContext = { data, prices, groups, models, skipped, notes, taken: new Set() };
  const channels = data.channels.map((c) => planChannel(c, ctx)).filter((c): c is PlannedChannel => c !== undefined);
  for (const g of prices.groupRatio.keys()) groups.take(g, "GroupRatio");
  const multipliers = new Map([...groups.used].sort().map((g) => [g, prices.groupRatio.get(g) ?? 1]));
  return {
    users: [...users.values()], tokens, groups: multipliers, channels,
    models: new Map([...models].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), skipped, notes,
  };
}
