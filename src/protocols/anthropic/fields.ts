// Strict readers for messages-protocol JSON: every malformed or unknown field becomes a 400
// that names the field by its path, so the decoders never drop anything silently.

import { dropUnknownKeys } from "../field-policy.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { CacheHint } from "../canonical.js";

/** A JSON object, as read off the wire. */
export type Json = Record<string, unknown>;

/** Throws the 400 invalid_parameter error for `field`. */
export function invalid(field: string, why: string): never {
  throw new GatewayError(errors.invalidParameter, `${field}: ${why}`);
}

/** Whether `v` is a plain JSON object. */
export function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `v` as an object, else a 400 naming `field`. */
export function object(v: unknown, field: string): Json {
  if (!isObject(v)) invalid(field, "must be an object");
  return v;
}

/** `v` as an array, else a 400 naming `field`. */
export function array(v: unknown, field: string): unknown[] {
  if (!Array.isArray(v)) invalid(field, "must be an array");
  return v;
}

/** `v` as a string, else a 400 naming `field`. */
export function string(v: unknown, field: string): string {
  if (typeof v !== "string") invalid(field, "must be a string");
  return v;
}

/** An optional number (null counts as absent). */
export function optNumber(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) invalid(field, "must be a number");
  return v;
}

/** An optional non-negative integer (null counts as absent). */
export function optInt(v: unknown, field: string): number | undefined {
  const n = optNumber(v, field);
  if (n !== undefined && (!Number.isInteger(n) || n < 0)) invalid(field, "must be a non-negative integer");
  return n;
}

/** An optional boolean (null counts as absent). */
export function optBool(v: unknown, field: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") invalid(field, "must be a boolean");
  return v;
}

/** Drops and names in `dropped` any key of `o` that is not in `known`, as `<field>.<key>`
 * (field-policy.ts: unknown fields are dropped, and refused under conversion: strict). */
export function onlyKeys(o: Json, known: ReadonlySet<string>, field: string, dropped: string[]): void {
  dropUnknownKeys(o, known, field, dropped);
}

/** Reads a `cache_control` value into a CacheHint (null/absent → undefined). */
export function readCache(v: unknown, field: string, dropped: string[]): CacheHint | undefined {
  if (v === undefined || v === null) return undefined;
  const o = object(v, field);
  onlyKeys(o, new Set(["type", "ttl"]), field, dropped);
  if (o.type !== "ephemeral") invalid(`${field}.type`, 'must be "ephemeral"');
  if (o.ttl === undefined || o.ttl === null) return { type: "ephemeral" };
  return { type: "ephemeral", ttl: string(o.ttl, `${field}.ttl`) };
}

/** A CacheHint as wire `cache_control`. */
export function writeCache(hint: CacheHint): Json {
  return hint.ttl === undefined ? { type: "ephemeral" } : { type: "ephemeral", ttl: hint.ttl };
}
