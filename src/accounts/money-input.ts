// Money and times as an operator writes them (admin API bodies, CLI flags), read exactly:
// "12.5" or 12.5 → 12500000000n nano-units; never through a float product.

import { toNano } from "../config/money.js";
import { parseDate, parseDuration } from "../config/units.js";

/** Input that names the field it is wrong in (a 400 naming it). */
export class InvalidField extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
  }
}

const DECIMAL = /^(-)?(\d{1,12})(?:\.(\d{1,9}))?$/;

/**
 * An amount of the currency in nano-units: a decimal string ("12.5", "-3") or a JSON
 * number, at most 9 decimal places and 12 integer digits. Throws InvalidField.
 */
export function parseMoney(value: unknown, field: string, opts: { readonly allowNegative?: boolean; readonly allowZero?: boolean } = {}): bigint {
  let nano: bigint;
  if (typeof value === "string") {
    const m = DECIMAL.exec(value.trim());
    if (!m) throw new InvalidField(field, `"${value}" is not an amount (a decimal such as 12.5, at most 9 decimal places)`);
    nano = BigInt(m[2] + (m[3] ?? "").padEnd(9, "0")) * (m[1] ? -1n : 1n);
  } else if (typeof value === "number" && Number.isFinite(value)) {
    try {
      nano = value < 0 ? -toNano(-value) : toNano(value);
    } catch (err) {
      throw new InvalidField(field, (err as Error).message);
    }
    if (nano > 999_999_999_999_999_999_999n || nano < -999_999_999_999_999_999_999n) throw new InvalidField(field, "is too large");
  } else {
    throw new InvalidField(field, "must be an amount: a decimal string such as \"12.5\" or a number");
  }
  if (nano < 0n && !opts.allowNegative) throw new InvalidField(field, "must not be negative");
  if (nano === 0n && !opts.allowZero) throw new InvalidField(field, "must not be zero");
  return nano;
}

/**
 * When something ends: an ISO 8601 date or date-time ("2027-01-01", "2027-01-01T00:00:00Z"),
 * or a duration from now ("30d", "12h"). Epoch ms; throws InvalidField.
 */
export function parseExpiry(value: unknown, field: string, now: number): number {
  if (typeof value !== "string" || value.trim() === "") throw new InvalidField(field, "must be an ISO 8601 date-time or a duration such as 30d");
  const text = value.trim();
  try {
    if (/^\d+(?:\.\d+)?(?:ms|s|m|h|d)$/.test(text)) return now + parseDuration(text);
    return parseDate(text);
  } catch (err) {
    throw new InvalidField(field, (err as Error).message);
  }
}
