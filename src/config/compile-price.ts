// Compiles a model's `price` (or a channel's own price for a model) into exact integers:
// amounts in nano-units, ratios in parts per million; tiers and variants as whole prices,
// the base's amounts filled in where they say nothing.

import type { HostedTool, Price, PriceTier, PriceVariant } from "../runtime/types.js";
import { toNano, toPpm } from "./money.js";
import type { RawPrice, RawPriceAmounts } from "./raw.js";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Each amount key of gateway.yaml and the Price field it compiles to. */
const amountFields = {
  input: "inputPer1M", output: "outputPer1M", cache_read: "cacheReadPer1M", cache_write: "cacheWritePer1M",
  cache_write_1h: "cacheWrite1hPer1M", audio_input: "audioInputPer1M", audio_cache_read: "audioCacheReadPer1M",
  audio_output: "audioOutputPer1M", image_input: "imageInputPer1M", image_output: "imageOutputPer1M",
  reasoning: "reasoningPer1M", per_request: "perRequest", per_second: "perSecond", per_image: "perImage",
  per_1k_chars: "per1kChars",
} as const satisfies Partial<Record<keyof RawPriceAmounts, keyof Price>>;

/** Each ratio key and its Price field. */
const ratioFields = {
  cache_read_ratio: "cacheReadRatioPpm", cache_write_ratio: "cacheWriteRatioPpm", cache_write_1h_ratio: "cacheWrite1hRatioPpm",
} as const satisfies Partial<Record<keyof RawPriceAmounts, keyof Price>>;

/** The amounts alone (no tiers, variants or service tiers), compiled. */
function compileAmounts(raw: RawPriceAmounts): Mutable<Price> {
  const price: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(amountFields)) {
    const value = raw[key as keyof typeof amountFields];
    if (value !== undefined) price[field] = toNano(value);
  }
  for (const [key, field] of Object.entries(ratioFields)) {
    const value = raw[key as keyof typeof ratioFields];
    if (value !== undefined) price[field] = toPpm(value);
  }
  if (raw.tool_calls) {
    const perTool: Partial<Record<HostedTool, bigint>> = {};
    for (const [tool, amount] of Object.entries(raw.tool_calls) as [HostedTool, number][]) perTool[tool] = toNano(amount);
    price.toolCallsPer1k = perTool;
  }
  return price as Mutable<Price>;
}

/** The amounts a price's base holds (what a tier or a variant inherits). */
function baseAmounts(raw: RawPrice): RawPriceAmounts {
  const { tiers: _tiers, variants: _variants, service_tiers: _serviceTiers, ...amounts } = raw;
  return amounts;
}

function compileServiceTiers(raw: Record<string, number> | undefined): Record<string, bigint> | undefined {
  if (!raw) return undefined;
  const out: Record<string, bigint> = Object.create(null);
  for (const [name, ratio] of Object.entries(raw)) out[name] = toPpm(ratio);
  return out;
}

/** Compiles a price; throws (as money.ts does) on an amount past its decimal places. */
export function compilePrice(raw: RawPrice = {}): Price {
  const base = baseAmounts(raw);
  const price = compileAmounts(base);
  const serviceTiers = compileServiceTiers(raw.service_tiers);
  if (serviceTiers) price.serviceTiersPpm = serviceTiers;
  if (raw.tiers) {
    const tiers: PriceTier[] = raw.tiers.map(({ above_input_tokens, ...amounts }) => {
      const tier = compileAmounts({ ...base, ...amounts });
      if (serviceTiers) tier.serviceTiersPpm = serviceTiers;
      return { aboveInputTokens: above_input_tokens, price: tier };
    });
    price.tiers = tiers.sort((a, b) => b.aboveInputTokens - a.aboveInputTokens);
  }
  if (raw.variants) {
    price.variants = raw.variants.map(({ when, ...amounts }): PriceVariant => {
      const variant = compileAmounts({ ...base, ...amounts });
      if (serviceTiers) variant.serviceTiersPpm = serviceTiers;
      return { when: { ...when }, price: variant };
    });
  }
  return price;
}
