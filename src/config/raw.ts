// Raw config types: they mirror gateway.yaml key for key (see schemas/gateway.schema.json
// for the meaning of each key). Only the loader and the compiler see these.

import type { AdminScope, Endpoint, HostedTool, KindName, Protocol } from "../runtime/types.js";

export type Duration = string | number; // "300s", "1m", "250ms"; a bare number is seconds
export type Size = string | number; // "32MiB", "512KiB"; a bare number is bytes

export interface RawWindow {
  max: number;
  per: Duration;
}

export interface RawConfig {
  server?: {
    listen?: string;
    trust_proxy?: boolean;
    max_body?: Size;
    upstream_timeout?: Duration;
    upstream_attempts?: number;
    drain_timeout?: Duration;
    header_timeout?: Duration;
    body_timeout?: Duration;
    stream_idle_timeout?: Duration;
    usage_drain_timeout?: Duration;
    max_body_memory?: Size;
    max_event_size?: Size;
    workers?: number | "auto";
    realtime_max_session?: Duration;
  };
  store?: string;
  ledger?: string;
  metrics?: { path?: string; listen?: string };
  admin?: { listen?: string; keys?: RawAdminKey[] };
  console?: { customer_tokens?: boolean };
  log?: { level?: "debug" | "info" | "warn" | "error" | "off" };
  limits?: {
    request_rate?: RawWindow;
    total_requests?: RawWindow;
    tokens_per_minute?: number;
    concurrent?: number;
  };
  routing?: { affinity_ttl?: Duration };
  groups?: Record<string, {
    multiplier?: number; strategy?: "weighted" | "cheapest"; show_cost?: boolean; limits?: { tokens_per_minute?: number }; description?: string;
  }>;
  usage?: { timezone?: string; retention?: Duration; archive?: string };
  billing?: { pre_deduction?: "worst_case" | "available" | "none" };
  plans?: Record<string, { description?: string; groups?: string[]; limits?: RawAccountLimits; budgets?: RawBudget[] }>;
  users?: Record<
    string,
    { credit?: number; groups?: string[]; status?: "active" | "disabled"; plan?: string; limits?: RawAccountLimits; budgets?: RawBudget[] }
  >;
  tokens?: RawToken[];
  channels?: RawChannel[];
  models?: Record<string, RawModel>;
}

export interface RawAccountLimits {
  request_rate?: RawWindow;
  total_requests?: RawWindow;
  tokens_per_minute?: number;
  concurrent?: number;
}

export interface RawBudget {
  amount?: number;
  tokens?: number;
  per: string;
  rolling?: boolean;
}

export interface RawAdminKey {
  name: string;
  key?: string;
  key_sha256?: string;
  scopes: AdminScope[];
}

export interface RawToken {
  name: string;
  key?: string;
  key_sha256?: string;
  user: string;
  group: string;
  expires?: string;
  quota?: number;
  allow_ips?: string[];
  models?: string[];
  status?: "active" | "disabled";
  limits?: RawAccountLimits;
  budgets?: RawBudget[];
}

export interface RawChannel {
  name: string;
  kind?: KindName;
  protocol?: Protocol;
  base_url?: string;
  preset?: string;
  region?: string;
  project?: string;
  api_version?: string;
  credentials?: Record<string, string>;
  credentials_file?: string;
  keys?: string[];
  key_cooldown?: { auth?: string | number; quota?: string | number };
  probe?: { every: string | number; model?: string };
  groups: string[];
  models: string[];
  model_map?: Record<string, string>;
  priority?: number;
  weight?: number;
  status?: "enabled" | "disabled";
  betas?: string[];
  /** What the channel costs the operator. */
  cost?: { multiplier?: number; prices?: Record<string, RawPrice> };
}

/** The amounts of a price (per 1M tokens unless named): the model's, a tier's, a variant's. */
export interface RawPriceAmounts {
  input?: number;
  output?: number;
  cache_read_ratio?: number;
  cache_write_ratio?: number;
  cache_write_1h_ratio?: number;
  cache_read?: number;
  cache_write?: number;
  cache_write_1h?: number;
  audio_input?: number;
  audio_cache_read?: number;
  audio_output?: number;
  image_input?: number;
  image_output?: number;
  reasoning?: number;
  per_request?: number;
  per_second?: number;
  per_image?: number;
  per_1k_chars?: number;
  /** Per 1k calls of each hosted tool. */
  tool_calls?: Partial<Record<HostedTool, number>>;
}

export interface RawPrice extends RawPriceAmounts {
  /** Prices by input size: the whole request at the highest tier its input exceeds. */
  tiers?: (RawPriceAmounts & { above_input_tokens: number })[];
  /** Multipliers by the service tier the answer (or the request) names. */
  service_tiers?: Record<string, number>;
  /** Prices chosen by what the request asked. */
  variants?: (RawPriceAmounts & { when: Record<string, string> })[];
}

export interface RawCapabilities {
  reasoning?: boolean;
  tools?: boolean;
  vision?: boolean;
  max_output?: number;
}

export interface RawModel {
  /** One kind, or several ([chat, responses]). */
  endpoint?: Endpoint | Endpoint[];
  request_schema?: string;
  max_output_tokens?: number;
  /** lenient (default): drop provider-only hints a converted request cannot carry; strict: refuse them. */
  conversion?: "lenient" | "strict";
  /** What the model supports: requests are fitted to it (reasoning fields dropped, output limit clamped). */
  capabilities?: RawCapabilities;
  price?: RawPrice;
  limits?: { request_rate?: RawWindow };
  /** Responses may be stored at the provider (default false). */
  store?: boolean;
  /** /v1/responses may name a stored prompt (default false). */
  stored_prompts?: boolean;
}
