// The JSON Schemas of every admin API request body and answer, in one place: ajv checks the
// bodies with them (api.ts), the OpenAPI document is made from them (openapi.ts), and the
// tests check every answer against them, so the document cannot drift from the API.

import { readFileSync } from "node:fs";
import { gatewaySchemaPath } from "../config/schema.js";

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1). */
export type JsonSchema = Readonly<Record<string, unknown>>;

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** gateway.yaml's definitions the API shares (an account's limits and budgets take the
 * file's own shape), under the names they have here. */
const GATEWAY_DEFS: Readonly<Record<string, string>> = {
  accountLimits: "GatewayLimits", budget: "GatewayBudget", window: "GatewayWindow", duration: "GatewayDuration", money: "GatewayMoney",
};
const gatewayDefs = (JSON.parse(readFileSync(gatewaySchemaPath, "utf8")) as { $defs: Record<string, unknown> }).$defs;

/** One of gateway.yaml's definitions as a component: its references pointed at the
 * components, the file's own annotation (x-message) left out. */
function fromGateway(def: string): JsonSchema {
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "x-message") continue;
      out[k] = k === "$ref" && typeof v === "string" ? `#/components/schemas/${GATEWAY_DEFS[v.replace("#/$defs/", "")]}` : rewrite(v);
    }
    return out;
  };
  return rewrite(gatewayDefs[def]) as JsonSchema;
}

const nullable = (schema: JsonSchema, description: string): JsonSchema => ({ anyOf: [schema, { type: "null" }], description });
const plan: JsonSchema = { type: "string", minLength: 1, description: "A plan gateway.yaml declares (plans.<name>): its groups, limits and budgets apply to the user." };
const limitsField: JsonSchema = { ...ref("GatewayLimits"), description: "As gateway.yaml writes limits: request_rate, total_requests, tokens_per_minute, concurrent." };
const budgetsField: JsonSchema = { type: "array", items: ref("GatewayBudget"), description: "As gateway.yaml writes budgets: [{ amount: 5, per: day }, { tokens: 5000000, per: 5h }]." };
const settingsPatch = {
  limits: nullable(ref("GatewayLimits"), "Replaces the limits; null removes them."),
  budgets: nullable({ type: "array", items: ref("GatewayBudget") }, "Replaces the budgets; null removes them."),
} as const;

const name: JsonSchema = {
  type: "string", minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9][A-Za-z0-9._:@-]*$",
  description: "Letters, digits and . _ - : @, starting with a letter or digit.",
};
const moneyIn: JsonSchema = {
  type: ["string", "number"],
  description: "An amount of the currency: a decimal string such as \"12.5\" (read exactly) or a JSON number; at most 9 decimal places.",
};
const moneyOut = (description: string): JsonSchema => ({ type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?$", description: `${description} (an exact decimal of the currency)` });
const exactDecimal = (description: string): JsonSchema => ({ type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?$", description: `${description} (an exact decimal)` });
const expiryIn: JsonSchema = {
  type: "string", minLength: 1,
  description: "An ISO 8601 date or date-time (2027-01-01, 2027-01-01T00:00:00Z), or a duration from now (30d, 12h).",
};
const time: JsonSchema = { type: "string", format: "date-time" };
const stringList = (description: string): JsonSchema => ({ type: "array", items: { type: "string", minLength: 1 }, description });
const version: JsonSchema = {
  type: "integer", minimum: 1,
  description: "The version this change was based on (from a read); refused with 409 version_conflict when another change landed first. The If-Match header may carry it instead.",
};
const userStatus: JsonSchema = { type: "string", enum: ["active", "disabled"] };
const list = (item: string): JsonSchema => ({
  type: "object", additionalProperties: false, required: ["data"],
  properties: {
    data: { type: "array", items: ref(item) },
    next: { type: "string", description: "The cursor of the next page; absent on the last page." },
  },
});

const tokenProperties = {
  name,
  source: { type: "string", enum: ["store", "gateway.yaml"] },
  user: { type: "string" },
  group: { type: "string" },
  status: { type: "string", enum: ["active", "disabled", "revoked"] },
  key_hint: { type: "string", description: "What the key starts and ends with, to tell keys apart; never enough to use it." },
  expires: time,
  quota: moneyOut("Most this token may spend in total"),
  spent: moneyOut("What this token has spent"),
  allow_ips: stringList("Addresses and CIDR ranges the token may be used from."),
  models: stringList("Model names and globs the token may use."),
  limits: limitsField,
  budgets: budgetsField,
  version: { type: "integer", minimum: 1 },
  created_at: time,
  updated_at: time,
} as const;

const batchProperties = {
  batch: name,
  count: { type: "integer", minimum: 1 },
  amount: moneyOut("What each code credits"),
  expires: time,
  redeemed: { type: "integer", minimum: 0 },
  created_at: time,
  actor: { type: "string" },
} as const;

/** A channel key as every answer shows it. */
const channelKeyProperties = {
  channel: { type: "string" },
  fingerprint: { type: "string", description: "The first and last 4 hex digits of the key's sha256: names the key, never shows it." },
  state: { type: "string", enum: ["in_rotation", "cooling_down", "taken_out", "unknown"] },
  cooldown: {
    type: "object", additionalProperties: false, required: ["reason", "until"],
    properties: { reason: { type: "string", enum: ["auth", "quota"] }, until: time },
  },
  taken_out: {
    type: "object", additionalProperties: false, required: ["reason", "actor", "at"],
    properties: { reason: { type: "string" }, actor: { type: "string" }, at: time },
  },
} as const;

/** Every schema of the API by name: request bodies first, then answers. */
export const schemas = {
  UserCreate: {
    type: "object", additionalProperties: false, required: ["name"],
    properties: {
      name,
      groups: stringList("Groups (from gateway.yaml) this user's tokens may use."),
      status: userStatus,
      note: { type: "string", maxLength: 1000, description: "Free text kept beside the account (an email, a customer id)." },
      credit: { ...moneyIn, description: `An opening grant, written to the credit ledger. ${moneyIn.description as string}` },
      plan,
      limits: { ...limitsField, description: "Limits of all the user's tokens together; unset ones come from its plan." },
      budgets: { ...budgetsField, description: "Budgets of all the user's tokens together; set, they replace the plan's." },
    },
  },
  UserPatch: {
    type: "object", additionalProperties: false,
    properties: {
      status: userStatus,
      groups: stringList("Replaces the user's groups."),
      note: { type: ["string", "null"], maxLength: 1000, description: "null removes it." },
      plan: nullable(plan, "Assigns a plan gateway.yaml declares; null removes it."),
      ...settingsPatch,
      version,
    },
  },
  CreditCreate: {
    type: "object", additionalProperties: false, required: ["amount", "reason"],
    properties: {
      amount: { ...moneyIn, description: `A grant or top-up (positive) or an adjustment (negative). ${moneyIn.description as string}` },
      reason: { type: "string", minLength: 1, maxLength: 1000, description: "Why: kept in the ledger." },
      idempotency_key: {
        type: "string", minLength: 1, maxLength: 200,
        description: "A payment id or the like: the same key credits once. The Idempotency-Key header may carry it instead.",
      },
    },
  },
  TokenCreate: {
    type: "object", additionalProperties: false, required: ["name", "user"],
    properties: {
      name,
      user: { type: "string", minLength: 1, description: "A user kept in the store." },
      group: { type: "string", minLength: 1, description: "One of the user's groups; default: the user's only group." },
      expires: expiryIn,
      quota: { ...moneyIn, description: `Most the token may spend in total. ${moneyIn.description as string}` },
      allow_ips: stringList("Addresses and CIDR ranges the token may be used from; absent: any."),
      models: stringList("Model names and globs the token may use; absent: every model of its group."),
      status: userStatus,
      limits: { ...limitsField, description: "This token's limits, each in place of the site-wide one." },
      budgets: { ...budgetsField, description: "This token's budgets (its user's apply too)." },
    },
  },
  TokenPatch: {
    type: "object", additionalProperties: false,
    properties: {
      status: userStatus,
      group: { type: "string", minLength: 1 },
      expires: { ...expiryIn, type: ["string", "null"], description: `${expiryIn.description as string} null removes it.` },
      quota: { ...moneyIn, type: ["string", "number", "null"], description: `${moneyIn.description as string} null removes it.` },
      allow_ips: { ...stringList("null removes the allowlist."), type: ["array", "null"] },
      models: { ...stringList("null removes the allowlist."), type: ["array", "null"] },
      ...settingsPatch,
      version,
    },
  },
  CodesCreate: {
    type: "object", additionalProperties: false, required: ["count", "amount", "expires"],
    properties: {
      count: { type: "integer", minimum: 1, maximum: 10_000, description: "How many single-use codes." },
      amount: { ...moneyIn, description: `What each code credits. ${moneyIn.description as string}` },
      expires: expiryIn,
      batch: { ...name, description: "The batch's name; default: one made from the time." },
    },
  },

  User: {
    type: "object", additionalProperties: false, required: ["name", "source", "status", "groups", "credit", "spent", "balance"],
    properties: {
      name: { type: "string" },
      source: { type: "string", enum: ["store", "gateway.yaml"] },
      status: userStatus,
      groups: stringList("Groups this user's tokens may use."),
      note: { type: "string" },
      plan,
      limits: limitsField,
      budgets: budgetsField,
      credit: moneyOut("gateway.yaml's credit plus every credit entry"),
      spent: moneyOut("Settled spend"),
      reserved: moneyOut("Held by requests in flight"),
      balance: moneyOut("credit − spent − reserved"),
      version: { type: "integer", minimum: 1 },
      created_at: time,
      updated_at: time,
    },
  },
  UserList: list("User"),
  CreditEntry: {
    type: "object", additionalProperties: false, required: ["id", "user", "amount", "kind", "reason", "actor", "at"],
    properties: {
      id: { type: "integer" },
      user: { type: "string" },
      amount: moneyOut("Positive: a grant; negative: an adjustment"),
      kind: { type: "string", enum: ["grant", "adjustment", "redeem"] },
      reason: { type: "string" },
      actor: { type: "string", description: "The admin key's name, cli:<os user>, or token:<name> for a redemption." },
      idempotency_key: { type: "string" },
      at: time,
    },
  },
  CreditList: list("CreditEntry"),
  CreditResult: {
    type: "object", additionalProperties: false, required: ["entry", "created", "user"],
    properties: {
      entry: ref("CreditEntry"),
      created: { type: "boolean", description: "false: the idempotency key was seen before and nothing was added (the first entry is shown)." },
      user: ref("User"),
    },
  },
  Token: { type: "object", additionalProperties: false, required: ["name", "source", "user", "group", "status"], properties: tokenProperties },
  TokenCreated: {
    type: "object", additionalProperties: false, required: ["name", "source", "user", "group", "status", "key"],
    properties: { ...tokenProperties, key: { type: "string", description: "The token's key: shown in this answer only, never again." } },
  },
  TokenList: list("Token"),
  CodeBatch: { type: "object", additionalProperties: false, required: Object.keys(batchProperties), properties: batchProperties },
  CodeBatchList: list("CodeBatch"),
  CodesCreated: {
    type: "object", additionalProperties: false, required: [...Object.keys(batchProperties), "codes"],
    properties: { ...batchProperties, codes: { type: "array", items: { type: "string" }, description: "The codes: shown in this answer only, never again." } },
  },
  UsageRow: {
    type: "object", additionalProperties: false,
    required: ["key", "requests", "input", "cache_read", "cache_write", "output", "reasoning", "cost", "channel_cost", "margin", "margin_percent", "channel_cost_unknown", "channel_cost_recorded"],
    properties: {
      key: { type: ["string", "null"], description: "The user, token, model, group, channel, channel key fingerprint or day; null: requests no channel answered (no key served)." },
      requests: { type: "integer", minimum: 0 },
      input: { type: "integer", minimum: 0 },
      cache_read: { type: "integer", minimum: 0 },
      cache_write: { type: "integer", minimum: 0 },
      output: { type: "integer", minimum: 0 },
      reasoning: { type: "integer", minimum: 0 },
      cost: moneyOut("What was charged and not refunded (the revenue)"),
      channel_cost: { ...moneyOut("What the requests cost the operator"), type: ["string", "null"], description: "What the requests cost the operator (an exact decimal); null while some recorded no cost." },
      margin: { ...moneyOut("cost − channel_cost"), type: ["string", "null"], description: "cost − channel_cost (an exact decimal); null while channel_cost is unknown." },
      margin_percent: { type: ["string", "null"], description: "The margin as a percentage of the revenue, two decimals; null when unknown or without revenue." },
      channel_cost_unknown: { type: "integer", minimum: 0, description: "Charged requests that recorded no cost to the operator." },
      channel_cost_recorded: moneyOut("The costs to the operator that were recorded"),
    },
  },
  UsageReport: {
    type: "object", additionalProperties: false, required: ["by", "data"],
    properties: {
      by: { type: "string", enum: ["channel", "key", "user", "token", "model", "group", "day"] },
      data: { type: "array", items: ref("UsageRow"), description: "Days newest first; the others highest cost first." },
    },
  },
  AuditRecord: {
    type: "object", additionalProperties: false, required: ["id", "at", "actor", "action", "target"],
    properties: {
      id: { type: "integer" },
      at: time,
      actor: { type: "string" },
      action: { type: "string", description: "resource.verb: user.create, user.update, token.create, token.update, token.revoke, credit.add, codes.create, code.redeem, key.take_out, key.put_back, key.test." },
      target: { type: "string" },
      before: { description: "The resource before the change (absent before a creation); money as exact decimals, never a key or its hash." },
      after: { description: "The resource after the change." },
    },
  },
  AuditList: list("AuditRecord"),
  OpenApiDocument: { type: "object", description: "This document." },
  KeyOut: {
    type: "object", additionalProperties: false, required: ["reason"],
    properties: { reason: { type: "string", minLength: 1, maxLength: 200, description: "Why, in one line: kept with the key and shown." } },
  },
  ChannelKey: {
    type: "object", additionalProperties: false, required: ["fingerprint", "state"],
    properties: channelKeyProperties,
  },
  Channel: {
    type: "object", additionalProperties: false, required: ["channel", "enabled", "keys"],
    properties: { channel: { type: "string" }, enabled: { type: "boolean" }, keys: { type: "array", items: ref("ChannelKey") } },
  },
  ChannelList: {
    type: "object", additionalProperties: false, required: ["data"],
    properties: { data: { type: "array", items: ref("Channel") } },
  },
  TrafficMinute: {
    type: "object", additionalProperties: false, required: ["minute", "requests", "errors", "cost"],
    properties: {
      minute: { ...time, description: "The minute's start (UTC)." },
      requests: { type: "integer", minimum: 0 },
      errors: { type: "integer", minimum: 0, description: "Requests answered with a status of 400 or more, or failed with a gateway error." },
      cost: moneyOut("What the minute's requests were charged, refunds left out"),
    },
  },
  Traffic: {
    type: "object", additionalProperties: false, required: ["minutes", "total", "data"],
    properties: {
      minutes: { type: "integer", minimum: 1 },
      total: {
        type: "object", additionalProperties: false, required: ["requests", "errors", "cost"],
        properties: { requests: { type: "integer", minimum: 0 }, errors: { type: "integer", minimum: 0 }, cost: moneyOut("The sum of the minutes' cost") },
      },
      data: { type: "array", items: ref("TrafficMinute"), description: "Every minute, oldest first; the last is the current one (still counting)." },
    },
  },
  KeyStats: {
    type: "object", additionalProperties: false,
    required: ["fingerprint", "state", "requests", "errors", "error_rate", "p50_ms", "p95_ms", "latency_sample"],
    properties: {
      state: channelKeyProperties.state,
      cooldown: channelKeyProperties.cooldown,
      taken_out: channelKeyProperties.taken_out,
      fingerprint: { type: ["string", "null"], description: "The key's fingerprint; null: requests the channel answered without a key." },
      requests: { type: "integer", minimum: 0 },
      errors: { type: "integer", minimum: 0, description: "Status 400 or more, or a gateway error." },
      error_rate: { type: ["number", "null"], description: "errors / requests, to 4 decimals; null without requests." },
      p50_ms: { type: ["number", "null"], description: "Median request duration in ms (nearest rank) over the sample; null when none." },
      p95_ms: { type: ["number", "null"], description: "95th percentile of request duration in ms (nearest rank) over the sample; null when none." },
      latency_sample: { type: "integer", minimum: 0, description: "How many of the key's requests the percentiles are over." },
    },
  },
  ChannelStats: {
    type: "object", additionalProperties: false, required: ["since", "latency_sample_limit", "data"],
    properties: {
      since: time,
      latency_sample_limit: { type: "integer", minimum: 1, description: "Percentiles are over at most this many of the newest requests of the span (all channels together)." },
      data: {
        type: "array",
        items: {
          type: "object", additionalProperties: false, required: ["channel", "enabled", "keys"],
          properties: { channel: { type: "string" }, enabled: { type: "boolean" }, keys: { type: "array", items: ref("KeyStats") } },
        },
      },
    },
  },
  KeyTest: {
    type: "object", additionalProperties: false, required: ["channel", "fingerprint", "model", "mode", "ok", "total_ms"],
    properties: {
      channel: { type: "string" },
      fingerprint: { type: "string" },
      model: { type: "string", description: "The upstream model asked for." },
      mode: { type: "string", enum: ["plain", "stream"] },
      ok: { type: "boolean", description: "A 2xx whose body is a complete answer." },
      status: { type: "integer", description: "The provider's HTTP status; absent when no answer came." },
      first_byte_ms: { type: "integer", minimum: 0 },
      total_ms: { type: "integer", minimum: 0 },
      error_class: { type: "string", enum: ["auth", "quota", "denied", "rate_limit", "request", "upstream", "bad_answer", "timeout", "connect", "network"] },
      message: { type: "string", description: "The provider's message (the key blanked out), at most 160 characters." },
    },
  },
  PriceSection: {
    type: "object", additionalProperties: false, required: ["kind", "rows"],
    properties: {
      kind: { type: "string", enum: ["price", "tier", "variant"], description: "The base price, a tier (by input size) or a variant (by what the request asked)." },
      above_input_tokens: { type: "integer", minimum: 0, description: "A tier: for requests whose input exceeds this (the whole request)." },
      when: { type: "object", additionalProperties: { type: "string" }, description: "A variant: the request's selectors it applies to." },
      rows: {
        type: "array", description: "A tier or variant lists only what it changes.",
        items: {
          type: "object", additionalProperties: false, required: ["component", "per", "price", "from", "fallback", "charged"],
          properties: {
            component: { type: "string", description: "input, cache_read, output, reasoning, per_request, per_image, web_search, …" },
            per: { type: "string", description: "What the rate is per: 1M tokens, request, image, second, 1k chars, 1k calls." },
            price: exactDecimal("The list price per unit"),
            from: { type: "string", description: "own, a ratio (input × 0.1), a rule (= output), or the base a fallback bills at." },
            fallback: { type: "boolean", description: "Billed at a base price the model's price does not name for it." },
            charged: { type: "object", additionalProperties: exactDecimal("Charged per unit in this group"), description: "Per group serving the model: price × the group's multiplier." },
          },
        },
      },
    },
  },
  PriceList: {
    type: "object", additionalProperties: false, required: ["source", "groups", "data"],
    properties: {
      source: {
        type: "object", additionalProperties: false, required: ["file", "sha256"],
        properties: { file: { type: "string", description: "The configuration file the prices were compiled from (prices imported by `gateway prices import --write` are written into it)." }, sha256: { type: "string" } },
      },
      groups: { type: "object", additionalProperties: exactDecimal("The group's multiplier"), description: "Every group's multiplier." },
      data: {
        type: "array",
        items: {
          type: "object", additionalProperties: false, required: ["model", "endpoints", "service_tiers", "groups", "sections", "channels"],
          properties: {
            model: { type: "string" },
            endpoints: stringList("The endpoint kinds it is priced for."),
            service_tiers: { type: "object", additionalProperties: exactDecimal("× the price"), description: "Service tiers and their multipliers on the price." },
            groups: { type: "object", additionalProperties: exactDecimal("The group's multiplier"), description: "Groups of the channels serving the model." },
            sections: { type: "array", items: ref("PriceSection") },
            channels: {
              type: "array", description: "What each channel serving the model costs the operator.",
              items: {
                type: "object", additionalProperties: false, required: ["channel", "enabled", "basis", "multiplier"],
                properties: {
                  channel: { type: "string" }, enabled: { type: "boolean" },
                  basis: { type: "string", enum: ["list", "multiplier", "own"], description: "list: the list price; multiplier: the list price × multiplier; own: its own price × multiplier." },
                  multiplier: exactDecimal("The channel's multiplier"),
                  sections: { type: "array", items: ref("PriceSection"), description: "The channel's own price (basis own), before its multiplier." },
                },
              },
            },
          },
        },
      },
    },
  },
  GatewayLimits: fromGateway("accountLimits"),
  GatewayBudget: fromGateway("budget"),
  GatewayWindow: fromGateway("window"),
  GatewayDuration: fromGateway("duration"),
  GatewayMoney: fromGateway("money"),
  Error: {
    type: "object", additionalProperties: false, required: ["error"],
    properties: {
      error: {
        type: "object", required: ["message", "type", "code"],
        properties: {
          message: { type: "string", description: "What is wrong; a bad field is named first (\"amount: must be …\")." },
          type: { type: "string" },
          code: { type: "string", description: "Stable: see docs/admin-api.md." },
          param: { type: ["string", "null"] },
        },
      },
    },
  },
} as const satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof schemas;
