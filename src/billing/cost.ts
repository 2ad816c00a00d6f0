// Pure, exact cost arithmetic. A usage is split into priced components (components.ts),
// each priced at the model's price for it (or its closest base price), as lines of a
// breakdown; the lines are summed in a scaled integer domain (nano-units × 10^24) and
// rounded once, half up, so no float ever touches money and the total is reproduced from
// the lines alone (breakdown.ts).

import { inputSize, tokenComponents, tokenQuantities, type TokenComponent } from "./components.js";
import type { Units, Usage } from "../protocols/usage.js";
import { hostedTools, type ChannelCost, type Price } from "../runtime/types.js";

const MILLION = 1_000_000n;
/** Line prices are in femto-units (10^-15 of the currency): nano × 10^6, so that a ratio
 * (ppm) × a nano price stays an integer. */
const FEMTO_PER_NANO = MILLION;
/** Σ quantity × femto × (10^6 / per) × multiplier ppm × service-tier ppm, over this, is nano. */
const SCALE = MILLION ** 4n;

/** What a line's price is per: 1M tokens, 1k calls, seconds (1k ms) or characters, or one unit. */
export type Per = 1_000_000 | 1000 | 1;

/** One priced component of a request. */
export interface CostLine {
  /** A token component (components.ts), a hosted tool's name, or requests | images |
   * milliseconds | characters. */
  readonly component: string;
  readonly quantity: number;
  /** Femto-units (10^-15 of the currency) per `per` of the quantity. */
  readonly priceFemto: bigint;
  readonly per: Per;
}

/** A request's cost and how it was reached. */
export interface Priced {
  readonly costNano: bigint;
  /** Every component with a quantity and a price, in a fixed order. */
  readonly lines: readonly CostLine[];
  /** The group multiplier (ppm). */
  readonly multiplierPpm: bigint;
  /** The service tier that changed the price, and its multiplier (ppm). */
  readonly serviceTier?: { readonly name: string; readonly ppm: bigint };
  /** The input threshold of the tier the request's input reached. */
  readonly tierAbove?: number;
  /** The `when` of the variant the request chose. */
  readonly variant?: Readonly<Record<string, string>>;
  /** Components the usage has that the price does not name, billed at their closest base
   * price (a token-priced model only). */
  readonly fallbacks?: readonly TokenComponent[];
}

/** Whether a model is priced by tokens (then every whole answer must report its usage). */
export function tokenPriced(price: Price): boolean {
  return (price.inputPer1M ?? 0n) > 0n || (price.outputPer1M ?? 0n) > 0n;
}

/** Whether a model is priced by quantities an answer may report (seconds, images,
 * characters): only then does a guess of them make its charge an estimate. */
export function unitPriced(price: Price): boolean {
  return price.perSecond !== undefined || price.perImage !== undefined || price.per1kChars !== undefined;
}

/** Each token component's price in femto per 1M tokens, and whether it is its own (not a
 * fallback to a base price). A cache price of its own beats its ratio × input; reasoning
 * falls back to output by rule, not as a guess. Exported for `gateway check --prices`,
 * which shows the rates priceUsage bills. */
export function tokenRates(price: Price): Record<TokenComponent, readonly [bigint, boolean]> {
  const femto = (n: bigint | undefined): bigint | undefined => (n === undefined ? undefined : n * FEMTO_PER_NANO);
  const input = femto(price.inputPer1M) ?? 0n;
  const output = femto(price.outputPer1M) ?? 0n;
  const readRatio = price.cacheReadRatioPpm ?? MILLION;
  const writeRatio = price.cacheWriteRatioPpm ?? MILLION;
  const ratioOf = (base: bigint, ratio: bigint): bigint => (base * ratio) / MILLION;
  const cacheWrite = femto(price.cacheWritePer1M) ?? ratioOf(input, writeRatio);
  const ownWrite1h = price.cacheWrite1hPer1M !== undefined || price.cacheWrite1hRatioPpm !== undefined;
  const audioIn = femto(price.audioInputPer1M);
  const own = (n: bigint | undefined, fallback: bigint): readonly [bigint, boolean] =>
    n !== undefined ? [n * FEMTO_PER_NANO, true] : [fallback, false];
  return {
    input: [input, true],
    cache_read: [femto(price.cacheReadPer1M) ?? ratioOf(input, readRatio), true],
    cache_write: [cacheWrite, true],
    cache_write_1h: [
      femto(price.cacheWrite1hPer1M) ?? (price.cacheWrite1hRatioPpm !== undefined ? ratioOf(input, price.cacheWrite1hRatioPpm) : cacheWrite),
      ownWrite1h,
    ],
    audio_input: [audioIn ?? input, audioIn !== undefined],
    audio_cache_read: [femto(price.audioCacheReadPer1M) ?? ratioOf(audioIn ?? input, readRatio), audioIn !== undefined || price.audioCacheReadPer1M !== undefined],
    image_input: own(price.imageInputPer1M, input),
    output: [output, true],
    reasoning: [femto(price.reasoningPer1M) ?? output, true],
    audio_output: own(price.audioOutputPer1M, output),
    image_output: own(price.imageOutputPer1M, output),
  };
}

/** The price that applies to a request: its variant (by what it asked), then the tier its
 * input reaches. */
function effectivePrice(price: Price, usage: Usage, units: Units): { price: Price; tierAbove?: number; variant?: Readonly<Record<string, string>> } {
  let chosen = price;
  let variant: Readonly<Record<string, string>> | undefined;
  const asked = units.variant;
  if (price.variants && asked) {
    for (const v of price.variants) {
      if (Object.entries(v.when).every(([k, want]) => asked[k] === want)) {
        chosen = v.price;
        variant = v.when;
        break;
      }
    }
  }
  if (chosen.tiers) {
    const size = inputSize(usage);
    for (const tier of chosen.tiers) {
      if (size > tier.aboveInputTokens) return { price: tier.price, tierAbove: tier.aboveInputTokens, variant };
    }
  }
  return { price: chosen, variant };
}

/** The service tier that prices the request: the one the answer names, else the one the
 * request asked; only a tier the price list names changes anything. */
function serviceTierOf(price: Price, usage: Usage, units: Units): { name: string; ppm: bigint } | undefined {
  const tiers = price.serviceTiersPpm;
  if (!tiers) return undefined;
  const name = usage.serviceTier ?? units.variant?.service_tier;
  const ppm = name !== undefined && Object.hasOwn(tiers, name) ? tiers[name] : undefined;
  return ppm === undefined ? undefined : { name: name!, ppm };
}

const big = (n: number | undefined): bigint => BigInt(Math.max(0, Math.floor(n ?? 0)));

/**
 * A request's cost in nano-units with its breakdown: token usage by component at the
 * model's price for each (or the closest base price: cached audio at audio input × the
 * cache-read ratio, 1-hour writes at the 5-minute ratio, audio and image at text input or
 * output, reasoning at output), plus any per-request, per-image, per-second or
 * per-1k-character price, and hosted tool calls at their price per 1k calls (a tool the
 * list does not price is free), all × the service tier's multiplier × the group's.
 */
export function priceUsage(usage: Usage, listPrice: Price, multiplierPpm: bigint, units: Units = {}): Priced {
  const { price, tierAbove, variant } = effectivePrice(listPrice, usage, units);
  const serviceTier = serviceTierOf(price, usage, units);
  const lines: CostLine[] = [];
  let sum = 0n;
  const add = (component: string, quantity: number, priceFemto: bigint, per: Per): void => {
    const q = big(quantity);
    if (q === 0n || priceFemto === 0n) return;
    lines.push({ component, quantity: Number(q), priceFemto, per });
    sum += q * priceFemto * (MILLION / BigInt(per));
  };
  const quantities = tokenQuantities(usage);
  const rates = tokenRates(price);
  const priced = tokenPriced(price);
  let fallbacks: TokenComponent[] | undefined;
  for (const component of tokenComponents) {
    const quantity = quantities[component];
    if (quantity === 0) continue;
    const [rate, own] = rates[component];
    if (!own && priced) (fallbacks ??= []).push(component);
    add(component, quantity, rate, 1_000_000);
  }
  if (price.perRequest) add("requests", units.requests ?? 1, price.perRequest * FEMTO_PER_NANO, 1);
  if (price.perImage) add("images", units.images ?? 0, price.perImage * FEMTO_PER_NANO, 1);
  if (price.perSecond) add("milliseconds", units.milliseconds ?? 0, price.perSecond * FEMTO_PER_NANO, 1000);
  if (price.per1kChars) add("characters", units.characters ?? 0, price.per1kChars * FEMTO_PER_NANO, 1000);
  const calls = usage.toolCalls;
  if (calls && price.toolCallsPer1k) {
    for (const tool of hostedTools) {
      const per1k = price.toolCallsPer1k[tool];
      if (per1k && calls[tool]) add(tool, calls[tool]!, per1k * FEMTO_PER_NANO, 1000);
    }
  }
  const costNano = roundHalfUp(sum * multiplierPpm * (serviceTier?.ppm ?? MILLION), SCALE);
  return {
    costNano, lines, multiplierPpm,
    ...(serviceTier && { serviceTier }),
    ...(tierAbove !== undefined && { tierAbove }),
    ...(variant && { variant }),
    ...(fallbacks && { fallbacks }),
  };
}

/** Cost in nano-units of a usage at a price × a multiplier (priceUsage's total). */
export function costOf(usage: Usage, price: Price, multiplierPpm: bigint, units: Units = {}): bigint {
  return priceUsage(usage, price, multiplierPpm, units).costNano;
}

/** What a request costs the operator on a channel: the channel's own price for the model
 * (else the list price) × the channel's cost multiplier; no group multiplier. */
export function operatorCost(usage: Usage, listPrice: Price, model: string, cost: ChannelCost | undefined, units: Units = {}): bigint {
  const price = cost?.prices?.get(model) ?? listPrice;
  return costOf(usage, price, cost?.multiplierPpm ?? MILLION, units);
}

/** The cost used to rank channels for `strategy: cheapest`: 1M input and 1M output tokens,
 * one request, image, second and 1k characters, at the channel's cost for the model. */
export function rankingCost(listPrice: Price, model: string, cost: ChannelCost | undefined): bigint {
  const usage: Usage = { input: 1_000_000, cacheRead: 0, cacheWrite: 0, output: 1_000_000, reasoning: 0 };
  return operatorCost(usage, listPrice, model, cost, { requests: 1, images: 1, milliseconds: 1000, characters: 1000 });
}

function roundHalfUp(value: bigint, divisor: bigint): bigint {
  return (value + divisor / 2n) / divisor;
}

/** Nano-units as an exact decimal string of the currency: 1500000n → "0.0015". */
export function formatNano(nano: bigint): string {
  return formatScaled(nano, 9);
}

/** An integer in units of 10^-decimals as an exact decimal string, trailing zeros cut:
 * formatScaled(1500n, 6) → "0.0015". */
export function formatScaled(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const unit = 10n ** BigInt(decimals);
  const int = abs / unit;
  const frac = (abs % unit).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${int}${frac ? "." + frac : ""}`;
}
