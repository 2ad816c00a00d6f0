// Pure, exact cost arithmetic. Every term is summed in a scaled integer domain
// (nano-units × 10^18) and rounded once, half up, so no float ever touches money.

import type { Units, Usage } from "../protocols/usage.js";
import { hostedTools, type Price } from "../runtime/types.js";

const MILLION = 1_000_000n;
/** Prices are per 1M tokens (×10^6), ratios and multipliers in ppm (×10^6 each). */
const SCALE = MILLION * MILLION * MILLION;

/** Whether a model is priced by tokens (then every whole answer must report its usage). */
export function tokenPriced(price: Price): boolean {
  return (price.inputPer1M ?? 0n) > 0n || (price.outputPer1M ?? 0n) > 0n;
}

/** Whether a model is priced by quantities an answer may report (seconds, images,
 * characters): only then does a guess of them make its charge an estimate. */
export function unitPriced(price: Price): boolean {
  return price.perSecond !== undefined || price.perImage !== undefined || price.per1kChars !== undefined;
}

const big = (n: number | undefined): bigint => BigInt(Math.max(0, Math.floor(n ?? 0)));

/**
 * Cost in nano-units: token usage at the model's prices (cache reads and writes at the
 * input price × their ratio, default 1; reasoning is inside `output`), plus any
 * per-request, per-image, per-second or per-1k-character price, and hosted tool calls at
 * their price per 1k calls, all × the multiplier.
 */
export function costOf(usage: Usage, price: Price, multiplierPpm: bigint, units: Units = {}): bigint {
  const input = price.inputPer1M ?? 0n;
  const output = price.outputPer1M ?? 0n;
  // Σ tokens × price-per-1M × ratio-ppm  →  nano × 10^12
  let scaled =
    big(usage.input) * input * MILLION +
    big(usage.cacheRead) * input * (price.cacheReadRatioPpm ?? MILLION) +
    big(usage.cacheWrite) * input * (price.cacheWriteRatioPpm ?? MILLION) +
    big(usage.output) * output * MILLION;
  // Unit prices are nano per unit: bring them to nano × 10^12.
  if (price.perRequest) scaled += price.perRequest * big(units.requests ?? 1) * MILLION * MILLION;
  if (price.perImage) scaled += price.perImage * big(units.images) * MILLION * MILLION;
  if (price.perSecond) scaled += price.perSecond * big(units.milliseconds) * MILLION * 1000n;
  if (price.per1kChars) scaled += price.per1kChars * big(units.characters) * MILLION * 1000n;
  // Hosted tool calls at their price per 1k calls (a tool the list does not price is free).
  const calls = usage.toolCalls;
  if (calls && price.toolCallsPer1k) {
    for (const tool of hostedTools) {
      const per1k = price.toolCallsPer1k[tool];
      if (per1k && calls[tool]) scaled += per1k * big(calls[tool]) * MILLION * 1000n;
    }
  }
  return roundHalfUp(scaled * multiplierPpm, SCALE);
}

function roundHalfUp(value: bigint, divisor: bigint): bigint {
  return (value + divisor / 2n) / divisor;
}

/** Nano-units as an exact decimal string of the currency: 1500000n → "0.0015". */
export function formatNano(nano: bigint): string {
  const negative = nano < 0n;
  const abs = negative ? -nano : nano;
  const int = abs / 1_000_000_000n;
  const frac = (abs % 1_000_000_000n).toString().padStart(9, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${int}${frac ? "." + frac : ""}`;
}
