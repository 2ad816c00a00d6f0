// Reads LiteLLM's model_prices_and_context_window.json: one object per model, costs per
// token (3e-06), tiers as `…_above_200k_tokens`, service tiers as `…_flex` / `…_priority`,
// image sizes and qualities as their own entries (`high/1024-x-1024/gpt-image-1`), which
// become variants of the model they name.

import { hostedTools, type Endpoint, type HostedTool } from "../runtime/types.js";
import { ratioPpm } from "./amount.js";
import { EntryProblem, exactNano, nameOf, type Entry } from "./litellm-entry.js";
import { attachVariants, readVariant, variantKey, type Variants } from "./litellm-variants.js";
import type { ListedModel, ListedPrice, ListedTier, PriceList, RefusedEntry, TokenField } from "./listed.js";

/** LiteLLM's per-token keys → the component they price. */
const tokenKeys: Readonly<Record<string, TokenField>> = {
  input_cost_per_token: "input",
  output_cost_per_token: "output",
  cache_read_input_token_cost: "cacheRead",
  cache_creation_input_token_cost: "cacheWrite",
  cache_creation_input_token_cost_above_1hr: "cacheWrite1h",
  input_cost_per_audio_token: "audioInput",
  cache_read_input_audio_token_cost: "audioCacheRead",
  // LiteLLM's name for cached audio input of the realtime models.
  cache_creation_input_audio_token_cost: "audioCacheRead",
  output_cost_per_audio_token: "audioOutput",
  input_cost_per_image_token: "imageInput",
  output_cost_per_image_token: "imageOutput",
  output_cost_per_reasoning_token: "reasoning",
};

/** LiteLLM's modes → the endpoint kind of a model added to gateway.yaml. */
const endpointOfMode: Readonly<Record<string, Endpoint>> = {
  chat: "chat",
  responses: "responses",
  embedding: "embeddings",
  image_generation: "image",
  image_edit: "image",
  video_generation: "video",
  audio_speech: "speech",
  audio_transcription: "transcription",
  rerank: "rerank",
  moderation: "moderation",
  realtime: "realtime",
};

/** Keys read elsewhere, or that say nothing about a price. */
const quietKeys = /^(litellm_provider|mode|max_(input_|output_)?tokens|supports_.*|supported_.*|source|metadata|deprecation_date|rpm|tpm|tool_use_system_prompt_tokens|prompt_cache_min_tokens|provider_specific_entry|regional_processing_uplift_.*|web_search_billing_unit|.*_batches|input_cost_per_pixel|output_cost_per_pixel)$/;

/** The service tiers LiteLLM prices by suffix (`_batches` is the batch API, not a tier). */
const serviceTierSuffix = /^(.*)_(flex|priority)$/;
const tierSuffix = /^(.*)_above_(\d+)k_tokens$/;
/** The token prices of an entry: base, tiers by threshold, service tiers' prices by name. */
function tokenPrices(entry: Entry): { base: Partial<Record<TokenField, bigint>>; tiers: Map<number, Partial<Record<TokenField, bigint>>>; serviceTiers: Map<string, Partial<Record<TokenField, bigint>>> } {
  const base: Partial<Record<TokenField, bigint>> = {};
  const tiers = new Map<number, Partial<Record<TokenField, bigint>>>();
  const serviceTiers = new Map<string, Partial<Record<TokenField, bigint>>>();
  for (const key of Object.keys(entry)) {
    const tier = tierSuffix.exec(key);
    const service = serviceTierSuffix.exec(key);
    const field = tokenKeys[key] ?? (tier && tokenKeys[tier[1]]) ?? (service && tokenKeys[service[1]]);
    if (!field) continue;
    const nano = exactNano(entry, key, 6, "per 1M tokens");
    if (nano === undefined) continue;
    if (tokenKeys[key]) base[field] = nano;
    else if (tier) {
      const above = Number(tier[2]) * 1000;
      tiers.set(above, { ...tiers.get(above), [field]: nano });
    } else if (service) serviceTiers.set(service[2], { ...serviceTiers.get(service[2]), [field]: nano });
  }
  return { base, tiers, serviceTiers };
}

/** Service tiers as one multiplier each, when every component the tier prices agrees. */
function serviceMultipliers(base: Partial<Record<TokenField, bigint>>, tiers: Map<string, Partial<Record<TokenField, bigint>>>, notes: string[]): Record<string, bigint> | undefined {
  const out: Record<string, bigint> = {};
  for (const [name, prices] of tiers) {
    const ratios = new Set<string>();
    let exact = true;
    for (const [field, nano] of Object.entries(prices) as [TokenField, bigint][]) {
      const ppm = base[field] === undefined ? undefined : ratioPpm(nano, base[field]!);
      if (ppm === undefined) exact = false;
      else ratios.add(String(ppm));
    }
    if (exact && ratios.size === 1) out[name] = BigInt([...ratios][0]);
    else notes.push(`service tier "${name}" left out: its prices are not one exact multiplier (6 places) of the base prices`);
  }
  return Object.keys(out).length ? out : undefined;
}

function toolPrices(entry: Entry): Partial<Record<HostedTool, bigint>> | undefined {
  const tools: Partial<Record<HostedTool, bigint>> = {};
  const search = entry.search_context_cost_per_query;
  if (search !== undefined) {
    if (typeof search !== "object" || search === null) throw new EntryProblem(`search_context_cost_per_query must be an object, not ${JSON.stringify(search)}`);
    // The medium context size is the default a request gets.
    const perQuery = exactNano(search as Entry, "search_context_size_medium", 3, "per 1k searches");
    if (perQuery) tools.web_search = perQuery;
  }
  const fileSearch = exactNano(entry, "file_search_cost_per_1k_calls", 0, "per 1k calls");
  if (fileSearch) tools.file_search = fileSearch;
  const codeInterpreter = exactNano(entry, "code_interpreter_cost_per_session", 3, "per 1k sessions");
  if (codeInterpreter) tools.code_interpreter = codeInterpreter;
  return hostedTools.some((t) => tools[t] !== undefined) ? tools : undefined;
}

/** Flat prices, left out (with a note) where the model is priced by tokens already. */
function unitPrices(entry: Entry, byTokens: boolean, notes: string[]): ListedPrice {
  const price: Record<string, bigint> = {};
  const seconds = (exactNano(entry, "input_cost_per_second", 0, "per second") ?? 0n) + (exactNano(entry, "output_cost_per_second", 0, "per second") ?? 0n);
  const chars = (exactNano(entry, "input_cost_per_character", 3, "per 1k characters") ?? 0n) + (exactNano(entry, "output_cost_per_character", 3, "per 1k characters") ?? 0n);
  const image = exactNano(entry, "output_cost_per_image", 0, "per image") ?? 0n;
  const request = exactNano(entry, "input_cost_per_request", 0, "per request") ?? 0n;
  for (const [field, nano, key] of [["perSecond", seconds, "per-second"], ["per1kChars", chars, "per-character"], ["perImage", image, "per-image"]] as const) {
    if (nano === 0n) continue;
    if (byTokens) notes.push(`${key} price left out: the model is priced by tokens`);
    else price[field] = nano;
  }
  if (request > 0n) price.perRequest = request;
  if (entry.input_cost_per_image !== undefined) notes.push("input_cost_per_image left out: the gateway has no price per input image");
  return price;
}

/** The keys of an entry that look like prices but that nothing here reads. */
function unreadCosts(entry: Entry): string[] {
  const read = new Set(["search_context_cost_per_query", "file_search_cost_per_1k_calls", "code_interpreter_cost_per_session",
    "input_cost_per_second", "output_cost_per_second", "input_cost_per_character", "output_cost_per_character",
    "output_cost_per_image", "input_cost_per_request", "input_cost_per_image"]);
  return Object.keys(entry).filter((key) => {
    if (read.has(key) || quietKeys.test(key) || tokenKeys[key]) return false;
    const tier = tierSuffix.exec(key) ?? serviceTierSuffix.exec(key);
    if (tier && tokenKeys[tier[1]]) return false;
    return /cost/.test(key);
  });
}

function priceOf(entry: Entry, notes: string[]): ListedPrice {
  const { base, tiers, serviceTiers } = tokenPrices(entry);
  const byTokens = (base.input ?? 0n) > 0n || (base.output ?? 0n) > 0n;
  const listedTiers: ListedTier[] = [...tiers].sort((a, b) => b[0] - a[0]).map(([aboveInputTokens, price]) => ({ aboveInputTokens, price }));
  const serviceTiersPpm = serviceMultipliers(base, serviceTiers, notes);
  const toolCallsPer1k = toolPrices(entry);
  const unread = unreadCosts(entry);
  if (unread.length) notes.push(`left out (no gateway price key): ${unread.join(", ")}`);
  return {
    ...base,
    ...unitPrices(entry, byTokens, notes),
    ...(toolCallsPer1k && { toolCallsPer1k }),
    ...(listedTiers.length && { tiers: listedTiers }),
    ...(serviceTiersPpm && { serviceTiersPpm }),
  };
}

function endpointOf(entry: Entry): Endpoint | undefined {
  return typeof entry.mode === "string" ? endpointOfMode[entry.mode] : undefined;
}

/** Reads a parsed LiteLLM file (its top-level object). */
export function readLitellm(data: Readonly<Record<string, unknown>>): PriceList {
  const models: ListedModel[] = [];
  const refused: RefusedEntry[] = [];
  const variants = new Map<string, Variants>();
  for (const [key, value] of Object.entries(data)) {
    // The file's first entry documents the fields; it is no model.
    if (key === "sample_spec") continue;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      refused.push({ entry: key, name: key, reason: `must be an object, not ${JSON.stringify(value)}` });
      continue;
    }
    const entry = value as Entry;
    const provider = typeof entry.litellm_provider === "string" ? entry.litellm_provider : undefined;
    try {
      const variant = variantKey.exec(key);
      if (variant) {
        readVariant(key, variant, entry, variants);
        continue;
      }
      const notes: string[] = [];
      const maxOutput = entry.max_output_tokens;
      models.push({
        entry: key,
        name: nameOf(key, provider),
        ...(provider && { provider }),
        ...(endpointOf(entry) && { endpoint: endpointOf(entry) }),
        ...(typeof entry.mode === "string" && { kind: `mode ${entry.mode}` }),
        ...(typeof maxOutput === "number" && Number.isSafeInteger(maxOutput) && maxOutput > 0 && { maxOutputTokens: maxOutput }),
        price: priceOf(entry, notes),
        notes,
      });
    } catch (error) {
      if (!(error instanceof EntryProblem)) throw error;
      refused.push({ entry: key, name: nameOf(key, provider), ...(provider && { provider }), reason: error.message });
    }
  }
  return { format: "litellm", models: attachVariants(models, variants), refused, covers: litellmCovers };
}

/** Every price key: LiteLLM can state each. */
const litellmCovers: ReadonlySet<string> = new Set([
  "input", "output", "cache_read_ratio", "cache_write_ratio", "cache_write_1h_ratio", "cache_read", "cache_write",
  "cache_write_1h", "audio_cache_read", "audio_input", "audio_output", "image_input", "image_output", "reasoning",
  "per_request", "per_second", "per_image", "per_1k_chars", "tool_calls", "tiers", "service_tiers", "variants",
]);
