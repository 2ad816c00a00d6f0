// A listed price → gateway.yaml's price keys. Cache prices become ratios of input where
// the ratio is an exact decimal of at most 6 places, else absolute prices; reasoning and
// cached audio are written only where the gateway's default (output; audio input × the
// cache-read ratio) would differ; a tier or variant names only what differs from the
// price it is filled in from. The rules mirror billing/cost.ts, which prices the result.

import { formatNano, formatScaled } from "../billing/cost.js";
import { hostedTools } from "../runtime/types.js";
import { ratioPpm } from "./amount.js";
import { tokenFields, type ListedPrice, type TokenField } from "./listed.js";

/** A number in gateway.yaml, kept as its exact decimal text. */
export class Num {
  constructor(readonly text: string) {}
}

/** A price (or part of one) as gateway.yaml writes it. */
export type PriceValue = Num | string | PriceObject | readonly PriceValue[];
export interface PriceObject {
  readonly [key: string]: PriceValue;
}

const MILLION = 1_000_000n;

/** Token price keys: absolute amounts (nano per 1M) and ratios (ppm), as one record. */
interface Fields {
  input?: bigint;
  output?: bigint;
  cache_read_ratio?: bigint;
  cache_read?: bigint;
  cache_write_ratio?: bigint;
  cache_write?: bigint;
  cache_write_1h_ratio?: bigint;
  cache_write_1h?: bigint;
  audio_input?: bigint;
  audio_cache_read?: bigint;
  audio_output?: bigint;
  image_input?: bigint;
  image_output?: bigint;
  reasoning?: bigint;
}
type FieldKey = keyof Fields;

const ratioKeys = new Set<FieldKey>(["cache_read_ratio", "cache_write_ratio", "cache_write_1h_ratio"]);

/** What each component costs (femto per 1M: nano × 10^6, exact) under the gateway's rules. */
function rates(f: Fields): Record<TokenField, bigint> {
  const input = (f.input ?? 0n) * MILLION;
  const output = (f.output ?? 0n) * MILLION;
  const own = (n: bigint | undefined, fallback: bigint): bigint => (n === undefined ? fallback : n * MILLION);
  const ratio = (base: bigint, ppm: bigint | undefined): bigint => (base * (ppm ?? MILLION)) / MILLION;
  const cacheWrite = own(f.cache_write, ratio(input, f.cache_write_ratio));
  const audioInput = own(f.audio_input, input);
  return {
    input,
    output,
    cacheRead: own(f.cache_read, ratio(input, f.cache_read_ratio)),
    cacheWrite,
    cacheWrite1h: own(f.cache_write_1h, f.cache_write_1h_ratio === undefined ? cacheWrite : ratio(input, f.cache_write_1h_ratio)),
    audioInput,
    audioCacheRead: own(f.audio_cache_read, ratio(audioInput, f.cache_read_ratio)),
    audioOutput: own(f.audio_output, output),
    imageInput: own(f.image_input, input),
    imageOutput: own(f.image_output, output),
    reasoning: own(f.reasoning, output),
  };
}

/** The keys that price a component: its own absolute key, and the ratio of input, if any. */
const keysOf: Record<TokenField, { abs: FieldKey; ratio?: FieldKey }> = {
  input: { abs: "input" },
  output: { abs: "output" },
  cacheRead: { abs: "cache_read", ratio: "cache_read_ratio" },
  cacheWrite: { abs: "cache_write", ratio: "cache_write_ratio" },
  cacheWrite1h: { abs: "cache_write_1h", ratio: "cache_write_1h_ratio" },
  audioInput: { abs: "audio_input" },
  audioCacheRead: { abs: "audio_cache_read" },
  audioOutput: { abs: "audio_output" },
  imageInput: { abs: "image_input" },
  imageOutput: { abs: "image_output" },
  reasoning: { abs: "reasoning" },
};

/** Components written whenever the list names them (their own price: no fallback warning). */
const alwaysWritten = new Set<TokenField>(["input", "output", "cacheRead", "cacheWrite", "cacheWrite1h", "audioInput", "audioOutput", "imageInput", "imageOutput"]);

/** Sets the key(s) for `field` at `nano` on `fields`: the ratio when exact and an absolute
 * price of the same component is not inherited (an absolute price beats a ratio). */
function setComponent(fields: Fields, inherited: Fields, field: TokenField, nano: bigint): void {
  const { abs, ratio } = keysOf[field];
  const merged = { ...inherited, ...fields };
  const ppm = ratio && merged[abs] === undefined ? ratioPpm(nano, merged.input ?? 0n) : undefined;
  if (ratio && ppm !== undefined) fields[ratio] = ppm;
  else fields[abs] = nano;
}

/**
 * The token keys for `wanted` (nano per 1M by component) on top of `inherited` (the keys a
 * tier or variant is filled in from): at the top level every listed component is written
 * (save reasoning and cached audio equal to their defaults), in a tier only what differs.
 */
function tokenKeys(wanted: Partial<Record<TokenField, bigint>>, inherited: Fields, minimal: boolean): Fields {
  const fields: Fields = {};
  for (const field of tokenFields) {
    const nano = wanted[field];
    if (nano === undefined) continue;
    const now = rates({ ...inherited, ...fields })[field];
    if (now === nano * MILLION && (minimal || !alwaysWritten.has(field))) continue;
    setComponent(fields, inherited, field, nano);
  }
  return fields;
}

function fieldValues(fields: Fields): Record<string, PriceValue> {
  const out: Record<string, PriceValue> = {};
  for (const [key, value] of Object.entries(fields) as [FieldKey, bigint][]) {
    out[key] = new Num(ratioKeys.has(key) ? formatScaled(value, 6) : formatNano(value));
  }
  return out;
}

/** The unit prices, hosted tools and service tiers of a listed price. */
function otherKeys(price: ListedPrice): Record<string, PriceValue> {
  const out: Record<string, PriceValue> = {};
  const units = [["per_request", price.perRequest], ["per_second", price.perSecond], ["per_image", price.perImage], ["per_1k_chars", price.per1kChars]] as const;
  for (const [key, nano] of units) if (nano !== undefined) out[key] = new Num(formatNano(nano));
  const tools = price.toolCallsPer1k;
  if (tools) {
    const calls: Record<string, PriceValue> = {};
    for (const tool of hostedTools) if (tools[tool] !== undefined) calls[tool] = new Num(formatNano(tools[tool]!));
    out.tool_calls = calls;
  }
  return out;
}

/** The components a listed price names at its top level. */
function components(price: ListedPrice): Partial<Record<TokenField, bigint>> {
  const out: Partial<Record<TokenField, bigint>> = {};
  for (const field of tokenFields) if (price[field] !== undefined) out[field] = price[field];
  return out;
}

/** Input and output of 0 price what their absence prices (nothing): written only when the
 * model has no other price, as `input: 0` of a free model. */
function withoutZeroTokens(fields: Fields, others: Record<string, PriceValue>): Fields {
  const out = { ...fields };
  for (const key of ["input", "output"] as const) {
    if (out[key] !== 0n) continue;
    const { [key]: _zero, ...rest } = out;
    if (Object.keys(rest).length || Object.keys(others).length) delete out[key];
  }
  return out;
}

/** gateway.yaml's `price` for a listed price, keys in the documented order. */
export function gatewayPrice(price: ListedPrice): PriceObject {
  const base = tokenKeys(components(price), {}, false);
  const others = otherKeys(price);
  const out: Record<string, PriceValue> = { ...fieldValues(withoutZeroTokens(base, others)), ...others };
  if (price.tiers?.length) {
    out.tiers = price.tiers.map((tier) => {
      // A component the tier does not name stays at the base's listed price.
      const wanted = { ...components(price), ...components(tier.price) };
      return { above_input_tokens: new Num(String(tier.aboveInputTokens)), ...fieldValues(tokenKeys(wanted, base, true)) };
    });
  }
  if (price.serviceTiersPpm) {
    const tiers: Record<string, PriceValue> = {};
    for (const [name, ppm] of Object.entries(price.serviceTiersPpm)) tiers[name] = new Num(formatScaled(ppm, 6));
    out.service_tiers = tiers;
  }
  if (price.variants?.length) {
    out.variants = price.variants.map((v) => ({ when: { ...v.when }, ...fieldValues(tokenKeys(components(v.price), base, true)), ...otherKeys(v.price) }));
  }
  return out;
}

/** Whether a listed price prices anything at all. */
export function isPriced(price: ListedPrice): boolean {
  return Object.keys(price).length > 0;
}
