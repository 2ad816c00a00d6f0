// Prices as flat field → value maps, and the difference of two of them: what the import
// shows per model (field: old → new, added, removed). Numbers compare by their exact
// decimal text, so 0.30 and 0.3 are one value and 3e-7 reads as 0.0000003.

import { decimalOf, decimalText } from "./amount.js";
import { Num, type PriceObject, type PriceValue } from "./price-keys.js";

/** A value read from gateway.yaml (numbers, strings, maps, lists) in the import's terms. */
export function priceValueOf(value: unknown): PriceValue {
  if (typeof value === "number") {
    const d = decimalOf(value);
    return new Num(d ? decimalText(d) : String(value));
  }
  if (Array.isArray(value)) return value.map(priceValueOf);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, PriceValue> = {};
    for (const [k, v] of Object.entries(value)) out[k] = priceValueOf(v);
    return out;
  }
  return String(value);
}

function isObject(value: PriceValue): value is PriceObject {
  return typeof value === "object" && !(value instanceof Num) && !Array.isArray(value);
}

/** The name a list item goes by: a tier by its threshold, a variant by what it is chosen on. */
function itemLabel(item: PriceValue, index: number): { label: string; identity: string[] } {
  if (isObject(item)) {
    const above = item.above_input_tokens;
    if (above instanceof Num) return { label: `above ${above.text}`, identity: ["above_input_tokens"] };
    const when = item.when;
    if (when !== undefined && isObject(when)) {
      const parts = Object.entries(when).map(([k, v]) => `${k}=${v instanceof Num ? v.text : String(v)}`);
      return { label: parts.join(","), identity: ["when"] };
    }
  }
  return { label: String(index), identity: [] };
}

function flattenInto(out: Map<string, string>, path: string, value: PriceValue): void {
  if (value instanceof Num) out.set(path, value.text);
  else if (typeof value === "string") out.set(path, JSON.stringify(value));
  else if (Array.isArray(value)) {
    value.forEach((item: PriceValue, i: number) => {
      const { label, identity } = itemLabel(item, i);
      const at = `${path}[${label}]`;
      if (!isObject(item)) return flattenInto(out, at, item);
      if (Object.keys(item).every((k) => identity.includes(k))) out.set(at, "{}");
      for (const [k, v] of Object.entries(item)) if (!identity.includes(k)) flattenInto(out, `${at}.${k}`, v);
    });
  } else {
    for (const [k, v] of Object.entries(value)) flattenInto(out, path ? `${path}.${k}` : k, v);
  }
}

/** A price as field path → value text (`tiers[above 200000].input` → "6"). */
export function flatten(price: PriceObject): Map<string, string> {
  const out = new Map<string, string>();
  flattenInto(out, "", price);
  return out;
}

/** The top-level price key a field path belongs to. */
export function topKey(path: string): string {
  return /^[^.[]*/.exec(path)![0];
}

/** One field that differs: absent `old` is added, absent `next` is removed. */
export interface FieldChange {
  readonly field: string;
  readonly old?: string;
  readonly next?: string;
}

/** The fields that differ between two prices, in `next`'s order, removals last. */
export function priceChanges(old: PriceObject, next: PriceObject): FieldChange[] {
  const before = flatten(old);
  const after = flatten(next);
  const changes: FieldChange[] = [];
  for (const [field, value] of after) {
    const was = before.get(field);
    if (was !== value) changes.push({ field, ...(was !== undefined && { old: was }), next: value });
  }
  for (const [field, was] of before) if (!after.has(field)) changes.push({ field, old: was });
  return changes;
}

/** One line of the diff for a field. */
export function changeLine(change: FieldChange): string {
  if (change.old === undefined) return `${change.field}: added ${change.next}`;
  if (change.next === undefined) return `${change.field}: removed (was ${change.old})`;
  return `${change.field}: ${change.old} → ${change.next}`;
}
