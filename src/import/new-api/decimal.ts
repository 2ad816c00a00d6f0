// Exact decimal arithmetic for the conversions: new-api keeps ratios as floats in JSON, the
// gateway wants exact decimals. A float is read through its shortest decimal text (what
// the operator typed), scaled to an integer, and only the final result is rounded.

/** `value` × 10^decimals as an integer, rounded half up (value ≥ 0, finite). */
export function scaledOf(value: number, decimals: number): bigint {
  if (!Number.isFinite(value) || value < 0) throw new Error(`${value} is not a finite number ≥ 0`);
  const [mantissa, exponentText] = String(value).toLowerCase().split("e");
  const [intPart, fracPart = ""] = mantissa.split(".");
  const shift = decimals + Number(exponentText ?? "0") - fracPart.length;
  const digits = BigInt(intPart + fracPart);
  if (shift >= 0) return digits * 10n ** BigInt(shift);
  return divRound(digits, 10n ** BigInt(-shift));
}

/** a / b rounded half up (a ≥ 0, b > 0). */
export function divRound(a: bigint, b: bigint): bigint {
  return (a * 2n + b) / (2n * b);
}

/** An integer in 10^-decimals units as the shortest exact decimal text ("0.15"). */
export function decimalText(value: bigint, decimals: number): string {
  const unit = 10n ** BigInt(decimals);
  const int = value / unit;
  const frac = (value % unit).toString().padStart(decimals, "0").replace(/0+$/, "");
  return frac ? `${int}.${frac}` : `${int}`;
}
