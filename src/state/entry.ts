// One canonical shape for usage entries leaving any store: optional fields are absent
// (never present as undefined), so every implementation returns deep-equal values.

import { addToolCalls, parseToolCalls, type Usage } from "../protocols/usage.js";
import type { SpendRow, UsageEntry } from "./store.js";

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
  key?: string | null;
  upstreamProtocol?: string | null;
  error?: string | null;
  ttfbMs?: number | null;
  refundedAt?: number | null;
  droppedFields?: readonly string[] | null;
  breakdown?: string | null;
  channelCostNano?: bigint | null;
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
  if (entry.key != null) out.key = entry.key;
  if (entry.upstreamProtocol != null) out.upstreamProtocol = entry.upstreamProtocol;
  if (entry.error != null) out.error = entry.error;
  if (entry.ttfbMs != null) out.ttfbMs = entry.ttfbMs;
  if (entry.refundedAt != null) out.refundedAt = entry.refundedAt;
  if (entry.droppedFields != null && entry.droppedFields.length > 0) out.droppedFields = Object.freeze([...entry.droppedFields]);
  if (entry.breakdown != null && entry.breakdown !== "") out.breakdown = entry.breakdown;
  if (entry.channelCostNano != null) out.channelCostNano = entry.channelCostNano;
  return Object.freeze(out);
}

/** A copy of a usage with exactly the canonical five counters, and its hosted tool calls
 * when it has any (frozen: an entry's usage is a value). */
export function copyUsage(u: Usage): Usage {
  const copy: Usage = { input: u.input, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, output: u.output, reasoning: u.reasoning };
  if (u.toolCalls) copy.toolCalls = Object.freeze({ ...u.toolCalls });
  return copy;
}

/** Adds `b` into `a` in place. */
export function addUsage(a: Usage, b: Usage): void {
  a.input += b.input;
  a.cacheRead += b.cacheRead;
  a.cacheWrite += b.cacheWrite;
  a.output += b.output;
  a.reasoning += b.reasoning;
  const calls = addToolCalls(a.toolCalls, b.toolCalls);
  if (calls) a.toolCalls = calls;
}

/** A usage_log row as a database driver returns it (the same columns in SQLite and
 * PostgreSQL; integers as numbers, bigints or decimal strings, by driver). */
export interface UsageRow {
  request_id: string;
  time: bigint | number | string;
  token: string;
  user: string;
  grp: string;
  model: string;
  upstream_model: string | null;
  channel: string | null;
  inbound_protocol: string;
  upstream_protocol: string | null;
  input: bigint | number | string;
  cache_read: bigint | number | string;
  cache_write: bigint | number | string;
  output: bigint | number | string;
  reasoning: bigint | number | string;
  cost_nano: bigint | string;
  status: bigint | number;
  error: string | null;
  duration_ms: number;
  ttfb_ms: number | null;
  /** PostgreSQL: a boolean; SQLite: 0 or 1. */
  estimated: boolean | bigint | number;
  refunded_at: bigint | number | string | null;
  dropped_fields: string | null;
  /** Absent in rows read from a database that predates the column. */
  tool_calls?: string | null;
  /** Absent in rows read from a database that predates the columns. */
  breakdown?: string | null;
  channel_cost_nano?: bigint | number | string | null;
  /** Absent in rows read from a database that predates the column. */
  key?: string | null;
}

/** The entry a usage_log row holds; money exact (BigInt of the column, never a float). */
export function entryOfRow(row: UsageRow): UsageEntry {
  return normalizeEntry({
    requestId: row.request_id,
    time: Number(row.time),
    token: row.token,
    user: row.user,
    group: row.grp,
    model: row.model,
    upstreamModel: row.upstream_model,
    channel: row.channel,
    key: row.key,
    inboundProtocol: row.inbound_protocol,
    upstreamProtocol: row.upstream_protocol,
    usage: {
      input: Number(row.input),
      cacheRead: Number(row.cache_read),
      cacheWrite: Number(row.cache_write),
      output: Number(row.output),
      reasoning: Number(row.reasoning),
      ...withToolCalls(row.tool_calls),
    },
    costNano: BigInt(row.cost_nano),
    status: Number(row.status),
    error: row.error,
    durationMs: row.duration_ms,
    ttfbMs: row.ttfb_ms,
    estimated: row.estimated === true || Number(row.estimated) === 1,
    refundedAt: row.refunded_at === null ? null : Number(row.refunded_at),
    droppedFields: row.dropped_fields === null ? null : row.dropped_fields.split(","),
    breakdown: row.breakdown,
    channelCostNano: row.channel_cost_nano == null ? null : BigInt(row.channel_cost_nano),
  });
}

/** The `toolCalls` field of a usage read back from a row's column (none: no field). */
function withToolCalls(column: string | null | undefined): Pick<Usage, "toolCalls"> {
  const calls = parseToolCalls(column);
  return calls ? { toolCalls: calls } : {};
}

/** A spend aggregate row as a driver returns it (sums as bigints or decimal strings). */
export interface SpendSqlRow {
  key: string;
  requests: bigint | number | string;
  input: bigint | number | string;
  cache_read: bigint | number | string;
  cache_write: bigint | number | string;
  output: bigint | number | string;
  reasoning: bigint | number | string;
  cost: bigint | string;
  channel_cost: bigint | string | null;
  channel_cost_unknown: bigint | number | string | null;
}

/** The SQL (SQLite's and PostgreSQL's alike) of a spend query's money columns: what was
 * charged, what it cost the operator, and how many charged entries did not record that;
 * refunded entries count for none of them. */
export const SPEND_MONEY_SQL = `SUM(CASE WHEN refunded_at IS NULL THEN cost_nano ELSE 0 END) AS cost,
  SUM(CASE WHEN refunded_at IS NULL THEN COALESCE(channel_cost_nano, 0) ELSE 0 END) AS channel_cost,
  SUM(CASE WHEN refunded_at IS NULL AND channel_cost_nano IS NULL AND cost_nano <> 0 THEN 1 ELSE 0 END) AS channel_cost_unknown`;

/** The money of a spend row, mutable while entries are added to it (the in-process paths). */
export interface SpendMoney {
  costNano: bigint;
  channelCostNano: bigint;
  channelCostUnknown: number;
}

/** Adds an entry's money to a spend row as SPEND_MONEY_SQL does. */
export function addSpendMoney(row: SpendMoney, e: UsageEntry): void {
  if (e.refundedAt !== undefined) return;
  row.costNano += e.costNano;
  if (e.channelCostNano !== undefined) row.channelCostNano += e.channelCostNano;
  else if (e.costNano !== 0n) row.channelCostUnknown++;
}

/** The SpendRow an aggregate row holds; money exact. */
export function spendRowOf(r: SpendSqlRow): SpendRow {
  return {
    key: r.key,
    requests: Number(r.requests),
    usage: {
      input: Number(r.input),
      cacheRead: Number(r.cache_read),
      cacheWrite: Number(r.cache_write),
      output: Number(r.output),
      reasoning: Number(r.reasoning),
    },
    costNano: BigInt(r.cost),
    channelCostNano: BigInt(r.channel_cost ?? 0),
    channelCostUnknown: Number(r.channel_cost_unknown ?? 0),
  };
}
