// One entry of LiteLLM's price file: its amounts read exactly (the decimal text of the
// float, moved by powers of ten), or the entry refused with a message naming the key.

import { decimalOf, decimalText, nanoOf, shift, type Decimal } from "./amount.js";

/** An entry that cannot be priced exactly: the message names the key. */
export class EntryProblem extends Error {}

export type Entry = Readonly<Record<string, unknown>>;

/** The exact decimal of a number field; absent or null: undefined; anything else refuses the entry. */
export function amount(entry: Entry, key: string): Decimal | undefined {
  const value = entry[key];
  if (value === undefined || value === null) return undefined;
  const d = typeof value === "number" ? decimalOf(value) : undefined;
  if (!d) throw new EntryProblem(`${key} must be a number ≥ 0, not ${JSON.stringify(value)}`);
  return d;
}

/** A per-unit amount moved by `places` (per token → per 1M: 6), exact at 9 places or refused. */
export function exactNano(entry: Entry, key: string, places: number, what: string): bigint | undefined {
  const d = amount(entry, key);
  if (!d) return undefined;
  const nano = nanoOf(shift(d, places));
  if (nano === undefined) {
    throw new EntryProblem(`${key} ${decimalText(d)} is ${decimalText(shift(d, places))} ${what}: more than 9 decimal places, not exact`);
  }
  return nano;
}

/** The gateway name of an entry: its key without the `provider/` prefix LiteLLM puts on some. */
export function nameOf(key: string, provider: string | undefined): string {
  return provider && key.startsWith(`${provider}/`) ? key.slice(provider.length + 1) : key;
}
