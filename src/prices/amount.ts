// Exact decimal amounts read from a price list. A list's numbers are floats in JSON
// (LiteLLM's 3e-06 per token); they are taken by their shortest decimal text, moved by
// powers of ten, multiplied or divided only where the result stays exact, and turned
// into nano-units (9 places) or ppm (6 places), or refused. No float arithmetic on money.

import { formatScaled } from "../billing/cost.js";

/** A non-negative decimal: digits / 10^scale (scale may be negative). */
export interface Decimal {
  readonly digits: bigint;
  readonly scale: number;
}

/** The exact decimal a finite, non-negative JS number reads as (its shortest text). */
export function decimalOf(value: number): Decimal | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  const [mantissa, exponentText] = String(value).toLowerCase().split("e");
  const [intPart, fracPart = ""] = mantissa.split(".");
  return { digits: BigInt(intPart + fracPart), scale: fracPart.length - Number(exponentText ?? "0") };
}

/** `d` × 10^places (a shift of the decimal point; exact). */
export function shift(d: Decimal, places: number): Decimal {
  return { digits: d.digits, scale: d.scale - places };
}

/** `d` × an integer (exact). */
export function times(d: Decimal, factor: bigint): Decimal {
  return { digits: d.digits * factor, scale: d.scale };
}

/** `d` in integer units of 10^-decimals, or undefined when it has more decimal places. */
export function scaledExactly(d: Decimal, decimals: number): bigint | undefined {
  const move = decimals - d.scale;
  if (move >= 0) return d.digits * 10n ** BigInt(move);
  const unit = 10n ** BigInt(-move);
  return d.digits % unit === 0n ? d.digits / unit : undefined;
}

/** `d` in nano-units (9 places), or undefined when not exact at 9 places. */
export function nanoOf(d: Decimal): bigint | undefined {
  return scaledExactly(d, 9);
}

/** The decimal text of `d` without an exponent: 3e-7 → "0.0000003". */
export function decimalText(d: Decimal): string {
  if (d.scale <= 0) return (d.digits * 10n ** BigInt(-d.scale)).toString();
  return formatScaled(d.digits, d.scale);
}

/** `numerator` / `denominator` in ppm (6 places), or undefined when not exact (or ÷ 0). */
export function ratioPpm(numerator: bigint, denominator: bigint): bigint | undefined {
  if (denominator === 0n) return undefined;
  const scaled = numerator * 1_000_000n;
  return scaled % denominator === 0n ? scaled / denominator : undefined;
}

/** `nano` ÷ an integer in nano-units, or undefined when it is not exact. */
export function divideNano(nano: bigint, divisor: bigint): bigint | undefined {
  return nano % divisor === 0n ? nano / divisor : undefined;
}
