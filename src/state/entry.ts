// One canonical shape for usage entries leaving any store: optional fields are absent
// (never present as undefined), so every implementation returns deep-equal values.

import type { Usage } from "../protocols/usage.js";
import type { UsageEntry } from "./store.js";

/** Default number of entries `Store.logs` returns when the filter sets no limit. */
export const DEFAULT_LOG_LIMIT = 100;

/** The effective row limit of a log filter: default 100, never negative. */
export function logLimit(limit: number | undefined): number {
  return limit === undefined ? DEFAULT_LOG_LIMIT : Math.max(0, Math.floor(limit));
}

/** Fields of `UsageEntry` that may be left out. */
interface OptionalFields {
  upstreamModel?: string | null;
  channel?: string | null;
  upstreamProtocol?: string | null;
  error?: string | null;
  ttfbMs?: number | null;
  refundedAt?: number | null;
  droppedFields?: readonly string[] | null;
}

type Required = Omit<UsageEntry, keyof OptionalFields>;

/**
 * A fresh, deeply frozen entry with a fixed key order; optional fields given as undefined or
 * null are dropped. Throws a TypeError when the cost is not a bigint (money is never a
 * float).
 */
export function normalizeEntry(entry: Required & OptionalFields): UsageEntry {
  if (typeof entry.costNano !== "bigint") {
    throw new TypeError(`usage entry ${entry.requestId}: costNano must be a bigint of nano-units`);
  }
  const out: { -readonly [K in keyof UsageEntry]: UsageEntry[K] } = {
    requestId: entry.requestId,
    time: entry.time,
    token: entry.token,
    user: entry.user,
    group: entry.group,
    model: entry.model,
    inboundProtocol: entry.inboundProtocol,
    usage: Object.freeze(copyUsage(entry.usage)),
    costNano: entry.costNano,
    status: entry.status,
    durationMs: entry.durationMs,
    estimated: entry.estimated,
  };
  if (entry.upstreamModel != null) out.upstreamModel = entry.upstreamModel;
  if (entry.channel != null) out.channel = entry.channel;
  if (entry.upstreamProtocol != null) out.upstreamProtocol = entry.upstreamProtocol;
  if (entry.error != null) out.error = entry.error;
  if (entry.ttfbMs != null) out.ttfbMs = entry.ttfbMs;
  if (entry.refundedAt != null) out.refundedAt = entry.refundedAt;
  if (entry.droppedFields != null && entry.droppedFields.length > 0) out.droppedFields = Object.freeze([...entry.droppedFields]);
  return Object.freeze(out);
}

/** A copy of a usage with exactly the canonical five counters. */
export function copyUsage(u: Usage): Usage {
  return { input: u.input, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, output: u.output, reasoning: u.reasoning };
}

/** Adds `b` into `a` in place. */
export function addUsage(a: Usage, b: Usage): void {
  a.input += b.input;
  a.cacheRead += b.cacheRead;
  a.cacheWrite += b.cacheWrite;
  a.output += b.output;
  a.reasoning += b.reasoning;
}
