// Pure, exact cost arithmetic. A usage is split into priced components (components.ts),
// each priced at the model's price for it (or its closest base price), as lines of a
// breakdown; the lines are summed in a scaled integer domain (nano-units × 10^24) and
// rounded once, half up, so no float ever touches money and the total is reproduced from
// the lines alone (breakdown.ts).

import { inputSize, tokenComponents, tokenQuantities, type TokenComponent } from "./components.js";
import type { Units, Usage } from "../protocols/usage.js";
import { hostedTools, type ChannelCost, type Price, type PriceTier, type PriceVariant } from "../runtime/types.js";

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
  /** Σ of the lines before any multiplier, × 10^18 nano: the same price at another
   * multiplier (the operator's) is computed from it without pricing again. */
  readonly scaledSum: bigint;
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

function femto(n: bigint | undefined): bigint | undefined {
  return n === undefined ? undefined : n * FEMTO_PER_NANO;
}

function ratioOf(base: bigint, ratio: bigint | undefined): bigint {
  return ratio === undefined ? base : (base * ratio) / MILLION;
}

/** A token component's price in femto per 1M tokens: its own, else its closest base price.
 * A cache price of its own beats its ratio × input; cached audio is audio input × the
 * cache-read ratio; 1-hour writes fall back to 5-minute writes; reasoning to output. Only
 * components a usage has are asked for (most answers have two or three). */
function rateOf(price: Price, component: TokenComponent): bigint {
  const input = price.inputPer1M ?? 0n;
  switch (component) {
    case "input": return input * FEMTO_PER_NANO;
    case "output": return (price.outputPer1M ?? 0n) * FEMTO_PER_NANO;
    case "cache_read": return femto(price.cacheReadPer1M) ?? input * (price.cacheReadRatioPpm ?? MILLION);
    case "cache_write": return femto(price.cacheWritePer1M) ?? input * (price.cacheWriteRatioPpm ?? MILLION);
    case "cache_write_1h":
      return femto(price.cacheWrite1hPer1M)
        ?? (price.cacheWrite1hRatioPpm !== undefined ? input * price.cacheWrite1hRatioPpm : rateOf(price, "cache_write"));
    case "audio_input": return (price.audioInputPer1M ?? input) * FEMTO_PER_NANO;
    case "audio_cache_read":
      return femto(price.audioCacheReadPer1M) ?? ratioOf((price.audioInputPer1M ?? input) * FEMTO_PER_NANO, price.cacheReadRatioPpm);
    case "image_input": return (price.imageInputPer1M ?? input) * FEMTO_PER_NANO;
    case "reasoning": return (price.reasoningPer1M ?? price.outputPer1M ?? 0n) * FEMTO_PER_NANO;
    case "audio_output": return (price.audioOutputPer1M ?? price.outputPer1M ?? 0n) * FEMTO_PER_NANO;
    case "image_output": return (price.imageOutputPer1M ?? price.outputPer1M ?? 0n) * FEMTO_PER_NANO;
  }
}

const INPUT_PARTS = ["input", "audio_input", "image_input"] as const;
const OUTPUT_PARTS = ["output", "reasoning", "audio_output", "image_output"] as const;

/** The dearest of `components` at a price (the first among equals). */
function dearest<C extends TokenComponent>(price: Price, components: readonly C[]): C {
  let best = components[0];
  let rate = rateOf(price, best);
  for (const c of components) {
    const r = rateOf(price, c);
    if (r > rate) [best, rate] = [c, r];
  }
  return best;
}

/**
 * A reservation's worst case: a usage of text input and output (cache parts none) with its
 * input moved to the dearest input component and its output to the dearest output component
 * the price names (audio or image where those cost more than text, reasoning where it costs
 * more than output), so the pre-deduction covers the answer whatever it turns out to hold.
 */
export function worstCase(usage: Usage, price: Price): Usage {
  // Most prices name no part of their own: then text is the worst case, with nothing to compare.
  if (price.audioInputPer1M === undefined && price.imageInputPer1M === undefined && price.reasoningPer1M === undefined
    && price.audioOutputPer1M === undefined && price.imageOutputPer1M === undefined) return usage;
  const input = dearest(price, INPUT_PARTS);
  const output = dearest(price, OUTPUT_PARTS);
  if (input === "input" && output === "output") return usage;
  const worst: Usage = { ...usage };
  if (input === "audio_input") worst.audioInput = usage.input;
  if (input === "image_input") worst.imageInput = usage.input;
  if (output === "reasoning") worst.reasoning = usage.output;
  if (output === "audio_output") worst.audioOutput = usage.output;
  if (output === "image_output") worst.imageOutput = usage.output;
  return worst;
}

/** Every token component's rate (femto per 1M tokens) and whether it is the price's own,
 * as priceUsage bills them: what `gateway check --prices` shows. */
export function tokenRates(price: Price): Record<TokenComponent, readonly [bigint, boolean]> {
  const rates = {} as Record<TokenComponent, readonly [bigint, boolean]>;
  for (const component of tokenComponents) rates[component] = [rateOf(price, component), ownRate(price, component)];
  return rates;
}

/** Whether the price names a component itself (else it is billed at a base price, and
 * warned). Reasoning at output is the rule, not a guess. */
function ownRate(price: Price, component: TokenComponent): boolean {
  switch (component) {
    case "cache_write_1h": return price.cacheWrite1hPer1M !== undefined || price.cacheWrite1hRatioPpm !== undefined;
    case "audio_input": return price.audioInputPer1M !== undefined;
    case "audio_cache_read": return price.audioInputPer1M !== undefined || price.audioCacheReadPer1M !== undefined;
    case "image_input": return price.imageInputPer1M !== undefined;
    case "audio_output": return price.audioOutputPer1M !== undefined;
    case "image_output": return price.imageOutputPer1M !== undefined;
    default: return true;
  }
}

/** The variant a request's selectors choose, if any: the first whose `when` all match. */
function variantOf(price: Price, asked: Readonly<Record<string, string>> | undefined): PriceVariant | undefined {
  if (!price.variants || !asked) return undefined;
  for (const v of price.variants) {
    let all = true;
    for (const k in v.when) if (asked[k] !== v.when[k]) all = false;
    if (all) return v;
  }
  return undefined;
}

/** The tier a request's input reaches, if any (tiers are kept highest threshold first). */
function tierOf(price: Price, usage: Usage): PriceTier | undefined {
  if (!price.tiers) return undefined;
  const size = inputSize(usage);
  for (const tier of price.tiers) if (size > tier.aboveInputTokens) return tier;
  return undefined;
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

/** Σ quantity × femto × (10^6 / per), term by term, keeping the lines when asked. */
class Sum {
  total = 0n;
  constructor(readonly lines: CostLine[] | undefined) {}

  add(component: string, quantity: number, priceFemto: bigint, per: Per): void {
    if (quantity <= 0 || priceFemto === 0n) return;
    const q = Math.floor(quantity);
    this.total += BigInt(q) * priceFemto * (per === 1_000_000 ? 1n : per === 1000 ? 1000n : MILLION);
    this.lines?.push({ component, quantity: q, priceFemto, per });
  }
}

/** Σ quantity × femto × (10^6 / per) of a usage at a price: the cost before multipliers, ×
 * 10^18 nano. Each term is pushed to `lines` when given; components billed at a base price
 * go to `fallbacks` when given. */
function scaledSum(usage: Usage, price: Price, units: Units, lines?: CostLine[], fallbacks?: TokenComponent[]): bigint {
  const sum = new Sum(lines);
  const quantities = tokenQuantities(usage);
  const warn = fallbacks !== undefined && tokenPriced(price);
  for (const component of tokenComponents) {
    const quantity = quantities[component];
    if (quantity === 0) continue;
    if (warn && !ownRate(price, component)) fallbacks.push(component);
    sum.add(component, quantity, rateOf(price, component), 1_000_000);
  }
  if (price.perRequest) sum.add("requests", units.requests ?? 1, price.perRequest * FEMTO_PER_NANO, 1);
  if (price.perImage) sum.add("images", units.images ?? 0, price.perImage * FEMTO_PER_NANO, 1);
  if (price.perSecond) sum.add("milliseconds", units.milliseconds ?? 0, price.perSecond * FEMTO_PER_NANO, 1000);
  if (price.per1kChars) sum.add("characters", units.characters ?? 0, price.per1kChars * FEMTO_PER_NANO, 1000);
  const calls = usage.toolCalls;
  if (calls && price.toolCallsPer1k) {
    for (const tool of hostedTools) {
      const per1k = price.toolCallsPer1k[tool];
      if (per1k && calls[tool]) sum.add(tool, calls[tool]!, per1k * FEMTO_PER_NANO, 1000);
    }
  }
  return sum.total;
}

/**
 * A request's cost in nano-units with its breakdown: token usage by component at the
 * model's price for each (or the closest base price: cached audio at audio input × the
 * cache-read ratio, 1-hour writes at the 5-minute price, audio and image at text input or
 * output, reasoning at output), plus any per-request, per-image, per-second or
 * per-1k-character price, and hosted tool calls at their price per 1k calls (a tool the
 * list does not price is free), all × the service tier's multiplier × the group's. The
 * price is the request's variant (by what it asked) if one matches, then the tier its
 * input reaches.
 */
export function priceUsage(usage: Usage, listPrice: Price, multiplierPpm: bigint, units: Units = {}): Priced {
  const variant = variantOf(listPrice, units.variant);
  const chosen = variant?.price ?? listPrice;
  const tier = tierOf(chosen, usage);
  const price = tier?.price ?? chosen;
  const serviceTier = serviceTierOf(price, usage, units);
  const lines: CostLine[] = [];
  const fallbacks: TokenComponent[] = [];
  const sum = scaledSum(usage, price, units, lines, fallbacks);
  return {
    costNano: roundHalfUp(sum * multiplierPpm * (serviceTier?.ppm ?? MILLION), SCALE),
    lines, multiplierPpm, scaledSum: sum,
    serviceTier, tierAbove: tier?.aboveInputTokens, variant: variant?.when,
    fallbacks: fallbacks.length > 0 ? fallbacks : undefined,
  };
}

/** Cost in nano-units of a usage at a price × a multiplier (priceUsage's total, without
 * its breakdown). */
export function costOf(usage: Usage, listPrice: Price, multiplierPpm: bigint, units: Units = {}): bigint {
  const chosen = variantOf(listPrice, units.variant)?.price ?? listPrice;
  const price = tierOf(chosen, usage)?.price ?? chosen;
  const tierPpm = serviceTierOf(price, usage, units)?.ppm ?? MILLION;
  return roundHalfUp(scaledSum(usage, price, units) * multiplierPpm * tierPpm, SCALE);
}

/** What a request costs the operator on a channel: the channel's own price for the model
 * (else the list price) × the channel's cost multiplier × the service tier's; no group
 * multiplier. `priced` (the request priced at the list price) spares pricing it again when
 * the channel has no price of its own. */
export function operatorCost(usage: Usage, listPrice: Price, model: string, cost: ChannelCost | undefined, units: Units = {}, priced?: Priced): bigint {
  const own = cost?.prices?.get(model);
  const multiplierPpm = cost?.multiplierPpm ?? MILLION;
  if (own === undefined && priced) return roundHalfUp(priced.scaledSum * multiplierPpm * (priced.serviceTier?.ppm ?? MILLION), SCALE);
  return costOf(usage, own ?? listPrice, multiplierPpm, units);
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

/** 10^0 … 10^33, the scales formatScaled is asked for most. */
const POWERS_OF_TEN: readonly bigint[] = Array.from({ length: 34 }, (_, i) => 10n ** BigInt(i));

/** An integer in units of 10^-decimals as an exact decimal string, trailing zeros cut:
 * formatScaled(1500n, 6) → "0.0015". */
export function formatScaled(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const unit = decimals < POWERS_OF_TEN.length ? POWERS_OF_TEN[decimals] : 10n ** BigInt(decimals);
  const int = (abs / unit).toString();
  const rest = abs % unit;
  const sign = negative ? "-" : "";
  if (rest === 0n) return sign + int;
  let frac = rest.toString().padStart(decimals, "0");
  let end = frac.length;
  while (frac.charCodeAt(end - 1) === 48) end--; // trailing "0"s
  frac = frac.slice(0, end);
  return `${sign}${int}.${frac}`;
}
