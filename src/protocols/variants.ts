// What a request asks that selects a price variant (Units.variant): the fields a route
// names, read as strings, absent when the request leaves them out. Only the request is read
// here; a service tier the answer names wins over the one asked (billing/cost.ts).

import type { Units } from "./usage.js";

/** The named fields of `json` that hold a string (or a number, as its decimal text);
 * undefined when none does. Empty strings and other types select nothing. */
export function requestVariant(json: Record<string, unknown>, fields: readonly string[]): Record<string, string> | undefined {
  let variant: Record<string, string> | undefined;
  for (const field of fields) {
    const v = json[field];
    const text = typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined;
    if (text !== undefined && text !== "") (variant ??= {})[field] = text;
  }
  return variant;
}

/** `units` with the request's variant from `fields`, when it names any. */
export function withVariant(units: Units, json: Record<string, unknown>, fields: readonly string[]): Units {
  const variant = requestVariant(json, fields);
  return variant ? { ...units, variant } : units;
}

const SERVICE_TIER = ["service_tier"] as const;

/** The rules of the token routes that may ask a service tier (chat-completions, responses,
 * messages): the tier asked, as a variant; nothing when the request names none. */
export function serviceTierRules(json: Record<string, unknown>): Units | undefined {
  if (json.service_tier === undefined) return undefined;
  const variant = requestVariant(json, SERVICE_TIER);
  return variant && { variant };
}

/** The units an answer reported (seconds of a video, of a transcription) with the variant
 * the request asked, which the answer does not repeat; the request's units when the answer
 * reported none. */
export function answeredUnits(answered: Units | undefined, asked: Units | undefined): Units | undefined {
  if (answered === undefined) return asked;
  return asked?.variant !== undefined && answered.variant === undefined ? { ...answered, variant: asked.variant } : answered;
}
