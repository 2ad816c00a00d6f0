// Exact conversion of config numbers to integer units: fiat to nano-units, ratios to
// parts per million. Works on the number's decimal text, never on float products.

/** Decimal places a fiat amount may carry (nano-units). */
export const NANO_DECIMALS = 9;
/** Decimal places a ratio may carry (parts per million). */
export const PPM_DECIMALS = 6;

/** Splits a finite, non-negative number into its exact decimal digits. */
function decimalDigits(value: number): { int: string; frac: string } {
  if (!Number.isFinite(value) || value < 0) throw new Error(`${value} must be a finite number ≥ 0`);
  // String(x) is the shortest text that reads back as x; it may use an exponent.
  const [mantissa, exponentText] = String(value).toLowerCase().split("e");
  const exponent = Number(exponentText ?? "0");
  const [intPart, fracPart = ""] = mantissa.split(".");
  let digits = intPart + fracPart;
  let point = intPart.length + exponent;
  if (point < 0) {
    digits = "0".repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += "0".repeat(point - digits.length);
  const int = digits.slice(0, point).replace(/^0+(?=\d)/, "") || "0";
  const frac = digits.slice(point).replace(/0+$/, "");
  return { int, frac };
}

function scaled(value: number, decimals: number, what: string): bigint {
  const { int, frac } = decimalDigits(value);
  if (frac.length > decimals) {
    throw new Error(`${what} ${value} has more than ${decimals} decimal places`);
  }
  return BigInt(int + frac.padEnd(decimals, "0"));
}

/** Fiat amount → nano-units (0.15 → 150000000n). Throws past 9 decimal places. */
export function toNano(value: number): bigint {
  return scaled(value, NANO_DECIMALS, "amount");
}

/** Ratio → parts per million (0.1 → 100000n). Throws past 6 decimal places. */
export function toPpm(value: number): bigint {
  return scaled(value, PPM_DECIMALS, "ratio");
}
