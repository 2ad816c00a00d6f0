// new-api's tables as typed records, whichever database held them: drivers disagree on
// types (PostgreSQL gives bigint as text, SQLite and MySQL give booleans as 0/1, GORM's
// soft delete leaves `deleted_at` set), and older one-api schemas lack newer columns,
// so every field is read leniently and a missing column reads as its GORM default.

import type { NewApiSource, Row } from "./source.js";

/** new-api's user (model/user.go): status 1 enabled, 2 disabled. */
export interface NewApiUser {
  readonly id: number;
  readonly username: string;
  readonly email: string;
  readonly status: number;
  readonly group: string;
  /** Remaining quota, in quota units. */
  readonly quota: number;
  readonly usedQuota: number;
  readonly deleted: boolean;
}

/** new-api's token (model/token.go): status 1 enabled, 2 disabled, 3 expired, 4 exhausted. */
export interface NewApiToken {
  readonly id: number;
  readonly userId: number;
  /** As stored: without the `sk-` clients put before it. */
  readonly key: string;
  readonly name: string;
  readonly status: number;
  /** Epoch seconds; -1: never. */
  readonly expiredTime: number;
  readonly remainQuota: number;
  readonly unlimitedQuota: boolean;
  /** Empty unless model limits are switched on. */
  readonly modelLimits: readonly string[];
  readonly allowIps: readonly string[];
  /** Empty: the user's group. */
  readonly group: string;
  readonly deleted: boolean;
}

/** new-api's channel (model/channel.go): status 1 enabled, 2 disabled by hand, 3 by itself. */
export interface NewApiChannel {
  readonly id: number;
  readonly type: number;
  readonly name: string;
  readonly keys: readonly string[];
  readonly status: number;
  readonly baseUrl: string;
  readonly models: readonly string[];
  readonly groups: readonly string[];
  readonly priority: number;
  readonly weight: number;
  /** The model_mapping JSON text ("" when none). */
  readonly modelMapping: string;
}

/** One row of `abilities`: a (group, model) a channel serves. */
export interface NewApiAbility {
  readonly group: string;
  readonly model: string;
  readonly channelId: number;
}

/** Everything the import reads. */
export interface NewApiData {
  readonly users: readonly NewApiUser[];
  readonly tokens: readonly NewApiToken[];
  readonly channels: readonly NewApiChannel[];
  readonly abilities: readonly NewApiAbility[];
  /** The options table: key → value text. */
  readonly options: ReadonlyMap<string, string>;
}

const text = (row: Row, column: string): string => {
  const value = row[column];
  if (value === null || value === undefined) return "";
  return Buffer.isBuffer(value) ? value.toString("utf8") : String(value);
};

const num = (row: Row, column: string, fallback = 0): number => {
  const value = row[column];
  if (value === null || value === undefined || value === "") return fallback;
  const n = Number(value);
  return Number.isFinite(n) ? n : fallback;
};

const bool = (row: Row, column: string): boolean => {
  const value = row[column];
  return value === true || value === 1 || value === "1" || value === "t" || value === "true" || value === 1n;
};

const deleted = (row: Row): boolean => row.deleted_at !== null && row.deleted_at !== undefined && row.deleted_at !== "";

/** Splits on `separator`, trimming and dropping empty items. */
export function listOf(value: string, separator: string | RegExp): string[] {
  return value.split(separator).map((s) => s.trim()).filter((s) => s !== "");
}

/** A channel's keys: one a line, or a JSON array (new-api's Vertex AI form). */
function channelKeys(value: string): string[] {
  const trimmed = value.trim();
  if (trimmed.startsWith("[")) {
    try {
      const parsed = JSON.parse(trimmed) as unknown;
      if (Array.isArray(parsed)) return parsed.map((k) => (typeof k === "string" ? k : JSON.stringify(k)));
    } catch {
      // not JSON after all: one key a line
    }
  }
  return listOf(value, "\n");
}

function user(row: Row): NewApiUser {
  return {
    id: num(row, "id"), username: text(row, "username"), email: text(row, "email"), status: num(row, "status", 1),
    group: text(row, "group") || "default", quota: num(row, "quota"), usedQuota: num(row, "used_quota"), deleted: deleted(row),
  };
}

function token(row: Row): NewApiToken {
  return {
    id: num(row, "id"), userId: num(row, "user_id"), key: text(row, "key"), name: text(row, "name"), status: num(row, "status", 1),
    expiredTime: num(row, "expired_time", -1), remainQuota: num(row, "remain_quota"), unlimitedQuota: bool(row, "unlimited_quota"),
    modelLimits: bool(row, "model_limits_enabled") ? listOf(text(row, "model_limits"), ",") : [],
    allowIps: listOf(text(row, "allow_ips").replace(/,/g, "\n"), "\n"), group: text(row, "group"), deleted: deleted(row),
  };
}

function channel(row: Row): NewApiChannel {
  return {
    id: num(row, "id"), type: num(row, "type"), name: text(row, "name"), keys: channelKeys(text(row, "key")),
    status: num(row, "status", 1), baseUrl: text(row, "base_url"), models: listOf(text(row, "models"), ","),
    groups: listOf(text(row, "group"), ","), priority: num(row, "priority"), weight: num(row, "weight"),
    modelMapping: text(row, "model_mapping"),
  };
}

/** Reads the five tables (a table that is not there reads as empty). */
export async function readNewApi(source: NewApiSource): Promise<NewApiData> {
  const byId = <T extends { id: number }>(items: T[]) => items.sort((a, b) => a.id - b.id);
  const options = new Map<string, string>();
  for (const row of await source.rows("options")) options.set(text(row, "key"), text(row, "value"));
  return {
    users: byId((await source.rows("users")).map(user)),
    tokens: byId((await source.rows("tokens")).map(token)),
    channels: byId((await source.rows("channels")).map(channel)),
    abilities: (await source.rows("abilities")).map((row) => ({ group: text(row, "group"), model: text(row, "model"), channelId: num(row, "channel_id") })),
    options,
  };
}
