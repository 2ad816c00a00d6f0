// The limits a model call holds from its admission until it ends: a slot of the token's
// concurrency (limits.concurrent) and its token estimate in the token's and its group's
// tokens-per-minute budgets (limits.tokens_per_minute, groups.<name>.limits.
// tokens_per_minute); and the 429 each answers when it has no room.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Group, Model, Runtime, Token, User } from "../runtime/types.js";
import type { SlotTake, TokenBudgetTake } from "../state/interfaces.js";
import type { Usage } from "../protocols/usage.js";

/** Endpoints whose calls are metered in tokens (the others bill seconds, images, …). */
const TOKEN_METERED = new Set(["chat", "responses", "embeddings", "realtime"]);

/** What tokens per minute count: input (cached and cache-write too) plus output. */
export function totalTokens(usage: Usage): number {
  return usage.input + usage.cacheRead + usage.cacheWrite + usage.output;
}

/** A budget with how its 429 names it. */
export interface NamedBudget extends TokenBudgetTake {
  /** "this token", "group video". */
  readonly whose: string;
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
  const { seconds, headers } = retryHeaders(retryAfterMs);
  return new GatewayError(errors.rateLimited,
    `Token rate limit exceeded: at most ${budget.max} tokens per minute for ${budget.whose} (this request is estimated at ${budget.tokens}). ` +
    `Retry after ${plural(seconds, "second")}.`,
    { headers });
}

/** The 429 of a request whose estimate alone is more than the budget: retrying cannot help
 * (x-should-retry: false tells the official SDKs not to). */
export function tooLargeForBudget(budget: NamedBudget): GatewayError {
  return new GatewayError(errors.rateLimited,
    `Request too large: it is estimated at ${budget.tokens} tokens (its input plus its max output tokens), more than the ` +
    `${budget.max} tokens per minute allowed for ${budget.whose}, so it can never fit. Lower max_tokens or send less input.`,
    { headers: { "x-should-retry": "false" } });
}
