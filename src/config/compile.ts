// Compiles a validated, substituted gateway.yaml into the frozen Runtime: defaults applied,
// money in integer units, keys hashed, allowlists and routes precomputed. Pure: same input,
// same output, no I/O.

import type {
  AdminKey, AdminSettings, Budget, Channel, ChannelCost, Plan, TokenLimits, Endpoint, Group, IpMatcher, Model, NameMatcher, RateWindow, Runtime, ServerSettings, Token, User,
} from "../runtime/types.js";
import { dirname, resolve as resolvePath } from "node:path";
import type { Duration, RawAccountLimits, RawBudget, RawChannel, RawConfig, RawModel, RawToken, RawWindow } from "./raw.js";
import { compilePrice } from "./compile-price.js";
import { buildCandidates } from "./candidates.js";
import { hashKey, requestSchemaFile } from "./crossref.js";
import { compileRequestSchema } from "./request-schema.js";
import { deepFreeze } from "./freeze.js";
import { compileIpMatcher, compileNameMatcher, isGlob } from "./matchers.js";
import { toNano, toPpm } from "./money.js";
import { parseDate, parseDuration, parseListen, parseSize } from "./units.js";
import type { Capabilities } from "../runtime/types.js";
import { compileKind } from "../providers/kind.js";
import { channelKindOf, rawKindChannel } from "./channel-kind.js";
import type { RawCapabilities } from "./raw.js";

/** Where the source came from; copied into the Runtime. */
export interface CompileContext {
  sourcePath: string;
  sourceHash: string;
  generation: number;
}

/** A compiled Runtime and the non-fatal findings an operator should see. */
export interface CompileResult {
  runtime: Runtime;
  warnings: string[];
}

/** Defaults of every optional setting, as written in gateway.yaml. */
export const DEFAULTS = {
  listen: "127.0.0.1:8080",
  trustProxy: false,
  maxBody: "32MiB",
  upstreamTimeout: "300s",
  upstreamAttempts: 3,
  drainTimeout: "30s",
  headerTimeout: "15s",
  bodyTimeout: "60s",
  streamIdleTimeout: "120s",
  usageDrainTimeout: "30s",
  maxBodyMemory: "512MiB",
  maxEventSize: "16MiB",
  realtimeMaxSession: "30m",
  workers: 1,
  store: "sqlite:./data/gateway.db",
  metricsPath: "/metrics",
  maxOutputTokens: 4096,
  affinityTtl: "1h",
} as const;

function compileServer(raw: RawConfig["server"] = {}): ServerSettings {
  const { host, port } = parseListen(raw.listen ?? DEFAULTS.listen);
  return {
    host,
    port,
    trustProxy: raw.trust_proxy ?? DEFAULTS.trustProxy,
    maxBodyBytes: parseSize(raw.max_body ?? DEFAULTS.maxBody),
    upstreamTimeoutMs: parseDuration(raw.upstream_timeout ?? DEFAULTS.upstreamTimeout),
    upstreamAttempts: raw.upstream_attempts ?? DEFAULTS.upstreamAttempts,
    drainTimeoutMs: parseDuration(raw.drain_timeout ?? DEFAULTS.drainTimeout),
    headerTimeoutMs: parseDuration(raw.header_timeout ?? DEFAULTS.headerTimeout),
    bodyTimeoutMs: parseDuration(raw.body_timeout ?? DEFAULTS.bodyTimeout),
    streamIdleTimeoutMs: parseDuration(raw.stream_idle_timeout ?? DEFAULTS.streamIdleTimeout),
    usageDrainTimeoutMs: parseDuration(raw.usage_drain_timeout ?? DEFAULTS.usageDrainTimeout),
    maxBodyMemoryBytes: parseSize(raw.max_body_memory ?? DEFAULTS.maxBodyMemory),
    maxEventBytes: parseSize(raw.max_event_size ?? DEFAULTS.maxEventSize),
    workers: raw.workers ?? DEFAULTS.workers,
    realtimeMaxSessionMs: parseDuration(raw.realtime_max_session ?? DEFAULTS.realtimeMaxSession),
  };
}

function compileWindow(raw: RawWindow | undefined): RateWindow | undefined {
  return raw ? { max: raw.max, perMs: parseDuration(raw.per) } : undefined;
}

/** One matcher per distinct allowlist: thousands of tokens often share a handful of lists. */
class MatcherCache<M> {
  private readonly built = new Map<string, M>();
  constructor(private readonly build: (list: readonly string[]) => M) {}

  get(list: readonly string[]): M {
    const id = list.join("\n");
    let matcher = this.built.get(id);
    if (matcher === undefined) {
      matcher = this.build(list);
      this.built.set(id, matcher);
    }
    return matcher;
  }
}

function compileToken(raw: RawToken, ctx: TokenContext, warnings: string[]): Token | undefined {
  const { models } = ctx;
  const hex = raw.key_sha256 !== undefined ? raw.key_sha256.toLowerCase() : raw.key ? hashKey(raw.key) : undefined;
  if (hex === undefined) {
    warnings.push(`token ${raw.name} has an empty key; it is skipped (set the environment variable its key reads)`);
    return undefined;
  }
  for (const pattern of raw.models ?? []) {
    if (!isGlob(pattern) && !models.has(pattern)) {
      warnings.push(`token ${raw.name} allows model "${pattern}", which is not in the price list`);
    }
  }
  const token: Token = {
    name: raw.name,
    keyHash: hex,
    user: raw.user,
    group: raw.group,
    expiresAt: raw.expires === undefined ? undefined : parseDate(raw.expires),
    quotaNano: raw.quota === undefined ? undefined : toNano(raw.quota),
    allowIp: raw.allow_ips ? ctx.ipMatchers.get(raw.allow_ips) : undefined,
    allowModel: raw.models ? ctx.nameMatchers.get(raw.models) : undefined,
    active: (raw.status ?? "active") === "active",
  };
  const limits = compileAccountLimits(raw.limits);
  const budgets = compileBudgets(raw.budgets);
  return limits || budgets ? { ...token, ...(limits ? { limits } : {}), ...(budgets ? { budgets } : {}) } : token;
}

function compileAdmin(raw: NonNullable<RawConfig["admin"]>, warnings: string[]): AdminSettings {
  const keys: AdminKey[] = [];
  for (const k of raw.keys ?? []) {
    const keyHash = k.key_sha256 !== undefined ? k.key_sha256.toLowerCase() : k.key ? hashKey(k.key) : undefined;
    if (keyHash === undefined) {
      warnings.push(`admin key ${k.name} is empty; it is skipped (set the environment variable its key reads)`);
      continue;
    }
    keys.push({ name: k.name, keyHash, scopes: new Set(k.scopes) });
  }
  return { ...(raw.listen === undefined ? {} : { listen: parseListen(raw.listen) }), keys };
}

/** channels[].key_cooldown when not set (schemas/gateway.schema.json says the same). */
const DEFAULT_KEY_COOLDOWN = { auth: "10m", quota: "1h" } as const;

function compileChannel(raw: RawChannel, sourcePath: string, warnings: string[]): Channel {
  const { kind, protocol } = channelKindOf(raw);
  const compiled = compileKind(kind, rawKindChannel(raw, sourcePath));
  const keys = [...compiled.keys];
  if (keys.length === 0) warnings.push(`channel ${raw.name} has no keys; it starts disabled`);
  return {
    name: raw.name,
    kind: kind.kind,
    protocol,
    settings: compiled.settings,
    baseUrl: new URL(compiled.baseUrl.replace(/\/+$/, "")),
    keys,
    keyCooldownMs: {
      auth: parseDuration(raw.key_cooldown?.auth ?? DEFAULT_KEY_COOLDOWN.auth),
      quota: parseDuration(raw.key_cooldown?.quota ?? DEFAULT_KEY_COOLDOWN.quota),
    },
    ...compileProbe(raw, warnings),
    groups: new Set(raw.groups),
    models: new Set(raw.models),
    modelMap: new Map(Object.entries(raw.model_map ?? {})),
    priority: raw.priority ?? 0,
    weight: raw.weight ?? 1,
    enabled: (raw.status ?? "enabled") === "enabled" && keys.length > 0,
    ...(raw.betas === undefined ? {} : { betas: new Set(raw.betas) }),
    ...(raw.cost === undefined ? {} : { cost: compileChannelCost(raw.cost) }),
  };
}

/** channels[].probe: its period and the upstream model (the one named, else the channel's
 * first, through model_map); none when absent, or when there is no model to ask for. */
function compileProbe(raw: RawChannel, warnings: string[]): Pick<Channel, "probe"> {
  if (raw.probe === undefined) return {};
  const everyMs = parseDuration(raw.probe.every);
  const model = raw.probe.model ?? raw.models[0];
  if (everyMs <= 0 || model === undefined) {
    warnings.push(`channel ${raw.name}: probe ${everyMs <= 0 ? "every is 0" : "has no model to ask for"}; its keys are not probed`);
    return {};
  }
  return { probe: { everyMs, upstreamModel: raw.model_map?.[model] ?? model } };
}

function compileChannelCost(raw: NonNullable<RawChannel["cost"]>): ChannelCost {
  return {
    ...(raw.multiplier === undefined ? {} : { multiplierPpm: toPpm(raw.multiplier) }),
    ...(raw.prices === undefined ? {} : { prices: new Map(Object.entries(raw.prices).map(([model, price]) => [model, compilePrice(price)])) }),
  };
}

/** An account's limits; undefined when it sets none. */
export function compileAccountLimits(raw: RawAccountLimits | undefined): TokenLimits | undefined {
  if (raw === undefined) return undefined;
  const limits: TokenLimits = {
    ...(raw.request_rate === undefined ? {} : { requestRate: compileWindow(raw.request_rate) }),
    ...(raw.total_requests === undefined ? {} : { totalRequests: compileWindow(raw.total_requests) }),
    ...(raw.tokens_per_minute === undefined ? {} : { tokensPerMinute: raw.tokens_per_minute }),
    ...(raw.concurrent === undefined ? {} : { concurrent: raw.concurrent }),
  };
  return Object.keys(limits).length === 0 ? undefined : limits;
}

/** `own`'s limits, each unset one taken from `fallback` (a user's over its plan's). */
export function mergeLimits(fallback: TokenLimits | undefined, own: TokenLimits | undefined): TokenLimits | undefined {
  if (!fallback) return own;
  if (!own) return fallback;
  return { ...fallback, ...own };
}

function compilePlans(raw: RawConfig["plans"] = {}): Map<string, Plan> {
  const plans = new Map<string, Plan>();
  for (const [name, p] of Object.entries(raw)) {
    const limits = compileAccountLimits(p.limits);
    const budgets = compileBudgets(p.budgets);
    plans.set(name, { name, groups: new Set(p.groups ?? []), ...(limits ? { limits } : {}), ...(budgets ? { budgets } : {}) });
  }
  return plans;
}

/** What a user sets itself, beside its plan. */
export interface OwnSettings {
  readonly limits?: TokenLimits;
  readonly budgets?: readonly Budget[];
}

/** A user with its plan applied: the plan's groups added, its limits under the user's own,
 * its budgets unless the user has its own. */
export function withPlan(user: Omit<User, "limits" | "plan" | "budgets">, plan: Plan | undefined, own: OwnSettings): User {
  const limits = mergeLimits(plan?.limits, own.limits);
  const budgets = own.budgets ?? plan?.budgets;
  const groups = plan && plan.groups.size > 0 ? new Set([...user.groups, ...plan.groups]) : user.groups;
  return { ...user, groups, ...(limits ? { limits } : {}), ...(budgets ? { budgets } : {}), ...(plan ? { plan: plan.name } : {}) };
}

function compileUsers(raw: RawConfig["users"] = {}, plans: ReadonlyMap<string, Plan>): Map<string, User> {
  const users = new Map<string, User>();
  for (const [name, u] of Object.entries(raw)) {
    const base = { name, creditNano: toNano(u.credit ?? 0), groups: new Set(u.groups ?? []), active: (u.status ?? "active") === "active" };
    const own = { limits: compileAccountLimits(u.limits), budgets: compileBudgets(u.budgets) };
    users.set(name, withPlan(base, u.plan === undefined ? undefined : plans.get(u.plan), own));
  }
  return users;
}

const DAY_MS = 86_400_000;
const ROLLING_CALENDAR_MS = { day: DAY_MS, week: 7 * DAY_MS, month: 30 * DAY_MS } as const;

/** Budgets as written (crossref checked them); undefined for none. */
export function compileBudgets(raw: readonly RawBudget[] | undefined): Budget[] | undefined {
  if (raw === undefined || raw.length === 0) return undefined;
  return raw.map(compileBudget);
}

export function compileBudget(raw: RawBudget): Budget {
  const measure = raw.amount !== undefined ? "money" : "tokens";
  const max = raw.amount !== undefined ? Number(toNano(raw.amount)) : raw.tokens!;
  const per = raw.per.trim();
  if (per === "day" || per === "week" || per === "month") {
    if (raw.rolling !== true) return { measure, max, calendar: per, id: `${measure}/${per}` };
    return { measure, max, rollingMs: ROLLING_CALENDAR_MS[per], id: `${measure}/${per}~` };
  }
  return { measure, max, rollingMs: parseDuration(per), id: `${measure}/${per}~` };
}

function compileCapabilities(c: RawCapabilities): Capabilities {
  return {
    ...(c.reasoning === undefined ? {} : { reasoning: c.reasoning }),
    ...(c.tools === undefined ? {} : { tools: c.tools }),
    ...(c.vision === undefined ? {} : { vision: c.vision }),
    ...(c.max_output === undefined ? {} : { maxOutput: c.max_output }),
  };
}

function compileModels(raw: RawConfig["models"] = {}, sourcePath: string): Map<string, Model> {
  const models = new Map<string, Model>();
  for (const [name, m] of Object.entries(raw)) {
    const model: Model = {
      name, ...endpointsOf(m.endpoint), price: compilePrice(m.price),
      maxOutputTokens: m.max_output_tokens ?? DEFAULTS.maxOutputTokens,
      conversion: m.conversion ?? "lenient",
      ...(m.capabilities === undefined ? {} : { capabilities: compileCapabilities(m.capabilities) }),
      ...(m.limits?.request_rate === undefined ? {} : { requestRate: compileWindow(m.limits.request_rate) }),
      ...(m.store === true ? { allowStore: true as const } : {}),
      ...(m.stored_prompts === true ? { allowStoredPrompts: true as const } : {}),
    };
    if (m.request_schema === undefined) {
      models.set(name, model);
      continue;
    }
    // crossref has checked that the file exists and compiles.
    const file = requestSchemaFile(sourcePath, m.request_schema)!;
    models.set(name, { ...model, requestSchema: m.request_schema, checkRequest: compileRequestSchema(file) });
  }
  return models;
}

interface TokenContext {
  users: ReadonlyMap<string, User>;
  models: ReadonlyMap<string, Model>;
  ipMatchers: MatcherCache<IpMatcher>;
  nameMatchers: MatcherCache<NameMatcher>;
}

function compileTokens(raw: RawToken[], ctx: TokenContext, warnings: string[]): Map<string, Token> {
  const tokens = new Map<string, Token>();
  for (const rawToken of raw) {
    const token = compileToken(rawToken, ctx, warnings);
    if (!token) continue;
    tokens.set(token.keyHash, token);
    if (!ctx.users.get(token.user)?.groups.has(token.group)) {
      warnings.push(`token ${token.name} uses group ${token.group}, which user ${token.user} may not use; its requests will be refused (403)`);
    }
  }
  return tokens;
}

/** Compiles `raw` (already validated and cross-checked) into a deep-frozen Runtime. */
export function compile(raw: RawConfig, ctx: CompileContext): CompileResult {
  const warnings: string[] = [];
  const groups = new Map<string, Group>();
  for (const [name, g] of Object.entries(raw.groups ?? {})) {
    groups.set(name, {
      name, multiplier: g.multiplier ?? 1, multiplierPpm: toPpm(g.multiplier ?? 1), showCost: g.show_cost ?? true,
      ...(g.strategy === "cheapest" ? { strategy: "cheapest" as const } : {}),
      ...(g.limits?.tokens_per_minute === undefined ? {} : { tokensPerMinute: g.limits.tokens_per_minute }),
    });
  }
  const plans = compilePlans(raw.plans);
  const users = compileUsers(raw.users, plans);
  const models = compileModels(raw.models, ctx.sourcePath);
  const tokensByHash = compileTokens(raw.tokens ?? [], {
    users, models, ipMatchers: new MatcherCache(compileIpMatcher), nameMatchers: new MatcherCache(compileNameMatcher),
  }, warnings);
  const channelList = (raw.channels ?? []).map((c) => compileChannel(c, ctx.sourcePath, warnings));
  for (const name of models.keys()) {
    if (!channelList.some((c) => c.models.has(name))) warnings.push(`model ${name} is listed by no channel; requests for it cannot be served`);
  }
  const runtime: Runtime = {
    generation: ctx.generation,
    sourceHash: ctx.sourceHash,
    sourcePath: ctx.sourcePath,
    server: compileServer(raw.server),
    store: raw.store ?? DEFAULTS.store,
    ...(raw.ledger === undefined ? {} : { ledger: raw.ledger }),
    metricsPath: raw.metrics?.path ?? DEFAULTS.metricsPath,
    ...(raw.metrics?.listen === undefined ? {} : { metricsListen: parseListen(raw.metrics.listen) }),
    ...(raw.admin === undefined ? {} : { admin: compileAdmin(raw.admin, warnings) }),
    console: { customerTokens: raw.console?.customer_tokens ?? false },
    ...(raw.log?.level === undefined ? {} : { logLevel: raw.log.level }),
    limits: {
      requestRate: compileWindow(raw.limits?.request_rate),
      totalRequests: compileWindow(raw.limits?.total_requests),
      ...(raw.limits?.tokens_per_minute === undefined ? {} : { tokensPerMinute: raw.limits.tokens_per_minute }),
      ...(raw.limits?.concurrent === undefined ? {} : { concurrent: raw.limits.concurrent }),
    },
    affinityTtlMs: parseDuration(raw.routing?.affinity_ttl ?? DEFAULTS.affinityTtl),
    groups,
    plans,
    timeZone: raw.usage?.timezone ?? "UTC",
    preDeduction: raw.billing?.pre_deduction ?? "worst_case",
    ...(raw.usage?.retention === undefined ? {} : { usageRetention: compileRetention(raw.usage.retention, raw.usage.archive, ctx.sourcePath) }),
    users,
    tokensByHash,
    models,
    channels: new Map(channelList.map((c) => [c.name, c] as const)),
    candidates: buildCandidates(groups.values(), models, channelList),
  };
  return { runtime: deepFreeze(runtime), warnings };
}

/** usage.retention and usage.archive (a folder relative to the config file's). */
function compileRetention(retention: Duration, archive: string | undefined, sourcePath: string): { retentionMs: number; archiveDir?: string } {
  const retentionMs = parseDuration(retention);
  return archive === undefined ? { retentionMs } : { retentionMs, archiveDir: resolvePath(dirname(sourcePath), archive) };
}

/** A model's endpoint kinds: the first one listed names it in errors. */
function endpointsOf(raw: RawModel["endpoint"]): { endpoint: Endpoint; endpoints: ReadonlySet<Endpoint> } {
  const list = raw === undefined ? ["chat" as const] : Array.isArray(raw) ? raw : [raw];
  return { endpoint: list[0], endpoints: new Set(list) };
}
