// Reads models.dev's api.json: providers → models → cost per 1M tokens (input, output,
// cache_read, cache_write, input_audio, output_audio, reasoning, per_minute), with prices
// above 200K input tokens as `context_over_200k` (older files) or `tiers` of a context size.

import type { Endpoint } from "../runtime/types.js";
import { decimalOf, decimalText, divideNano, nanoOf, type Decimal } from "./amount.js";
import type { ListedModel, ListedPrice, ListedTier, PriceList, RefusedEntry, TokenField } from "./listed.js";

/** models.dev's cost keys → the component they price. */
const costKeys: Readonly<Record<string, TokenField>> = {
  input: "input",
  output: "output",
  cache_read: "cacheRead",
  cache_write: "cacheWrite",
  input_audio: "audioInput",
  output_audio: "audioOutput",
  reasoning: "reasoning",
};

class EntryProblem extends Error {}

type Json = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function exactNano(cost: Json, key: string, where: string): bigint | undefined {
  const value = cost[key];
  if (value === undefined || value === null) return undefined;
  const d: Decimal | undefined = typeof value === "number" ? decimalOf(value) : undefined;
  if (!d) throw new EntryProblem(`${where}${key} must be a number ≥ 0, not ${JSON.stringify(value)}`);
  const nano = nanoOf(d);
  if (nano === undefined) throw new EntryProblem(`${where}${key} ${decimalText(d)} has more than 9 decimal places, not exact`);
  return nano;
}

/** The token prices of one cost object (the model's, or one tier's). */
function tokenPrices(cost: Json, where: string): ListedPrice {
  const price: Partial<Record<TokenField, bigint>> = {};
  for (const [key, field] of Object.entries(costKeys)) {
    const nano = exactNano(cost, key, where);
    if (nano !== undefined) price[field] = nano;
  }
  return price;
}

/** `context_over_200k` and `tiers: [{ tier: { type: context, size }, … }]`, highest first. */
function tiersOf(cost: Json, notes: string[]): ListedTier[] {
  const tiers: ListedTier[] = [];
  if (isObject(cost.context_over_200k)) {
    tiers.push({ aboveInputTokens: 200_000, price: tokenPrices(cost.context_over_200k, "cost.context_over_200k.") });
  }
  if (Array.isArray(cost.tiers)) {
    cost.tiers.forEach((tier: unknown, i) => {
      const where = `cost.tiers[${i}].`;
      if (!isObject(tier) || !isObject(tier.tier)) throw new EntryProblem(`${where.slice(0, -1)} must be an object with a tier`);
      const { type = "context", size } = tier.tier as { type?: unknown; size?: unknown };
      if (type !== "context") return void notes.push(`${where.slice(0, -1)} left out: tier type ${JSON.stringify(type)} is not a context size`);
      if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) throw new EntryProblem(`${where}tier.size must be a whole number, not ${JSON.stringify(size)}`);
      if (!tiers.some((t) => t.aboveInputTokens === size)) tiers.push({ aboveInputTokens: size, price: tokenPrices(tier, where) });
    });
  }
  return tiers.sort((a, b) => b.aboveInputTokens - a.aboveInputTokens);
}

function priceOf(cost: Json, notes: string[]): ListedPrice {
  const price: Record<string, unknown> = { ...tokenPrices(cost, "cost.") };
  const perMinute = exactNano(cost, "per_minute", "cost.");
  if (perMinute) {
    const perSecond = divideNano(perMinute, 60n);
    if (perSecond === undefined) notes.push(`cost.per_minute left out: ÷ 60 is not exact at 9 decimal places`);
    else price.perSecond = perSecond;
  }
  const tiers = tiersOf(cost, notes);
  if (tiers.length) price.tiers = tiers;
  const unread = Object.keys(cost).filter((k) => !costKeys[k] && !["per_minute", "context_over_200k", "tiers"].includes(k));
  if (unread.length) notes.push(`left out (no gateway price key): cost.${unread.join(", cost.")}`);
  return price as ListedPrice;
}

/** The endpoint kind of a model from what it reads and writes (api.json names none). */
function endpointOf(id: string, model: Json): Endpoint {
  const modalities = isObject(model.modalities) ? model.modalities : {};
  const input = Array.isArray(modalities.input) ? modalities.input : [];
  const output = Array.isArray(modalities.output) ? modalities.output : [];
  const family = typeof model.family === "string" ? model.family : "";
  if (/embed/.test(id) || /embed/.test(family)) return "embeddings";
  if (output.includes("image") && !output.includes("text")) return "image";
  if (output.includes("video") && !output.includes("text")) return "video";
  if (output.includes("audio") && !output.includes("text")) return "speech";
  if (input.length === 1 && input[0] === "audio") return "transcription";
  return "chat";
}

function readModel(provider: string, id: string, model: Json): ListedModel {
  const notes: string[] = [];
  const limit = isObject(model.limit) ? model.limit : {};
  const cost = model.cost;
  if (cost !== undefined && !isObject(cost)) throw new EntryProblem(`cost must be an object, not ${JSON.stringify(cost)}`);
  if (isObject(model.experimental)) notes.push("experimental modes left out");
  const output = limit.output;
  return {
    entry: id,
    name: id,
    provider,
    endpoint: endpointOf(id, model),
    ...(typeof output === "number" && Number.isSafeInteger(output) && output > 0 && { maxOutputTokens: output }),
    price: cost ? priceOf(cost, notes) : {},
    notes: cost ? notes : [...notes, "the list gives no cost"],
  };
}

/** Reads a parsed api.json (its top-level object of providers). */
export function readModelsDev(data: Readonly<Record<string, unknown>>): PriceList {
  const models: ListedModel[] = [];
  const refused: RefusedEntry[] = [];
  for (const [providerId, provider] of Object.entries(data)) {
    if (!isObject(provider) || !isObject(provider.models)) {
      refused.push({ entry: providerId, name: providerId, reason: "must be a provider object with models" });
      continue;
    }
    for (const [id, model] of Object.entries(provider.models)) {
      try {
        if (!isObject(model)) throw new EntryProblem(`must be an object, not ${JSON.stringify(model)}`);
        models.push(readModel(providerId, id, model));
      } catch (error) {
        if (!(error instanceof EntryProblem)) throw error;
        refused.push({ entry: id, name: id, provider: providerId, reason: error.message });
      }
    }
  }
  return { format: "models.dev", models, refused, covers: modelsDevCovers };
}

/** The price keys models.dev can state; the rest of a gateway price is left as it is. */
const modelsDevCovers: ReadonlySet<string> = new Set([
  "input", "output", "cache_read_ratio", "cache_write_ratio", "cache_read", "cache_write", "audio_input", "audio_output",
  "reasoning", "per_second", "tiers",
]);
