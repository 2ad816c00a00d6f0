// The embedded usage-log engine: durable spend counters and the usage log, synchronous, in
// this process (SQLite by default, or memory). Nothing above state/ uses it: StoreUsageLog
// puts it behind the asynchronous UsageLog (interfaces.ts). The entry and filter types are
// everyone's.

import type { Usage } from "../protocols/usage.js";
import type { KeyHealthRow, TrafficBucket, TrafficRange } from "./traffic.js";

/** One request's record, keyed by its X-Gateway-Request-Id. */
export interface UsageEntry {
  readonly requestId: string;
  /** Epoch milliseconds when the request arrived. */
  readonly time: number;
  readonly token: string;
  readonly user: string;
  readonly group: string;
  /** The model as the client named it (billing uses this name). */
  readonly model: string;
  /** The model name sent upstream after model_map. */
  readonly upstreamModel?: string;
  readonly channel?: string;
  /** The fingerprint of the channel key that served the request (routing/key-health.ts's
   * keyFingerprint, never the key); absent when no key served it. */
  readonly key?: string;
  /** Route protocol the client spoke, e.g. "chat-completions". */
  readonly inboundProtocol: string;
  /** Protocol of the channel that answered: openai | anthropic | gemini. */
  readonly upstreamProtocol?: string;
  readonly usage: Usage;
  /** Charged cost in nano-units of the currency (0 for failed requests). */
  readonly costNano: bigint;
  /** How costNano was reached (billing/breakdown.ts): every component's quantity and unit
   * price and the multipliers; absent when nothing was priced. */
  readonly breakdown?: string;
  /** What the request cost the operator on its channel (channels[].cost, else the list
   * price), in nano-units; absent when nothing was priced. */
  readonly channelCostNano?: bigint;
  readonly status: number;
  /** Catalogue code of the gateway error, when there was one. */
  readonly error?: string;
  readonly durationMs: number;
  /** Time to the first response byte, when one was sent. */
  readonly ttfbMs?: number;
  /** True when usage was estimated (upstream reported none, or the client left). */
  readonly estimated: boolean;
  /** Epoch ms when the charge was refunded (an asynchronous job that failed); set only by
   * `Store.refund`, ignored by `record`. `costNano` keeps what was charged. */
  readonly refundedAt?: number;
  /** Client fields a converted request left out, as the client named them
   * (x-gateway-dropped-fields); absent when none were. */
  readonly droppedFields?: readonly string[];
}

/** What `Store.refund` did: refunded now (and whose spend it lowered), found it refunded
 * already, or found no such entry (not recorded, or not yet visible). */
export type RefundResult =
  | { readonly kind: "refunded"; readonly token: string; readonly user: string; readonly costNano: bigint }
  | { readonly kind: "already-refunded" }
  | { readonly kind: "not-recorded" };

/** Filters for listing usage-log entries; all optional, combined with AND. */
export interface LogFilter {
  readonly requestId?: string;
  readonly token?: string;
  readonly user?: string;
  readonly model?: string;
  /** The channel that answered. */
  readonly channel?: string;
  /** The fingerprint of the key that served. */
  readonly key?: string;
  readonly status?: number;
  /** A status class by its first digit: 4 is every status from 400 to 499. */
  readonly statusClass?: number;
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, exclusive. */
  readonly until?: number;
  /** Newest first; default 100. */
  readonly limit?: number;
}

/** `key`: the channel and fingerprint of the key that served ("channel/fingerprint");
 * `day`: the day the request arrived (YYYY-MM-DD) in the range's time zone. */
export type SpendDimension = "user" | "token" | "model" | "group" | "channel" | "key" | "day";

/** The time range of a spend query, and the zone its days are counted in. */
export interface SpendRange {
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, exclusive. */
  readonly until?: number;
  /** An IANA time zone for `by: "day"` (default UTC). */
  readonly timeZone?: string;
  /** Only this token's or user's requests (a customer's own report); absent: everyone's. */
  readonly subject?: UsageSubject;
}

/** The key of the spend row of requests no channel answered (`by: "channel"`), or no key
 * served (`by: "key"`). Rows by day are newest first; the others highest cost first. */
export const NO_CHANNEL = "";

/** Spend aggregated over one dimension. */
export interface SpendRow {
  readonly key: string;
  readonly requests: number;
  readonly usage: Usage;
  /** What was charged and not refunded. */
  readonly costNano: bigint;
  /** What those requests cost the operator on their channels, refunds left out, over the
   * entries that recorded it (see channelCostUnknown). */
  readonly channelCostNano: bigint;
  /** Requests charged something (and not refunded) whose cost to the operator was not
   * recorded (entries older than the column): while non-zero, channelCostNano is partial. */
  readonly channelCostUnknown: number;
}

/** Whose usage a budget counts. */
export interface UsageSubject {
  readonly kind: "token" | "user";
  readonly name: string;
}

/** What one subject used in one bucket of time: `bucket` is floor(time / bucketMs). */
export interface UsageBucket {
  readonly bucket: number;
  /** What was charged and not refunded, in nano-units. */
  readonly costNano: bigint;
  /** input + cache read + cache write + output (what tokens-per-minute budgets count). */
  readonly tokens: number;
}

export interface Store {
  /** Settled spend of a token, in nano-units. */
  spentByToken(token: string): bigint;
  /** Settled spend of a user, in nano-units. */
  spentByUser(user: string): bigint;
  /**
   * Records a finished request atomically: appends the usage entry and adds its cost to
   * the token's and the user's spend together. A request id already recorded is ignored
   * (no double charge). Reads see it at once; the promise resolves once it is durable
   * (survives kill -9) and rejects when it could not be written. Entries recorded while a
   * commit is under way share the next one (group commit, no timer).
   */
  record(entry: UsageEntry): Promise<void>;
  /** Makes every recorded entry durable now. Throws when some could not be written. */
  flush(): void;
  /**
   * Refunds a recorded request atomically and exactly once: marks its entry refunded at
   * `at` (epoch ms) and subtracts its cost from the token's and the user's spend together.
   * A second refund of the same request id changes nothing. Spend aggregates (`spend`)
   * leave refunded costs out. Durable when it returns.
   */
  refund(requestId: string, at: number): RefundResult;
  /** Usage-log entries matching the filter, newest first. */
  logs(filter: LogFilter): UsageEntry[];
  /** Spend grouped by a dimension over [since, until). */
  spend(by: SpendDimension, range: SpendRange): SpendRow[];
  /** What `subject` used from `sinceMs` (inclusive) on, per bucket of `bucketMs` (a positive
   * integer), oldest bucket first; refunded entries count nothing, and a bucket where nothing
   * was used is left out. */
  usageBuckets(subject: UsageSubject, sinceMs: number, bucketMs: number): UsageBucket[];
  /** Requests, errors and cost per bucket of `bucketMs` over the range, oldest first, empty
   * buckets left out (state/traffic.ts). */
  traffic(range: TrafficRange, bucketMs: number): TrafficBucket[];
  /** Each channel key's requests, errors and latency over the range (state/traffic.ts). */
  keyHealth(range: TrafficRange): KeyHealthRow[];
  /** Up to `limit` of the oldest entries older than `beforeMs` (time < beforeMs), oldest
   * first: what retention archives before it removes them. */
  oldestBefore?(beforeMs: number, limit: number): UsageEntry[];
  /** Removes up to `limit` of the oldest entries older than `beforeMs`, or (given `ids`)
   * those of them with these request ids, in one short transaction; the rollups and the
   * spend counters stay. How many were removed. SQLite: throws a locked error (see
   * sqlite-commit.ts isLocked) at once, never waiting, when another connection writes. */
  removeBefore?(beforeMs: number, limit: number, ids?: readonly string[]): number;
  /** Takes the right to sweep this store (one process at a time): its release, or
   * undefined when another process sweeps now. Absent: only this process uses it. */
  lockSweep?(): (() => void) | undefined;
  close(): void;
}
