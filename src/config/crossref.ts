// Checks the schema cannot express: names that refer to other entries, uniqueness, and
// values that must parse (durations, sizes, dates, addresses, URLs, money). Defensive
// about shapes, so it can run even when the schema already found problems.

import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RawConfig } from "./raw.js";
import type { KeyPath, RawIssue } from "./locate.js";
import { parseIpRule } from "./matchers.js";
import { toNano, toPpm } from "./money.js";
import { parseDate, parseDuration, parseListen, parseSize } from "./units.js";

/** sha256 of a token key, lowercase hex: the key of Runtime.tokensByHash. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

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

/** Every cross-reference and value problem in `raw`; `sourcePath` locates request schemas. */
export function crossref(raw: RawConfig, ctx: { sourcePath: string }): RawIssue[] {
  const issues: RawIssue[] = [];
  const check = (path: KeyPath, fn: () => unknown): void => {
    try {
      fn();
    } catch (error) {
      issues.push({ path, message: (error as Error).message });
    }
  };
  const root = record(raw);
  const groups = new Set(Object.keys(record(root.groups)));
  const users = new Set(Object.keys(record(root.users)));
  const models = new Set(Object.keys(record(root.models)));
  const refer = (path: KeyPath, value: unknown, known: Set<string>, kind: string): void => {
    if (text(value) && !known.has(value)) issues.push({ path, message: `unknown ${kind} "${value}" (not under ${kind}s)` });
  };
  const unique = (path: KeyPath, value: unknown, seen: Map<string, number>, index: number, kind: string): void => {
    if (!text(value)) return;
    const first = seen.get(value);
    if (first === undefined) seen.set(value, index);
    else issues.push({ path, message: `duplicate ${kind} name "${value}" (also ${kind}s[${first}])` });
  };

  // server, limits
  const server = record(root.server);
  if (text(server.listen)) check(["server", "listen"], () => parseListen(server.listen as string));
  for (const key of ["upstream_timeout", "drain_timeout"]) {
    if (server[key] !== undefined) check(["server", key], () => parseDuration(server[key] as string));
  }
  if (server.max_body !== undefined) check(["server", "max_body"], () => parseSize(server.max_body as string));
  for (const [name, window] of Object.entries(record(root.limits))) {
    const per = record(window).per;
    if (per !== undefined) {
      check(["limits", name, "per"], () => {
        if (parseDuration(per as string) <= 0) throw new Error("the window must be longer than 0");
      });
    }
  }

  // users
  for (const [name, user] of Object.entries(record(root.users))) {
    const u = record(user);
    if (typeof u.credit === "number") check(["users", name, "credit"], () => toNano(u.credit as number));
    list(u.groups).forEach((g, i) => refer(["users", name, "groups", i], g, groups, "group"));
  }

  // tokens
  const tokenNames = new Map<string, number>();
  const keyHashes = new Map<string, number>();
  list(root.tokens).forEach((token, i) => {
    const t = record(token);
    const at = (...rest: (string | number)[]): KeyPath => ["tokens", i, ...rest];
    unique(at("name"), t.name, tokenNames, i, "token");
    refer(at("user"), t.user, users, "user");
    refer(at("group"), t.group, groups, "group");
    let hash: string | undefined;
    if (text(t.key) && t.key !== "") hash = hashKey(t.key);
    if (text(t.key_sha256)) {
      if (/^[0-9a-fA-F]{64}$/.test(t.key_sha256)) hash = t.key_sha256.toLowerCase();
      else issues.push({ path: at("key_sha256"), message: "must be 64 hex digits (the sha256 of the key)" });
    }
    if (hash !== undefined) {
      const first = keyHashes.get(hash);
      if (first === undefined) keyHashes.set(hash, i);
      else issues.push({ path: at(text(t.key) ? "key" : "key_sha256"), message: `same key as tokens[${first}]; every token needs its own key` });
    }
    if (text(t.expires)) check(at("expires"), () => parseDate(t.expires as string));
    if (typeof t.quota === "number") check(at("quota"), () => toNano(t.quota as number));
    list(t.allow_ips).forEach((ip, j) => {
      if (text(ip)) check(at("allow_ips", j), () => parseIpRule(ip));
    });
  });

  // channels
  const channelNames = new Map<string, number>();
  list(root.channels).forEach((channel, i) => {
    const c = record(channel);
    const at = (...rest: (string | number)[]): KeyPath => ["channels", i, ...rest];
    unique(at("name"), c.name, channelNames, i, "channel");
    if (text(c.base_url)) check(at("base_url"), () => checkBaseUrl(c.base_url as string));
    list(c.groups).forEach((g, j) => refer(at("groups", j), g, groups, "group"));
    list(c.models).forEach((m, j) => {
      if (text(m) && !models.has(m)) issues.push({ path: at("models", j), message: `model "${m}" is not in the price list (models)` });
    });
    const served = new Set(list(c.models).filter(text));
    for (const from of Object.keys(record(c.model_map))) {
      if (!served.has(from)) {
        issues.push({ path: at("model_map", from), at: "key", message: `"${from}" is not one of this channel's models` });
      }
    }
  });

  // models
  for (const [name, model] of Object.entries(record(root.models))) {
    const m = record(model);
    for (const [field, value] of Object.entries(record(m.price))) {
      if (typeof value !== "number") continue;
      const convert = field.endsWith("_ratio") ? toPpm : toNano;
      check(["models", name, "price", field], () => convert(value));
    }
    if (text(m.request_schema) && !requestSchemaFile(ctx.sourcePath, m.request_schema)) {
      issues.push({
        path: ["models", name, "request_schema"],
        message: `request schema "${m.request_schema}" not found: no schemas/requests/${m.request_schema.replace(/\.json$/, "")}.json`,
      });
    }
  }
  return issues;
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
