// new-api's prices (the options ModelRatio, CompletionRatio, CacheRatio, CreateCacheRatio,
// ModelPrice, GroupRatio, QuotaPerUnit) as gateway.yaml prices. A ratio of 1 is $0.002 per
// 1K tokens: with 500,000 quota units to the currency unit, ratio × 1,000,000 / 500,000 =
// ratio × 2 per 1M input tokens; output is input × the completion ratio (1 when absent);
// a ModelPrice is a fixed price per call, in the currency, and wins over the ratio as it
// does in new-api.

import { decimalText, divRound, scaledOf } from "./decimal.js";

/** new-api's default: 500,000 quota units = 1 currency unit. */
export const DEFAULT_QUOTA_PER_UNIT = 500_000;

/** A price in gateway.yaml's shape, amounts as exact decimal numbers. */
export interface ImportedPrice {
  readonly input?: number;
  readonly output?: number;
  readonly cache_read_ratio?: number;
  readonly cache_write_ratio?: number;
  readonly cache_read?: number;
  readonly cache_write?: number;
  readonly per_request?: number;
  readonly per_image?: number;
}

/** The price options, parsed. */
export interface PriceOptions {
  readonly quotaPerUnit: number;
  readonly modelRatio: ReadonlyMap<string, number>;
  readonly completionRatio: ReadonlyMap<string, number>;
  readonly cacheRatio: ReadonlyMap<string, number>;
  readonly createCacheRatio: ReadonlyMap<string, number>;
  readonly modelPrice: ReadonlyMap<string, number>;
  readonly groupRatio: ReadonlyMap<string, number>;
  /** Options that could not be read, with why. */
  readonly problems: readonly string[];
}

const RATIO_SCALE = 12; // decimals kept for ratios while computing
const NANO = 9;

/** A JSON object of model → number option; problems collected, bad entries dropped. */
function numberMap(options: ReadonlyMap<string, string>, key: string, problems: string[]): Map<string, number> {
  const out = new Map<string, number>();
  const textValue = options.get(key);
  if (textValue === undefined || textValue.trim() === "") return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(textValue);
  } catch {
    problems.push(`option ${key} is not JSON; ignored`);
    return out;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    problems.push(`option ${key} is not a JSON object; ignored`);
    return out;
  }
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) out.set(name, value);
    else problems.push(`option ${key}: ${name} is ${JSON.stringify(value)}, not a number ≥ 0; ignored`);
  }
  return out;
}

/** Reads the price options out of the options table. */
export function priceOptions(options: ReadonlyMap<string, string>): PriceOptions {
  const problems: string[] = [];
  const perUnitText = options.get("QuotaPerUnit");
  let quotaPerUnit = DEFAULT_QUOTA_PER_UNIT;
  if (perUnitText !== undefined && perUnitText.trim() !== "") {
    const n = Number(perUnitText);
    if (Number.isFinite(n) && n > 0) quotaPerUnit = n;
    else problems.push(`option QuotaPerUnit '${perUnitText}' is not a number > 0; ${DEFAULT_QUOTA_PER_UNIT} used`);
  }
  return {
    quotaPerUnit,
    modelRatio: numberMap(options, "ModelRatio", problems),
    completionRatio: numberMap(options, "CompletionRatio", problems),
    cacheRatio: numberMap(options, "CacheRatio", problems),
    createCacheRatio: numberMap(options, "CreateCacheRatio", problems),
    modelPrice: numberMap(options, "ModelPrice", problems),
    groupRatio: numberMap(options, "GroupRatio", problems),
    problems,
  };
}

/** Quota units → nano-units of the currency (rounded half up). */
export function quotaToNano(quota: number, quotaPerUnit: number): bigint {
  if (quota <= 0) return 0n;
  return divRound(scaledOf(quota, 0) * 10n ** BigInt(NANO + RATIO_SCALE), scaledOf(quotaPerUnit, RATIO_SCALE));
}

const asNumber = (nano: bigint) => Number(decimalText(nano, NANO));

/** A cache ratio: as a ratio when it has at most 6 decimals (the schema's limit), else as
 * an amount per 1M tokens (input × ratio). */
function cachePrice(ratio: number, inputNano: bigint, ratioKey: "cache_read_ratio" | "cache_write_ratio", amountKey: "cache_read" | "cache_write"): ImportedPrice {
  const ppmExact = scaledOf(ratio, 6) * 10n ** BigInt(RATIO_SCALE - 6) === scaledOf(ratio, RATIO_SCALE);
  if (ppmExact) return { [ratioKey]: ratio };
  return { [amountKey]: asNumber(divRound(inputNano * scaledOf(ratio, RATIO_SCALE), 10n ** BigInt(RATIO_SCALE))) };
}

/** The price of `model`, or undefined when new-api's options name none for it (new-api
 * then falls back to its built-in defaults, which the import does not guess). */
export function modelPriceOf(model: string, opts: PriceOptions): ImportedPrice | undefined {
  const fixed = opts.modelPrice.get(model);
  if (fixed !== undefined) return { per_request: asNumber(scaledOf(fixed, NANO)) };
  const ratio = opts.modelRatio.get(model);
  if (ratio === undefined) return undefined;
  // input per 1M = ratio × 1e6 / quotaPerUnit, in nano-units.
  const ratioScaled = scaledOf(ratio, RATIO_SCALE);
  const perUnit = scaledOf(opts.quotaPerUnit, RATIO_SCALE);
  const million = 1_000_000n * 10n ** BigInt(NANO);
  const inputNano = divRound(ratioScaled * million, perUnit);
  const completion = scaledOf(opts.completionRatio.get(model) ?? 1, RATIO_SCALE);
  const outputNano = divRound(ratioScaled * million * completion, perUnit * 10n ** BigInt(RATIO_SCALE));
  const cacheRead = opts.cacheRatio.get(model);
  const cacheWrite = opts.createCacheRatio.get(model);
  return {
    input: asNumber(inputNano),
    output: asNumber(outputNano),
    ...(cacheRead === undefined ? {} : cachePrice(cacheRead, inputNano, "cache_read_ratio", "cache_read")),
    ...(cacheWrite === undefined ? {} : cachePrice(cacheWrite, inputNano, "cache_write_ratio", "cache_write")),
  };
}
