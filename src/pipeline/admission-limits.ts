// The limits a model call holds from its admission until it ends: a slot of the token's
// concurrency (limits.concurrent) and its token estimate in the token's and its group's
// tokens-per-minute budgets (limits.tokens_per_minute, groups.<name>.limits.
// tokens_per_minute); and the 429 each answers when it has no room.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { formatNano } from "../billing/cost.js";
import type { Calendar } from "../billing/calendar.js";
import type { Budget, Group, Model, Runtime, Token, User } from "../runtime/types.js";
import type { BudgetWindow, SlotTake, TokenBudgetTake, UsageSubject } from "../state/interfaces.js";
import type { Usage } from "../protocols/usage.js";

/** Endpoints whose calls are metered in tokens (the others bill seconds, images, …). */
const TOKEN_METERED = new Set(["chat", "responses", "embeddings", "realtime"]);

/** What tokens per minute count: input (cached and cache-write too) plus output. */
export function totalTokens(usage: Usage): number {
  return usage.input + usage.cacheRead + usage.cacheWrite + usage.output;
}

/** A budget with how its 429 names it. */
export interface NamedBudget extends TokenBudgetTake {
  /** "this token", "group video", "your account". */
  readonly whose: string;
  /** A budget that resets (absent: tokens per minute). */
  readonly budget?: Budget;
  /** The zone a calendar budget's period is counted in. */
  readonly timeZone?: string;
}

const none: readonly never[] = [];

/** The token's concurrency slot (its own limit, else the site-wide one) and its user's. */
export function concurrencySlots(runtime: Runtime, token: Token, user: User | undefined): readonly SlotTake[] {
  const max = token.limits?.concurrent ?? runtime.limits.concurrent;
  const ofUser = user?.limits?.concurrent;
  if (ofUser === undefined) return max === undefined ? none : [{ key: `${token.name}\0concurrent`, max }];
  const slots: SlotTake[] = max === undefined ? [] : [{ key: `${token.name}\0concurrent`, max }];
  slots.push({ key: `user\0${user!.name}\0concurrent`, max: ofUser });
  return slots;
}

/** The budgets a call of `model` holds `tokens` in: the token's (its own limit, else the
 * site-wide one), its user's, then its group's. */
export function tokenBudgets(runtime: Runtime, token: Token, user: User | undefined, group: Group, model: Model, tokens: number): readonly NamedBudget[] {
  const own = token.limits?.tokensPerMinute ?? runtime.limits.tokensPerMinute;
  const ofUser = user?.limits?.tokensPerMinute;
  if ((own === undefined && ofUser === undefined && group.tokensPerMinute === undefined) || !metered(model)) return none;
  const budgets: NamedBudget[] = [];
  if (own !== undefined) budgets.push({ key: `${token.name}\0tpm`, max: own, tokens, whose: "this token" });
  if (ofUser !== undefined) budgets.push({ key: `user\0${user!.name}\0tpm`, max: ofUser, tokens, whose: "your account" });
  if (group.tokensPerMinute !== undefined) budgets.push({ key: `group\0${group.name}\0tpm`, max: group.tokensPerMinute, tokens, whose: `group ${group.name}` });
  return budgets;
}

/** Rolling windows are counted in about this many buckets (usage leaves the window up to
 * one bucket late: never early). */
const ROLLING_BUCKETS = 60;

/**
 * The budgets that reset a call holds its worst case in: the token's own, then its user's
 * (the user's own list, else its plan's). Money budgets hold `amountNano` (the
 * pre-deduction), token budgets `tokens` (the estimate).
 */
export function accountBudgets(
  runtime: Runtime, calendar: Calendar, token: Token, user: User | undefined, amountNano: bigint, tokens: number, now: number,
): readonly NamedBudget[] {
  const ofToken = token.budgets;
  const ofUser = user?.budgets;
  if (!ofToken && !ofUser) return none;
  const budgets: NamedBudget[] = [];
  const money = Number(amountNano);
  for (const b of ofToken ?? none) {
    budgets.push(budgetTake(runtime, calendar, b, { kind: "token", name: token.name }, `${token.name}\0budget`, "this token", money, tokens, now));
  }
  for (const b of ofUser ?? none) {
    budgets.push(budgetTake(runtime, calendar, b, { kind: "user", name: user!.name }, `user\0${user!.name}\0budget`, "your account", money, tokens, now));
  }
  return budgets;
}

function budgetTake(
  runtime: Runtime, calendar: Calendar, budget: Budget, subject: UsageSubject, keyBase: string, whose: string,
  money: number, tokens: number, now: number,
): NamedBudget {
  const amount = budget.measure === "money" ? money : tokens;
  if (budget.calendar) {
    const period = calendar.period(budget.calendar, runtime.timeZone, now);
    const window: BudgetWindow = {
      measure: budget.measure, bucketMs: period.end - period.start, buckets: 1, periodEndMs: period.end,
      seed: { subject, sinceMs: period.start },
    };
    return { key: `${keyBase}\0${budget.id}@${period.start}`, max: budget.max, tokens: amount, window, whose, budget, timeZone: runtime.timeZone };
  }
  const length = budget.rollingMs!;
  const bucketMs = Math.max(1000, Math.ceil(length / ROLLING_BUCKETS));
  const buckets = Math.ceil(length / bucketMs) + 1;
  const first = Math.floor(now / bucketMs) - buckets + 1;
  const window: BudgetWindow = { measure: budget.measure, bucketMs, buckets, seed: { subject, sinceMs: first * bucketMs } };
  return { key: `${keyBase}\0${budget.id}`, max: budget.max, tokens: amount, window, whose, budget };
}

function metered(model: Model): boolean {
  for (const e of model.endpoints) if (TOKEN_METERED.has(e)) return true;
  return false;
}

function retryHeaders(retryAfterMs: number): { seconds: number; headers: Record<string, string> } {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return { seconds, headers: { "retry-after": String(seconds) } };
}

const plural = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? "" : "s"}`;

/** The 429 of a full concurrency limit. */
export function concurrencyFull(slot: SlotTake, retryAfterMs: number): GatewayError {
  const { seconds, headers } = retryHeaders(retryAfterMs);
  return new GatewayError(errors.rateLimited,
    `Concurrency limit exceeded: at most ${plural(slot.max, "request")} in flight for ${slot.key.startsWith("user\0") ? "your account" : "this token"}. Retry after ${plural(seconds, "second")}.`,
    { headers });
}

/** The 429 of a budget without room for the request's estimate now. */
export function tokensFull(budget: NamedBudget, retryAfterMs: number): GatewayError {
  if (budget.budget) return budgetFull(budget, budget.budget, retryAfterMs);
  const { seconds, headers } = retryHeaders(retryAfterMs);
  return new GatewayError(errors.rateLimited,
    `Token rate limit exceeded: at most ${budget.max} tokens per minute for ${budget.whose} (this request is estimated at ${budget.tokens}). ` +
    `Retry after ${plural(seconds, "second")}.`,
    { headers });
}

/** A budget's size and window as a refusal says them: "5 per day (UTC)", "5000000 tokens per 5h (rolling)". */
function describeBudget(budget: Budget, timeZone: string | undefined): string {
  const size = budget.measure === "money" ? formatNano(BigInt(budget.max)) : `${budget.max} tokens`;
  if (budget.calendar) return `${size} per ${budget.calendar}${timeZone ? ` (${timeZone})` : ""}`;
  return `${size} per ${budget.id.slice(budget.id.indexOf("/") + 1, -1)} (rolling)`;
}

/** The 429 of a budget that resets, without room for this request now: when it frees. An
 * answer that frees in more than a minute says not to retry (the SDKs would retry at once). */
function budgetFull(named: NamedBudget, budget: Budget, retryAfterMs: number): GatewayError {
  const { seconds, headers } = retryHeaders(retryAfterMs);
  const frees = new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  const need = budget.measure === "money" ? `may cost up to ${formatNano(BigInt(named.tokens))}` : `is estimated at ${named.tokens} tokens`;
  const when = budget.calendar ? `It resets at ${frees}` : `Enough of it frees by ${frees}`;
  return new GatewayError(errors.budgetExceeded,
    `Budget used up: ${named.whose} may use ${describeBudget(budget, named.timeZone)}, ` +
    `and what is left does not cover this request (it ${need}). ${when} (in ${plural(seconds, "second")}).`,
    { headers: seconds > 60 ? { ...headers, "x-should-retry": "false" } : headers });
}

/** The 429 of a request whose estimate alone is more than the budget: retrying cannot help
 * (x-should-retry: false tells the official SDKs not to). */
export function tooLargeForBudget(budget: NamedBudget): GatewayError {
  if (budget.budget) {
    const b = budget.budget;
    const need = b.measure === "money" ? `may cost up to ${formatNano(BigInt(budget.tokens))}` : `is estimated at ${budget.tokens} tokens`;
    return new GatewayError(errors.budgetExceeded,
      `Request too large for a budget: it ${need}, more than the whole budget of ${budget.whose} (${describeBudget(b, budget.timeZone)}), ` +
      "so it can never fit. Lower max_tokens or send less input.",
      { headers: { "x-should-retry": "false" } });
  }
  return new GatewayError(errors.rateLimited,
    `Request too large: it is estimated at ${budget.tokens} tokens (its input plus its max output tokens), more than the ` +
    `${budget.max} tokens per minute allowed for ${budget.whose}, so it can never fit. Lower max_tokens or send less input.`,
    { headers: { "x-should-retry": "false" } });
}
