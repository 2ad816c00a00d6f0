// Money in the browser: the server sends exact decimal strings (formatNano's); the page shows
// them as they are, and reads what an operator types into the same exact form. Arithmetic,
// where a page needs it, is on BigInt nano-units: never a float.

/** Decimal places of a nano-unit. */
const NANO_DECIMALS = 9;
const NANO = 10n ** BigInt(NANO_DECIMALS);

/** An amount as the server writes it: optional minus, digits, at most 9 decimals. */
const EXACT = /^-?(0|[1-9]\d*)(\.\d{1,9})?$/;

/** Whether `text` is an exact decimal the server could have written. */
export function isExactDecimal(text: string): boolean {
  return EXACT.test(text);
}

/** An exact decimal string as nano-units; throws on anything else (never rounds). */
export function parseNano(text: string): bigint {
  const t = text.trim();
  const m = /^(-?)(\d+)(?:\.(\d{1,9}))?$/.exec(t);
  if (!m) throw new Error(`not an exact amount: '${text}' (digits, a point and at most ${NANO_DECIMALS} decimals)`);
  const [, sign, int, frac = ""] = m;
  const nano = BigInt(int) * NANO + BigInt(frac.padEnd(NANO_DECIMALS, "0"));
  return sign === "-" ? -nano : nano;
}

/** Nano-units as the exact decimal the server writes (trailing zeros cut): 1500000000n → "1.5". */
export function formatNano(nano: bigint): string {
  const negative = nano < 0n;
  const abs = negative ? -nano : nano;
  const int = (abs / NANO).toString();
  const frac = (abs % NANO).toString().padStart(NANO_DECIMALS, "0").replace(/0+$/, "");
  return `${negative && abs !== 0n ? "-" : ""}${int}${frac === "" ? "" : `.${frac}`}`;
}

/** What an operator typed as a top-up, in the canonical form the admin API takes ("5.50" →
 * "5.5"), or an error message naming what is wrong. Zero is refused: it credits nothing. */
export function topUpAmount(typed: string): { readonly amount: string } | { readonly error: string } {
  let nano: bigint;
  try {
    nano = parseNano(typed);
  } catch {
    return { error: "Enter an amount such as 10 or 12.5 (at most 9 decimal places)." };
  }
  if (nano === 0n) return { error: "The amount must not be zero." };
  return { amount: formatNano(nano) };
}
