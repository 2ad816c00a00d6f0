// The compiled, immutable Runtime: everything a request needs, as lookup structures.
// Built by config/compile.ts from a validated gateway.yaml; never mutated after that.

/** The wire protocol a channel or route speaks: its auth header, error shape and API;
 * gateway.yaml's `protocol:`. */
export type Protocol = "openai" | "anthropic" | "gemini";

/** Who a channel talks to (gateway.yaml's `kind:`): the provider's manifest in providers/
 * says how it authenticates, builds URLs, frames streams and states errors; `protocol` is
 * the wire protocol it speaks. */
export type KindName = "openai" | "anthropic" | "gemini" | "azure-openai" | "openai-compatible" | "bedrock" | "vertex";

/** A channel's settings for its kind, as gateway.yaml gives them (each kind reads its own). */
export interface KindSettings {
  /** openai-compatible: which vendor's quirks apply (deepseek, openrouter, …). */
  readonly preset?: string;
  /** bedrock, vertex: the region (vertex: or "global"). */
  readonly region?: string;
  /** vertex: the Google Cloud project. */
  readonly project?: string;
  /** azure-openai: the api-version query value; absent: the v1 API. */
  readonly apiVersion?: string;
  /** vertex: the service-account key file. */
  readonly credentialsFile?: string;
}

/** The kind of endpoint a model is priced for (models.<name>.endpoint). */
export type Endpoint =
  | "chat"
  | "responses"
  | "embeddings"
  | "image"
  | "video"
  | "speech"
  | "transcription"
  | "rerank"
  | "moderation"
  | "realtime";

/** The hosted tools a provider bills per call, by the price list's `tool_calls` names:
 * web searches (OpenAI `web_search_call`, Anthropic `server_tool_use.web_search_requests`,
 * Gemini grounding queries), Anthropic web fetches, OpenAI file search and code interpreter. */
export const hostedTools = ["web_search", "web_fetch", "file_search", "code_interpreter"] as const;
/** One of hostedTools. */
export type HostedTool = (typeof hostedTools)[number];

/** What is wrong with a request body, or undefined when it matches. */
export interface RequestProblem {
  readonly kind: "missing" | "invalid";
  /** Dotted path of the field, e.g. "metadata.duration". */
  readonly field: string;
  readonly message: string;
}

/** A model's compiled `request_schema`: the problem with a request body, if any. */
export type RequestCheck = (body: unknown) => RequestProblem | undefined;

export interface RateWindow {
  readonly max: number;
  readonly perMs: number;
}

/** `limits`: what each access token may do, the same for every token. */
export interface TokenLimits {
  readonly requestRate?: RateWindow;
  readonly totalRequests?: RateWindow;
  /** Input + output tokens per sliding minute, real usage counted. */
  readonly tokensPerMinute?: number;
  /** Model calls in flight at once. */
  readonly concurrent?: number;
}

export interface ServerSettings {
  readonly host: string;
  readonly port: number;
  readonly trustProxy: boolean;
  readonly maxBodyBytes: number;
  readonly upstreamTimeoutMs: number;
  /** Upper bound of upstream attempts per request (first try + failovers). */
  readonly upstreamAttempts: number;
  /** How long SIGTERM waits for in-flight requests before exiting. */
  readonly drainTimeoutMs: number;
  /** How long a client may take to send its request head. */
  readonly headerTimeoutMs: number;
  /** How long a request body may stall between bytes. */
  readonly bodyTimeoutMs: number;
  /** How long an upstream answer may go silent before the gateway ends it with an error. */
  readonly streamIdleTimeoutMs: number;
  /** How long an answer the client left is still read for its usage (0: not at all). */
  readonly usageDrainTimeoutMs: number;
  /** Most bytes all request bodies being read may hold together. */
  readonly maxBodyMemoryBytes: number;
  /** Longest upstream stream event the gateway holds (server.max_event_size). */
  readonly maxEventBytes: number;
  /** Processes serving requests (node:cluster workers); "auto": one per core, resolved at start. */
  readonly workers: number | "auto";
  /** server.realtime_max_session: how long one realtime session may last. */
  readonly realtimeMaxSessionMs: number;
}

export interface Group {
  readonly name: string;
  readonly multiplier: number;
  /** The multiplier in parts per million (0.7 → 700000n), for exact cost arithmetic. */
  readonly multiplierPpm: bigint;
  /** groups.<name>.show_cost: answers show their cost (X-Gateway-Cost, or in a stream's final usage event). */
  readonly showCost: boolean;
  /** groups.<name>.limits.tokens_per_minute: tokens all the group's tokens may use together
   * in a sliding minute. */
  readonly tokensPerMinute?: number;
  /** groups.<name>.strategy: among channels of equal priority, weighted (by weight) or
   * cheapest (lowest cost to the operator first, weighted among equal costs); absent: weighted. */
  readonly strategy?: "weighted" | "cheapest";
}

export interface User {
  readonly name: string;
  /** Fiat granted in total, in nano-units (1e-9 of the currency). */
  readonly creditNano: bigint;
  /** The user's own groups and its plan's. */
  readonly groups: ReadonlySet<string>;
  readonly active: boolean;
  /** Limits of all the user's tokens together: its own, else its plan's, one by one. */
  readonly limits?: TokenLimits;
  /** Budgets of all the user's tokens together: its own list, else its plan's. */
  readonly budgets?: readonly Budget[];
  readonly plan?: string;
}

/** plans.<name>: groups, limits and budgets a user on the plan gets. */
export interface Plan {
  readonly name: string;
  readonly groups: ReadonlySet<string>;
  readonly limits?: TokenLimits;
  readonly budgets?: readonly Budget[];
}

/** A budget that resets: at most `max` per calendar period or rolling window. */
export interface Budget {
  /** money: what requests are charged (nano-units); tokens: input + output tokens. */
  readonly measure: "money" | "tokens";
  /** Nano-units or tokens (money at most 9e6 of the currency: exact as a double). */
  readonly max: number;
  /** A calendar period in usage.timezone, reset at its start. */
  readonly calendar?: "day" | "week" | "month";
  /** A rolling window's length, ms. */
  readonly rollingMs?: number;
  /** Names it in keys and refusals: "day", "month", "5h rolling". Unique in its list. */
  readonly id: string;
}

/** A compiled IP allowlist: answers whether a client address may use the token. */
export type IpMatcher = (ip: string) => boolean;
/** A compiled model allowlist (exact names and globs). */
export type NameMatcher = (name: string) => boolean;

export interface Token {
  readonly name: string;
  /** sha256 of the key, lower-case hex; the token index is keyed by it. */
  readonly keyHash: string;
  readonly user: string;
  readonly group: string;
  /** Epoch milliseconds; undefined: never expires. */
  readonly expiresAt?: number;
  /** Fiat cap in nano-units; undefined: unlimited. */
  readonly quotaNano?: bigint;
  readonly allowIp?: IpMatcher;
  readonly allowModel?: NameMatcher;
  readonly active: boolean;
  /** This token's own limits, each in place of the site-wide one. */
  readonly limits?: TokenLimits;
  /** This token's own budgets (its user's apply too). */
  readonly budgets?: readonly Budget[];
}

/** Prices in nano-units of the currency: per 1M tokens, or per unit named. A component
 * without its own price is billed at its closest base price (billing/cost.ts). */
export interface Price {
  /** Text input (and any input part without its own price). */
  readonly inputPer1M?: bigint;
  /** Text output (and any output part without its own price). */
  readonly outputPer1M?: bigint;
  /** Ratios as parts per million (0.1 → 100000) so cost stays integer arithmetic. */
  readonly cacheReadRatioPpm?: bigint;
  /** 5-minute cache writes, × input. */
  readonly cacheWriteRatioPpm?: bigint;
  /** 1-hour cache writes, × input (`cache_write_1h_ratio`). */
  readonly cacheWrite1hRatioPpm?: bigint;
  /** Cache prices of their own (`cache_read`, `cache_write`, `cache_write_1h`,
   * `audio_cache_read`), instead of a ratio: a provider's list does not always give a
   * ratio that is an exact decimal. */
  readonly cacheReadPer1M?: bigint;
  readonly cacheWritePer1M?: bigint;
  readonly cacheWrite1hPer1M?: bigint;
  readonly audioCacheReadPer1M?: bigint;
  /** Audio input; cached audio is this × the cache-read ratio. */
  readonly audioInputPer1M?: bigint;
  readonly audioOutputPer1M?: bigint;
  readonly imageInputPer1M?: bigint;
  readonly imageOutputPer1M?: bigint;
  /** Reasoning (thinking) output; omitted: billed as output. */
  readonly reasoningPer1M?: bigint;
  readonly perRequest?: bigint;
  readonly perSecond?: bigint;
  readonly perImage?: bigint;
  readonly per1kChars?: bigint;
  /** Nano-units per 1k calls of each hosted tool (`price.tool_calls`). */
  readonly toolCallsPer1k?: Readonly<Partial<Record<HostedTool, bigint>>>;
  /** `tiers`, highest threshold first: the whole request is billed at the first tier whose
   * threshold its input exceeds (each a whole price, the base's fields filled in). */
  readonly tiers?: readonly PriceTier[];
  /** `service_tiers`: the tier's multiplier (ppm) on the price, when the answer (or, when it
   * says none, the request) names the tier. */
  readonly serviceTiersPpm?: Readonly<Record<string, bigint>>;
  /** `variants`, in the list's order: the first whose `when` the request's selectors all
   * match replaces the price (a whole price, the base's fields filled in). */
  readonly variants?: readonly PriceVariant[];
}

/** A price for requests whose input (every input token, cached or not) exceeds a size. */
export interface PriceTier {
  readonly aboveInputTokens: number;
  readonly price: Price;
}

/** A price chosen by what the request asked (image size and quality, video resolution). */
export interface PriceVariant {
  readonly when: Readonly<Record<string, string>>;
  readonly price: Price;
}

/** What a channel costs the operator (channels[].cost); absent: the list price. */
export interface ChannelCost {
  /** × the list price (or the channel's own price), ppm; absent: 1. */
  readonly multiplierPpm?: bigint;
  /** The channel's own price per model, instead of the list's. */
  readonly prices?: ReadonlyMap<string, Price>;
}

/** What a model supports (models.<name>.capabilities); an absent member is not checked. */
export interface Capabilities {
  readonly reasoning?: boolean;
  readonly tools?: boolean;
  readonly vision?: boolean;
  /** The provider's largest output limit for the model: higher limits are clamped to it. */
  readonly maxOutput?: number;
}

export interface Model {
  readonly name: string;
  /** The first endpoint kind the model lists (what errors call it). */
  readonly endpoint: Endpoint;
  /** Every endpoint kind it is priced for (`endpoint: [chat, responses]`). */
  readonly endpoints: ReadonlySet<Endpoint>;
  readonly requestSchema?: string;
  /** The compiled `request_schema`, run on each request body before routing. */
  readonly checkRequest?: RequestCheck;
  readonly price: Price;
  /** Output cap used to estimate pre-deduction when a request sets no max tokens. */
  readonly maxOutputTokens: number;
  /** What a converted request does with fields the channel's protocol has no use for:
   * lenient drops them (and reports them), strict refuses the request naming them. */
  readonly conversion: "lenient" | "strict";
  /** models.<name>.capabilities: what the model supports; absent: requests go as they are. */
  readonly capabilities?: Capabilities;
  /** models.<name>.limits.request_rate: requests of this model per window, every token's
   * together. */
  readonly requestRate?: RateWindow;
  /** models.<name>.store: answers may be stored at the provider (and named later by their
   * creator); absent: store goes upstream as false. */
  readonly allowStore?: true;
  /** models.<name>.stored_prompts: a responses request may name a stored prompt. */
  readonly allowStoredPrompts?: true;
}

export interface Channel {
  readonly name: string;
  /** Its provider kind (`protocol:` alone names the first-party one). */
  readonly kind: KindName;
  /** The wire protocol the kind speaks: what pass-through and conversion key on. */
  readonly protocol: Protocol;
  readonly settings: KindSettings;
  /** Base URL without a trailing slash, e.g. "https://api.openai.com". */
  readonly baseUrl: URL;
  readonly keys: readonly string[];
  /** How long a key stays out of rotation after the provider refused it (auth) or said
   * its account is out of credit or quota (quota). */
  readonly keyCooldownMs: { readonly auth: number; readonly quota: number };
  /** channels[].probe: how often its keys out of rotation (by key_cooldown) are probed, and
   * the upstream model asked for; absent: never (routing/key-recovery.ts). */
  readonly probe?: { readonly everyMs: number; readonly upstreamModel: string };
  readonly groups: ReadonlySet<string>;
  readonly models: ReadonlySet<string>;
  /** Client model name → upstream model name. */
  readonly modelMap: ReadonlyMap<string, string>;
  readonly priority: number;
  readonly weight: number;
  readonly enabled: boolean;
  /** channels[].betas: protocol beta values clients may ask this channel for; undefined:
   * those its protocol knows (the provider manifest's default). */
  readonly betas?: ReadonlySet<string>;
  /** channels[].cost: what the operator pays for what this channel serves. */
  readonly cost?: ChannelCost;
}

/** Channels of one priority for a (group, model); weights pre-summed for selection. */
export interface ChannelTier {
  readonly priority: number;
  readonly channels: readonly Channel[];
  readonly totalWeight: number;
}

/** What an admin key may do: read (every GET), write (users and tokens), billing (credit
 * and redemption codes). */
export type AdminScope = "read" | "write" | "billing";

export interface AdminKey {
  /** The actor the audit log records. */
  readonly name: string;
  /** sha256 of the key, lowercase hex. */
  readonly keyHash: string;
  readonly scopes: ReadonlySet<AdminScope>;
}

/** admin: the admin API's keys, and its own listener (restart-only) when set. */
export interface AdminSettings {
  readonly listen?: { readonly host: string; readonly port: number };
  readonly keys: readonly AdminKey[];
}

/** console: what customers signed in to the console may do (reloads live). */
export interface ConsoleSettings {
  /** console.customer_tokens: a customer may create, change and revoke their own user's
   * stored tokens; false: they may only list them. */
  readonly customerTokens: boolean;
}

export interface Runtime {
  /** Increments with every successful compile in this process. */
  readonly generation: number;
  /** sha256 of the config source text; equal hashes mean nothing to reload. */
  readonly sourceHash: string;
  readonly sourcePath: string;
  readonly server: ServerSettings;
  readonly store: string;
  /** postgres://… of the shared usage log and settled spend; absent: the usage log stays beside `store`. */
  readonly ledger?: string;
  readonly metricsPath: string;
  /** metrics.listen: where /metrics and /healthz are served instead of the main listener. */
  readonly metricsListen?: { readonly host: string; readonly port: number };
  /** admin: absent, the admin API answers 404 everywhere. */
  readonly admin?: AdminSettings;
  readonly console: ConsoleSettings;
  /** log.level; undefined: GATEWAY_LOG_LEVEL, else info. */
  readonly logLevel?: "debug" | "info" | "warn" | "error" | "off";
  readonly limits: TokenLimits;
  /** How long a session stays bound to its channel; 0: no session affinity. */
  readonly affinityTtlMs: number;
  readonly groups: ReadonlyMap<string, Group>;
  readonly plans: ReadonlyMap<string, Plan>;
  /** usage.timezone: the IANA zone calendar budgets reset in. */
  readonly timeZone: string;
  /** billing.pre_deduction: what a model call must find left before it runs. */
  readonly preDeduction: "worst_case" | "available" | "none";
  /** usage.retention: entries older than this are removed (daily rollups stay), after
   * being written under usage.archive (a folder, resolved) when set. Absent: kept. */
  readonly usageRetention?: { readonly retentionMs: number; readonly archiveDir?: string };
  readonly users: ReadonlyMap<string, User>;
  /** sha256(key) hex → token. */
  readonly tokensByHash: ReadonlyMap<string, Token>;
  readonly models: ReadonlyMap<string, Model>;
  readonly channels: ReadonlyMap<string, Channel>;
  /** group → model → enabled channels serving it, highest priority first. */
  readonly candidates: ReadonlyMap<string, ReadonlyMap<string, readonly ChannelTier[]>>;
}
