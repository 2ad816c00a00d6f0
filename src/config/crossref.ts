// Checks the schema cannot express: names that refer to other entries, uniqueness, and
// values that must parse (durations, sizes, dates, addresses, URLs, money). Defensive
// about shapes, so it can run even when the schema already found problems.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { providerKinds } from "../providers/index.js";
import { compileKind } from "../providers/kind.js";
import type { KindName, Protocol } from "../runtime/types.js";
import { rawKindChannel } from "./channel-kind.js";
import type { RawChannel, RawConfig } from "./raw.js";
import type { KeyPath, RawIssue } from "./locate.js";
import { parseIpRule } from "./matchers.js";
import { toNano, toPpm } from "./money.js";
import { parseDate, parseDuration, parseListen, parseSize } from "./units.js";
import { compileRequestSchema } from "./request-schema.js";
import { sha256Hex } from "./hash.js";

/** sha256 of a token key, lowercase hex: the key of Runtime.tokensByHash. */
export const hashKey = sha256Hex;

const packageRequestSchemas = fileURLToPath(new URL("../../schemas/requests/", import.meta.url));

/**
 * Finds the file of a model's `request_schema`: schemas/requests/<name>.json next to the
 * config file first, then in the gateway's own schemas directory. Undefined if neither exists.
 */
export function requestSchemaFile(configPath: string, name: string): string | undefined {
  const file = name.endsWith(".json") ? name : `${name}.json`;
  const candidates = [join(dirname(configPath), "schemas", "requests", file), join(packageRequestSchemas, file)];
  return candidates.find((candidate) => existsSync(candidate));
}

type Entry = Record<string, unknown>;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const record = (v: unknown): Entry => (v && typeof v === "object" && !Array.isArray(v) ? (v as Entry) : {});
const text = (v: unknown): v is string => typeof v === "string";

/** Collects issues while the sections are checked, with the names they may refer to. */
class Checker {
  readonly issues: RawIssue[] = [];
  readonly groups: Set<string>;
  readonly users: Set<string>;
  readonly models: Set<string>;

  constructor(readonly root: Entry) {
    this.groups = new Set(Object.keys(record(root.groups)));
    this.users = new Set(Object.keys(record(root.users)));
    this.models = new Set(Object.keys(record(root.models)));
  }

  report(path: KeyPath, message: string, at?: "key"): void {
    this.issues.push(at ? { path, message, at } : { path, message });
  }

  /** Runs a parser; its error message becomes the issue at `path`. */
  parses(path: KeyPath, parse: () => unknown): void {
    try {
      parse();
    } catch (error) {
      this.report(path, (error as Error).message);
    }
  }

  refers(path: KeyPath, value: unknown, known: Set<string>, kind: string): void {
    if (text(value) && !known.has(value)) this.report(path, `unknown ${kind} "${value}" (not under ${kind}s)`);
  }

  /** Reports a name seen before in the same list (`seen`: name → first index). */
  unique(path: KeyPath, value: unknown, seen: Map<string, number>, kind: string): void {
    if (!text(value)) return;
    const first = seen.get(value);
    if (first === undefined) seen.set(value, path[1] as number);
    else this.report(path, `duplicate ${kind} name "${value}" (also ${kind}s[${first}])`);
  }
}

function checkServer(c: Checker): void {
  const server = record(c.root.server);
  if (text(server.listen)) c.parses(["server", "listen"], () => parseListen(server.listen as string));
  const metricsListen = record(c.root.metrics).listen;
  if (text(metricsListen)) {
    c.parses(["metrics", "listen"], () => {
      const { port } = parseListen(metricsListen);
      if (port !== 0 && metricsListen === (server.listen ?? "127.0.0.1:8080")) throw new Error("must differ from server.listen");
    });
  }
  const adminListen = record(c.root.admin).listen;
  if (text(adminListen)) {
    c.parses(["admin", "listen"], () => {
      const { port } = parseListen(adminListen);
      if (port !== 0 && adminListen === (server.listen ?? "127.0.0.1:8080")) throw new Error("must differ from server.listen (omit it to serve the admin API there)");
      if (port !== 0 && adminListen === metricsListen) throw new Error("must differ from metrics.listen");
    });
  }
  const adminKeys = record(c.root.admin).keys;
  if (Array.isArray(adminKeys)) {
    const seen = new Map<string, number>();
    adminKeys.forEach((k, i) => {
      const name = record(k).name;
      if (!text(name)) return;
      const first = seen.get(name);
      if (first === undefined) seen.set(name, i);
      else c.report(["admin", "keys", i, "name"], `duplicate admin key name "${name}" (also admin.keys[${first}])`);
    });
  }
  for (const key of ["upstream_timeout", "drain_timeout"]) {
    if (server[key] !== undefined) c.parses(["server", key], () => parseDuration(server[key] as string | number));
  }
  if (server.max_body !== undefined) c.parses(["server", "max_body"], () => parseSize(server.max_body as string | number));
  const ttl = record(c.root.routing).affinity_ttl;
  if (ttl !== undefined) c.parses(["routing", "affinity_ttl"], () => parseDuration(ttl as string | number));
  for (const [name, window] of Object.entries(record(c.root.limits))) {
    const per = record(window).per;
    if (per === undefined) continue;
    c.parses(["limits", name, "per"], () => {
      if (parseDuration(per as string | number) <= 0) throw new Error("the window must be longer than 0");
    });
  }
}

function checkGroups(c: Checker): void {
  for (const [name, group] of Object.entries(record(c.root.groups))) {
    const m = record(group).multiplier;
    if (typeof m === "number") c.parses(["groups", name, "multiplier"], () => toPpm(m));
  }
}

function checkUsers(c: Checker): void {
  for (const [name, user] of Object.entries(record(c.root.users))) {
    const u = record(user);
    if (typeof u.credit === "number") c.parses(["users", name, "credit"], () => toNano(u.credit as number));
    list(u.groups).forEach((g, i) => c.refers(["users", name, "groups", i], g, c.groups, "group"));
    c.refers(["users", name, "plan"], u.plan, new Set(Object.keys(record(c.root.plans))), "plan");
    checkLimitWindows(c, ["users", name, "limits"], u.limits);
    checkBudgets(c, ["users", name, "budgets"], u.budgets);
  }
}

/** Most a money budget may hold: its nano-units stay exact in the counters' doubles. */
const MAX_BUDGET_AMOUNT = 9_000_000;

/** Each budget's window and amount; no two in one list count the same way. */
function checkBudgets(c: Checker, at: KeyPath, budgets: unknown): void {
  const seen = new Map<string, number>();
  list(budgets).forEach((budget, i) => {
    const b = record(budget);
    if (typeof b.amount === "number") {
      c.parses([...at, i, "amount"], () => {
        toNano(b.amount as number);
        if ((b.amount as number) > MAX_BUDGET_AMOUNT) throw new Error(`must be at most ${MAX_BUDGET_AMOUNT}`);
        if ((b.amount as number) <= 0) throw new Error("must be more than 0");
      });
    }
    if (!text(b.per)) return;
    const per = b.per.trim();
    if (per !== "day" && per !== "week" && per !== "month") {
      c.parses([...at, i, "per"], () => {
        if (parseDuration(per) <= 0) throw new Error("the window must be longer than 0");
      });
      if (b.rolling === false) c.report([...at, i, "rolling"], "a window given as a duration is rolling (calendar periods are day, week and month)");
    }
    const id = `${b.amount !== undefined ? "money" : "tokens"}/${per}${b.rolling === true || !["day", "week", "month"].includes(per) ? "~" : ""}`;
    const first = seen.get(id);
    if (first === undefined) seen.set(id, i);
    else c.report([...at, i], `counts the same as ${at.join(".")}[${first}]: one budget per measure and window`);
  });
}

/** Budgets are seeded from the entries after a restart: a retention must outlast the
 * longest of them (a calendar month, or a rolling window declared here). */
const MIN_RETENTION_MS = 35 * 86_400_000;

/** The longest rolling budget window gateway.yaml declares (ms; 0: none). */
function longestRollingBudget(root: Record<string, unknown>): number {
  const owners = [...Object.values(record(root.plans)), ...Object.values(record(root.users)), ...list(root.tokens)];
  let longest = 0;
  for (const owner of owners) {
    for (const budget of list(record(owner).budgets)) {
      const per = record(budget).per;
      if (!text(per) || ["day", "week", "month"].includes(per.trim())) continue;
      try {
        longest = Math.max(longest, parseDuration(per));
      } catch {
        // reported where the budget is checked
      }
    }
  }
  return longest;
}

function checkRetention(c: Checker): void {
  const usage = record(c.root.usage);
  if (usage.retention === undefined) {
    if (usage.archive !== undefined) c.report(["usage", "archive"], "an archive needs usage.retention (what is older is archived, then removed)");
    return;
  }
  c.parses(["usage", "retention"], () => {
    const ms = parseDuration(usage.retention as string | number);
    const needed = Math.max(MIN_RETENTION_MS, longestRollingBudget(c.root as Record<string, unknown>));
    if (ms < needed) {
      throw new Error(`must be at least ${Math.ceil(needed / 86_400_000)}d: budgets that reset are seeded from the entries it keeps`);
    }
  });
}

function checkUsage(c: Checker): void {
  checkRetention(c);
  const zone = record(c.root.usage).timezone;
  if (text(zone)) {
    c.parses(["usage", "timezone"], () => {
      try {
        new Intl.DateTimeFormat("en-US", { timeZone: zone });
      } catch {
        throw new Error(`unknown time zone "${zone}": write an IANA name such as UTC or Europe/Berlin`);
      }
    });
  }
}

function checkPlans(c: Checker): void {
  for (const [name, plan] of Object.entries(record(c.root.plans))) {
    const p = record(plan);
    list(p.groups).forEach((g, i) => c.refers(["plans", name, "groups", i], g, c.groups, "group"));
    checkLimitWindows(c, ["plans", name, "limits"], p.limits);
    checkBudgets(c, ["plans", name, "budgets"], p.budgets);
  }
}

/** An account's windows must be longer than nothing. */
function checkLimitWindows(c: Checker, at: KeyPath, limits: unknown): void {
  for (const key of ["request_rate", "total_requests"]) {
    const per = record(record(limits)[key]).per;
    if (per === undefined) continue;
    c.parses([...at, key, "per"], () => {
      if (parseDuration(per as string | number) <= 0) throw new Error("the window must be longer than 0");
    });
  }
}

function checkTokens(c: Checker): void {
  const names = new Map<string, number>();
  const keyHashes = new Map<string, number>();
  list(c.root.tokens).forEach((token, i) => {
    const t = record(token);
    const at = (...rest: (string | number)[]): KeyPath => ["tokens", i, ...rest];
    c.unique(at("name"), t.name, names, "token");
    c.refers(at("user"), t.user, c.users, "user");
    c.refers(at("group"), t.group, c.groups, "group");
    let hash: string | undefined;
    if (text(t.key) && t.key !== "") hash = hashKey(t.key);
    if (text(t.key_sha256)) {
      if (/^[0-9a-fA-F]{64}$/.test(t.key_sha256)) hash = t.key_sha256.toLowerCase();
      else c.report(at("key_sha256"), "must be 64 hex digits (the sha256 of the key)");
    }
    if (hash !== undefined) {
      // Never print the key: name the token that already has it.
      const first = keyHashes.get(hash);
      if (first === undefined) keyHashes.set(hash, i);
      else c.report(at(text(t.key) ? "key" : "key_sha256"), `same key as tokens[${first}]; every token needs its own key`);
    }
    if (text(t.expires)) c.parses(at("expires"), () => parseDate(t.expires as string));
    if (typeof t.quota === "number") c.parses(at("quota"), () => toNano(t.quota as number));
    if (t.limits !== undefined) checkLimitWindows(c, at("limits"), t.limits);
    if (t.budgets !== undefined) checkBudgets(c, at("budgets"), t.budgets);
    list(t.allow_ips).forEach((ip, j) => {
      if (text(ip)) c.parses(at("allow_ips", j), () => parseIpRule(ip));
    });
  });
}

/** The channel's kind: known to this build, speaking the protocol named, with the settings
 * it needs (the kind's own compile says which). */
function checkChannelKind(c: Checker, ch: Entry, at: (...rest: (string | number)[]) => KeyPath, sourcePath: string): void {
  if (ch.kind === undefined && ch.protocol === undefined) return; // the schema asks for protocol
  const kindName = (ch.kind ?? ch.protocol) as KindName;
  const kind = providerKinds[kindName];
  if (!kind) {
    if (text(ch.kind)) c.report(at("kind"), `kind ${ch.kind} is not available in this build of the gateway`);
    return;
  }
  const speaks = kind.protocols ?? [kind.protocol];
  if (text(ch.protocol) && !speaks.includes(ch.protocol as Protocol)) {
    c.report(at("protocol"), `kind ${kind.kind} speaks ${speaks.join(" or ")}, not ${ch.protocol}`);
  }
  for (const problem of compileKind(kind, rawKindChannel(ch as unknown as RawChannel, sourcePath)).problems) c.report(at("kind"), problem);
}

function checkChannels(c: Checker, sourcePath: string): void {
  const names = new Map<string, number>();
  list(c.root.channels).forEach((channel, i) => {
    const ch = record(channel);
    const at = (...rest: (string | number)[]): KeyPath => ["channels", i, ...rest];
    c.unique(at("name"), ch.name, names, "channel");
    if (text(ch.base_url)) c.parses(at("base_url"), () => checkBaseUrl(ch.base_url as string));
    checkChannelKind(c, ch, at, sourcePath);
    list(ch.groups).forEach((g, j) => c.refers(at("groups", j), g, c.groups, "group"));
    list(ch.models).forEach((m, j) => {
      if (text(m) && !c.models.has(m)) c.report(at("models", j), `model "${m}" is not in the price list (models)`);
    });
    const served = new Set(list(ch.models).filter(text));
    for (const from of Object.keys(record(ch.model_map))) {
      if (!served.has(from)) c.report(at("model_map", from), `"${from}" is not one of this channel's models`, "key");
    }
    const cost = record(ch.cost);
    if (typeof cost.multiplier === "number") c.parses(at("cost", "multiplier"), () => toPpm(cost.multiplier as number));
    for (const [model, price] of Object.entries(record(cost.prices))) {
      if (!served.has(model)) c.report(at("cost", "prices", model), `"${model}" is not one of this channel's models`, "key");
      checkPrice(c, at("cost", "prices", model), price);
    }
  });
}

/** Every amount and ratio of a price parses exactly (tiers, variants, service tiers and
 * tool calls included), and no two tiers share a threshold. */
function checkPrice(c: Checker, path: KeyPath, price: unknown): void {
  const amounts = (at: KeyPath, fields: Record<string, unknown>): void => {
    for (const [field, value] of Object.entries(fields)) {
      if (field === "tool_calls") amounts([...at, field], record(value));
      else if (typeof value === "number" && field !== "above_input_tokens") {
        const convert = field.endsWith("_ratio") ? toPpm : toNano;
        c.parses([...at, field], () => convert(value));
      }
    }
  };
  const p = record(price);
  amounts(path, p);
  for (const [tier, ratio] of Object.entries(record(p.service_tiers))) {
    if (typeof ratio === "number") c.parses([...path, "service_tiers", tier], () => toPpm(ratio));
  }
  const thresholds = new Map<number, number>();
  list(p.tiers).forEach((tier, i) => {
    const t = record(tier);
    amounts([...path, "tiers", i], t);
    if (typeof t.above_input_tokens !== "number") return;
    const first = thresholds.get(t.above_input_tokens);
    if (first === undefined) thresholds.set(t.above_input_tokens, i);
    else c.report([...path, "tiers", i, "above_input_tokens"], `same threshold as tiers[${first}]; each tier needs its own`);
  });
  list(p.variants).forEach((variant, i) => amounts([...path, "variants", i], record(variant)));
}

function checkModels(c: Checker, sourcePath: string): void {
  for (const [name, model] of Object.entries(record(c.root.models))) {
    const m = record(model);
    checkPrice(c, ["models", name, "price"], m.price);
    if (text(m.request_schema)) {
      const found = requestSchemaFile(sourcePath, m.request_schema);
      if (!found) {
        const file = `schemas/requests/${m.request_schema.replace(/\.json$/, "")}.json`;
        c.report(["models", name, "request_schema"], `request schema "${m.request_schema}" not found: no ${file}`);
      } else {
        c.parses(["models", name, "request_schema"], () => compileRequestSchema(found));
      }
    }
  }
}

/** The value problems of an account's limits and budgets kept outside gateway.yaml (a
 * stored user's or token's), with paths from `limits` / `budgets`. */
export function accountSettingsIssues(settings: { readonly limits?: unknown; readonly budgets?: unknown }): RawIssue[] {
  const checker = new Checker({});
  if (settings.limits !== undefined) checkLimitWindows(checker, ["limits"], settings.limits);
  if (settings.budgets !== undefined) checkBudgets(checker, ["budgets"], settings.budgets);
  return checker.issues;
}

/** Every cross-reference and value problem in `raw`; `sourcePath` locates request schemas. */
export function crossref(raw: RawConfig, ctx: { sourcePath: string }): RawIssue[] {
  const checker = new Checker(record(raw));
  checkServer(checker);
  checkGroups(checker);
  checkUsage(checker);
  checkPlans(checker);
  checkUsers(checker);
  checkTokens(checker);
  checkChannels(checker, ctx.sourcePath);
  checkModels(checker, ctx.sourcePath);
  return checker.issues;
}

function checkBaseUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`invalid URL "${value}": write an http(s) URL such as https://api.openai.com`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`invalid URL "${value}": must start with http:// or https://`);
  }
  if (url.search || url.hash) throw new Error(`invalid URL "${value}": must not carry a query or fragment`);
}
