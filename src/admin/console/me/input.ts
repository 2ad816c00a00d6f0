// Reading a customer's query and body strictly: every parameter known, whole numbers within
// their bounds, a body that is a JSON object of known fields. A wrong one is a 400 that
// names it (InvalidField), so a hostile client learns nothing and changes nothing.

import { InvalidField } from "../../../accounts/money-input.js";
import type { UsageSubject } from "../../../state/store.js";
import type { Customer } from "./route.js";

/** Refuses a query holding a parameter not in `known`, or one given twice. */
export function knownParams(query: URLSearchParams, known: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!known.includes(name)) {
      throw new InvalidField(name, known.length === 0 ? "is not known here (this takes none)" : `is not known here (known: ${known.join(", ")})`);
    }
    if (seen.has(name)) throw new InvalidField(name, "is given twice");
    seen.add(name);
  }
}

/** A whole-number parameter from `min` to `max`; `fallback` when absent. */
export function intParam(query: URLSearchParams, name: string, bounds: { readonly min: number; readonly max: number; readonly fallback: number }): number {
  const text = query.get(name);
  if (text === null) return bounds.fallback;
  const value = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(value >= bounds.min && value <= bounds.max)) throw new InvalidField(name, `must be a whole number from ${bounds.min} to ${bounds.max}`);
  return value;
}

/** The body as a JSON object holding only `known` fields. */
export function objectBody(body: unknown, known: readonly string[]): Readonly<Record<string, unknown>> {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new InvalidField("(body)", "must be a JSON object");
  }
  for (const field of Object.keys(body)) {
    if (!known.includes(field)) throw new InvalidField(field, `is not known here (known: ${known.join(", ")})`);
  }
  return body as Record<string, unknown>;
}

/** Whose usage a customer sees: their user's (every token of it) when the token has one,
 * else the token's own. */
export function subjectOf(customer: Customer): UsageSubject {
  return customer.user === undefined ? { kind: "token", name: customer.token } : { kind: "user", name: customer.user };
}
