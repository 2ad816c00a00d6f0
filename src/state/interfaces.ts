// The state layer as a few small asynchronous interfaces, each with one job, so one
// gateway process or many (on Redis and PostgreSQL) behave alike: accounts (money held and
// spent), the usage log (the record of every request), a limiter (sliding windows) and a
// keyed store with TTLs (session affinity, channel health, job ownership). Stages, the CLI
// and the dashboard use only these; state/open.ts picks the implementations from the
// `store` and `ledger` URL schemes.

import type { RateWindow, Token, User } from "../runtime/types.js";
import type { KeyHealthRow, TrafficBucket, TrafficRange } from "./traffic.js";
import type { LogFilter, RefundResult, SpendDimension, SpendRange, SpendRow, UsageBucket, UsageEntry, UsageSubject } from "./store.js";

export type { UsageBucket, UsageSubject } from "./store.js";

/** A pre-deduction in flight: settle or release it exactly once. */
export interface Reservation {
  /** Unique per reservation (the request id does: one reservation per request). */
  readonly id: string;
  readonly token: string;
  readonly user: string;
  readonly amountNano: bigint;
}

/** What a settled request costs, and whose it is. */
export interface Charge {
  /** The request id: settling the same one twice charges once. */
  readonly requestId: string;
  readonly token: string;
  readonly user: string;
  readonly costNano: bigint;
}

/**
 * Money per token and per user: settled spend, and reservations in flight. Every method is
 * atomic across every process sharing the implementation: a quota is never overspent, even
 * by concurrent requests on several gateways.
 */
export interface Accounts {
  /** Throws GatewayError 401 (token quota used up) or 402 (balance used up). */
  checkNotExhausted(token: Token, user: User): Promise<void>;
  /**
   * In one atomic step: checks the token's quota and the user's balance are not used up,
   * that `quota − spent − reserved` and `credit − spent − reserved` each cover `amountNano`,
   * and holds it on both. Throws GatewayError 401/402 (used up) or 402 pre-deduction failed
   * (naming what remains and what was required) otherwise.
   */
  reserve(requestId: string, token: Token, user: User, amountNano: bigint): Promise<Reservation>;
  /**
   * In one atomic step: frees the reservation (when given) and adds the charge to the
   * token's and the user's spend. Settling the same reservation again, or a charge without
   * a reservation whose request id was settled before, charges nothing more (a request
   * settles with its reservation, or without one, never both).
   * Resolves once the spend is updated; the usage log (UsageLog.append) is the durable
   * record that rebuilds it.
   */
  settle(reservation: Reservation | undefined, charge: Charge): Promise<void>;
  /** Frees a reservation without charging. Releasing twice is harmless. */
  release(reservation: Reservation): Promise<void>;
  /** Lowers the token's and the user's spend by a refunded charge (UsageLog.refund said so). */
  refund(charge: Charge): Promise<void>;
  spentByToken(token: string): Promise<bigint>;
  spentByUser(user: string): Promise<bigint>;
  /** Money reserved by requests in flight for a user (every process). */
  reservedByUser(user: string): Promise<bigint>;
  /** Reservations this process holds (neither settled nor released): a gauge. */
  readonly reservationsHeld: number;
  close(): Promise<void>;
}

/** Settled spend of every token and user (charged minus refunded). */
export interface SpendTotals {
  readonly tokens: ReadonlyMap<string, bigint>;
  readonly users: ReadonlyMap<string, bigint>;
}

/**
 * The usage log: one entry per request id, the system of record for what was charged.
 * Appends are committed in groups (each commit starts as soon as the previous one ends).
 */
export interface UsageLog {
  /** Resolves once the entry is durable (survives kill -9), rejects when it could not be
   * written. An entry whose request id is recorded already is ignored. */
  append(entry: UsageEntry): Promise<void>;
  /** Marks an entry refunded at `at` (epoch ms), exactly once; what it refunded. */
  refund(requestId: string, at: number): Promise<RefundResult>;
  /** Entries matching the filter, newest first. Sees every append that has resolved. */
  logs(filter: LogFilter): Promise<UsageEntry[]>;
  /** Spend grouped by a dimension over [since, until), refunds left out (days in
   * range.timeZone, newest first). */
  spend(by: SpendDimension, range: SpendRange): Promise<SpendRow[]>;
  /** Settled spend of one token / user (what Accounts start from). */
  spentByToken(token: string): Promise<bigint>;
  spentByUser(user: string): Promise<bigint>;
  /** What a token or a user used from `sinceMs` (inclusive) on, per bucket of `bucketMs`
   * (bucket = floor(time / bucketMs)), oldest first: refunds count nothing, empty buckets
   * are left out. What a budget that resets is seeded from. Sees every append that has
   * resolved. */
  usageBuckets(subject: UsageSubject, sinceMs: number, bucketMs: number): Promise<UsageBucket[]>;
  /** Live traffic, cluster-wide: requests, errors (status >= 400 or a gateway error) and the
   * cost charged and not refunded, per bucket of `bucketMs` (bucket = floor(time / bucketMs))
   * over [sinceMs, untilMs), oldest first, empty buckets left out. */
  traffic(range: TrafficRange, bucketMs: number): Promise<TrafficBucket[]>;
  /** Each channel key's requests and errors over the range, exact, and its latency p50/p95
   * over the newest LATENCY_SAMPLE requests of the range (bounded); by channel, then key. */
  keyHealth(range: TrafficRange): Promise<KeyHealthRow[]>;
  /** Every token's and user's settled spend: what shared Accounts are rebuilt from. */
  spendTotals(): Promise<SpendTotals>;
  /** Makes everything appended durable now. Rejects when some could not be written. */
  flush(): Promise<void>;
  /**
   * Retention (state/retention.ts): removes up to `limit` of the oldest entries older than
   * `beforeMs` in one short transaction, handing them to `archive` first when given (none
   * is removed when it rejects); how many were removed. Daily rollups and spend counters
   * stay, so spend reports and balances do not change. Absent: the log cannot remove.
   */
  removeBefore?(beforeMs: number, limit: number, archive?: (entries: readonly UsageEntry[]) => Promise<void>): Promise<number>;
  /** Runs `sweep` unless another process sweeps this log now: false, without running it,
   * when one does (PostgreSQL: an advisory lock; a SQLite file: a lock file). */
  sweepAlone?(sweep: () => Promise<void>): Promise<boolean>;
  /** A log on a server (PostgreSQL) says whether it is reachable now; State.health merges it. */
  health?(): StateHealth;
  close(): Promise<void>;
}

/** A hit that was admitted; pass it back to refund it. */
export type Hit = number;

export type Admission =
  | { readonly ok: true; readonly hit: Hit }
  | { readonly ok: false; readonly retryAfterMs: number };

/** Sliding-window rate limits, exact and shared by every process on the implementation. */
export interface Limiter {
  /** Admits one hit for `key` if fewer than `window.max` fall within the last `window.perMs`. */
  take(key: string, window: RateWindow, now: number): Promise<Admission>;
  /** Takes back an admitted hit (a refused or failed request that must not count). */
  refund(key: string, hit: Hit): Promise<void>;
}

/** One rate window a request takes a hit in. */
export interface WindowTake {
  readonly key: string;
  readonly window: RateWindow;
}

/** How a budget counts what requests used. */
export interface BudgetWindow {
  /** tokens: input + output tokens (what the request really used); money: nano-units of
   * its charge. */
  readonly measure: "tokens" | "money";
  /** Usage is counted per bucket of this many ms (floor(time / bucketMs)). */
  readonly bucketMs: number;
  /** A rolling window: usage in bucket b counts until (b + buckets) × bucketMs. */
  readonly buckets: number;
  /** A calendar period: its end (epoch ms). All it counted frees then; the budget's key
   * names the period, so the next one starts empty. */
  readonly periodEndMs?: number;
  /** Seeded from the usage log when its counter is new (after a restart, or in a new
   * period): whose usage, and from when. Absent: counted from nothing (tokens per minute). */
  readonly seed?: { readonly subject: UsageSubject; readonly sinceMs: number };
}

/** A budget a request holds its estimate in until it finishes: tokens per minute, or a
 * budget in money or tokens over a rolling window or a calendar period. */
export interface TokenBudgetTake {
  /** Whose budget: a token's, a user's, a group's (shared by its tokens). */
  readonly key: string;
  /** Most the budget admits: usage counted in its window, plus the estimates held by
   * requests in flight, plus this request's estimate. Money in nano-units (exact below
   * 2^53: 9,007,199 of the currency). */
  readonly max: number;
  /** This request's worst case (a whole number of tokens, or of nano-units), held until it
   * finishes. */
  readonly tokens: number;
  /** Absent: tokens in a sliding minute (tokens_per_minute). */
  readonly window?: BudgetWindow;
}

/** A concurrency limit: the request holds one of `max` slots until it finishes. */
export interface SlotTake {
  readonly key: string;
  readonly max: number;
}

/** What a request needs before its upstream call: hits in its rate windows, a slot in each
 * concurrency limit, its estimate in each tokens-per-minute budget, and its pre-deduction. */
export interface AdmitRequest {
  /** Names the reservation, the slots and the holds (one admission per request). */
  readonly requestId: string;
  readonly token: Token;
  readonly user: User;
  /** Held against the token's quota and the user's balance until settled or released. */
  readonly amountNano: bigint;
  readonly windows: readonly WindowTake[];
  readonly slots?: readonly SlotTake[];
  readonly budgets?: readonly TokenBudgetTake[];
  /** Epoch ms the windows and budgets are measured at. */
  readonly now: number;
}

/** The slots and token holds an admitted request keeps until Admitter.finish. */
export interface LimitHolds {
  readonly requestId: string;
  readonly slots: readonly SlotTake[];
  readonly budgets: readonly TokenBudgetTake[];
}

/** Which kind of limit refused an admission: `index` is its place in its list. */
export type LimitKind = "window" | "slots" | "tokens";

export type AdmitResult =
  /** `hits[i]` is the hit taken in `windows[i]` (Limiter.refund takes it back); the
   * reservation and the holds go back through Admitter.finish. */
  | { readonly ok: true; readonly reservation: Reservation; readonly hits: readonly Hit[]; readonly holds: LimitHolds }
  /** `windows[index]` is full, `slots[index]` are all taken, or `budgets[index]` has no
   * room for the estimate: nothing was taken, held or reserved. */
  | { readonly ok: false; readonly refused: LimitKind; readonly index: number; readonly retryAfterMs: number };

/** What a finished request settles: its reservation and holds, its charge, and the tokens
 * it really used (counted in its budgets in place of its estimate). */
export interface Finish {
  readonly reservation: Reservation | undefined;
  readonly holds: LimitHolds | undefined;
  readonly charge: Charge;
  readonly usedTokens: number;
  /** Epoch ms the used tokens are counted at. */
  readonly now: number;
}

/**
 * Admission of a billed request in one step, so a shared store answers it in one round
 * trip: every rate window, concurrency slot and tokens-per-minute hold, then the
 * pre-deduction, all or nothing; and its end in one step too.
 */
export interface Admitter {
  /** Money refusals throw what Accounts.reserve throws (401, 402), with nothing left taken. */
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /**
   * In one step: Accounts.settle(reservation, charge), each hold replaced by the tokens
   * really used (counted from `now` for a minute), each slot freed. Once per admission
   * (a second call would count the tokens again; it charges once, as Accounts.settle).
   */
  finish(finish: Finish): Promise<void>;
  /**
   * Told, for a finish that charged something, when both that finish and the request's
   * usage-log entry are done (written or failed): until then a shared store keeps what it
   * needs to make its spend agree with the log should this process die.
   */
  whenLogged?(requestId: string, logged: Promise<unknown>): void;
}

/** A string store with a time to live per key: session affinity, channel health, jobs. */
export interface KeyedStore {
  /** The value, or undefined when absent or expired; `refreshTtlMs` restarts its TTL. */
  get(key: string, opts?: { readonly refreshTtlMs?: number }): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Sets `key` only when it holds nothing (or its value expired), atomically across every
   * process on the store: true when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Every live entry whose key starts with `prefix` (bounded by what the store holds). */
  entries(prefix: string): AsyncIterable<readonly [key: string, value: string]>;
}

/** What a `/healthz` reports of a shared server: which is unreachable now. */
export interface StateHealth {
  /** Names of the servers unreachable now ("redis", "postgres"); empty when all answer. */
  readonly degraded: readonly string[];
}

/** The state one gateway process uses, opened from `store` and `ledger`. */
export interface State {
  readonly accounts: Accounts;
  readonly usageLog: UsageLog;
  readonly limiter: Limiter;
  /** Rate windows and the pre-deduction together, over `accounts` and `limiter`. */
  readonly admitter: Admitter;
  readonly keyed: KeyedStore;
  /** Whether the state is on a server shared by several processes (each call a round trip),
   * rather than in this process. */
  readonly shared: boolean;
  health(): StateHealth;
  close(): Promise<void>;
}
