// The admit phase: everything a request takes before it is served, in one step. A model
// call (admission "reserve") reserves its worst-case cost against the token's quota and the
// user's balance (401/402 when used up or when it does not fit) and takes, in the same
// Admitter.admit (one round trip on a shared store), the token's and the model's rate
// windows, a slot of the token's concurrency and the worst-case tokens in its
// tokens-per-minute budgets (429 when one has no room). A realtime session's opening
// ("session") takes the windows and a slot, no money: each response is admitted on its own
// (realtime-admission.ts). The other routes ("windows") take the token's rate windows only,
// and a job fetch its job's model's too. Settlement (settle.ts) gives all of it back.

import { costOf, worstCase } from "../../billing/cost.js";
import { reserveBytesTokens, reserveInputTokens, reserveUsage } from "../../billing/estimate.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Group, Model, Runtime, Token, User } from "../../runtime/types.js";
import type { AdmitRequest, AdmitResult, Admitter, Limiter } from "../../state/interfaces.js";
import { remainingOf } from "../../state/money-refusals.js";
import { give, type Admission, type Call, type Has, type Needs, type Stage } from "../context.js";
import {
  accountBudgets, concurrencyFull, concurrencySlots, tokenBudgets, tokensFull, tooLargeForBudget, totalTokens, type NamedBudget,
} from "../admission-limits.js";
import { Calendar } from "../../billing/calendar.js";
import { modelWindow, takeWindows, tokenWindows, windowFull, type LimitWindow } from "../rate-windows.js";
import { reservedOutput } from "../output-limit.js";
import type { Route } from "../routes.js";
import { stateFailure } from "../state-failure.js";

const noWindows: readonly never[] = [];

/** What a request refused by a window, a slot or a budget took: nothing. */
const refusal: Admission = Object.freeze({
  refused: true, reservation: undefined, holds: undefined, reservedUsage: undefined, output: undefined, windows: noWindows, hits: noWindows,
});
/** What a request takes when it has no windows (or the limiter let the model list through). */
const nothingTaken: Admission = Object.freeze({ ...refusal, refused: false });

type ModelCall = Needs<"target" | "caller" | "account" | "call">;
type Polled = Needs<"target" | "caller" | "account">;

/** The token's windows, then the model's (when it has one). */
function windowsOf(runtime: Runtime, token: Token, user: User, model: Model | undefined): readonly LimitWindow[] {
  const own = tokenWindows(runtime, token, user);
  const ofModel = model && modelWindow(model);
  if (!ofModel) return own ?? noWindows;
  if (!own) return [ofModel];
  own.push(ofModel);
  return own;
}

/**
 * Admits, holding the worst case; with billing.pre_deduction: available, a worst case the
 * quota or the balance cannot cover is held as what is left instead (each a second, atomic
 * try: what is left may have changed meanwhile), so long as something is.
 */
async function admitHolding(admitter: Admitter, request: AdmitRequest, policy: Runtime["preDeduction"]): Promise<AdmitResult> {
  let amountNano = request.amountNano;
  for (let attempt = 0; ; attempt++) {
    try {
      return await admitter.admit(amountNano === request.amountNano ? request : { ...request, amountNano });
    } catch (err) {
      const left = remainingOf(err);
      // Two tries more at most: the quota's remainder, then the balance's (or the reverse).
      if (policy !== "available" || left === undefined || left <= 0n || left >= amountNano || attempt >= 2) throw err;
      amountNano = left;
    }
  }
}

/** Tokens per minute (the token's, the user's, the group's), then the budgets that reset. */
function allBudgets(
  runtime: Runtime, calendar: Calendar, token: Token, user: User, group: Group, model: Model, amountNano: bigint, tokens: number,
): readonly NamedBudget[] {
  const perMinute = tokenBudgets(runtime, token, user, group, model, tokens);
  if (!token.budgets && !user.budgets) return perMinute;
  const resetting = accountBudgets(runtime, calendar, token, user, amountNano, tokens, Date.now());
  return perMinute.length === 0 ? resetting : [...perMinute, ...resetting];
}

/**
 * The admission of a model call: its reservation, windows, slot and budgets.
 * @param session the opening of a realtime session: it takes the rate windows and a
 * concurrency slot and is refused when the money is used up, but reserves nothing and holds
 * no tokens-per-minute estimate
 */
export function admitCallStage(admitter: Admitter, route: Route, session: boolean): Stage<ModelCall, Has<"admission">> {
  const fromText = route.inputEstimate === "text";
  // Calendar budgets' periods, remembered until they end (one per stage: no shared state).
  const calendar = new Calendar();
  return async (ctx, next) => {
    const call: Call = ctx.call;
    const model = call.model;
    const token = ctx.caller;
    const output = reservedOutput(ctx);
    // A JSON body is read for what its bytes undercount (non-ASCII text, media, tools); an
    // upload is counted by its size alone.
    const input = fromText ? reserveInputTokens(call.body) : reserveBytesTokens(call.body.length);
    const worst = worstCase(reserveUsage(input, output.tokens), model.price);
    const group = ctx.account.group;
    const worstAmount = session ? 0n : costOf(worst, model.price, group.multiplierPpm, ctx.rules?.units);
    const policy = ctx.runtime.preDeduction;
    const amount = policy === "none" ? 0n : worstAmount;
    const user = ctx.account.user;
    const windows = windowsOf(ctx.runtime, token, user, model);
    const slots = concurrencySlots(ctx.runtime, token, user);
    const budgets = session ? noWindows : allBudgets(ctx.runtime, calendar, token, user, group, model, worstAmount, totalTokens(worst));
    for (const b of budgets) if (b.tokens > b.max) throw tooLargeForBudget(b);
    let admitted: AdmitResult;
    try {
      admitted = await admitHolding(admitter, { requestId: ctx.id, token, user, amountNano: amount, windows, slots, budgets, now: Date.now() }, policy);
    } catch (err) {
      throw stateFailure(err, "accounts"); // before any upstream call: nothing served
    }
    if (!admitted.ok) {
      give(ctx, "admission", refusal);
      if (admitted.refused === "slots") throw concurrencyFull(slots[admitted.index], admitted.retryAfterMs);
      if (admitted.refused === "tokens") throw tokensFull(budgets[admitted.index], admitted.retryAfterMs);
      throw windowFull(windows[admitted.index], admitted.retryAfterMs);
    }
    return next(give(ctx, "admission", {
      refused: false, reservation: admitted.reservation, holds: slots.length > 0 || budgets.length > 0 ? admitted.holds : undefined,
      reservedUsage: worst, output, windows, hits: admitted.hits,
    }));
  };
}

/**
 * The admission of a request that is not a model call: the token's rate windows (a job
 * fetch: and its job's model's), taken in order; a full one gives back the hits before it
 * and answers 429. Refused or not taken, it counts nowhere.
 * @param limiter a route that answers without state (the model list) is let through while it
 * is unreachable
 */
export function admitWindowsStage(limiter: Limiter, route: Route): Stage<Polled, Has<"admission">> {
  return (ctx, next) => {
    // Only a job fetch's job-access phase gives a job.
    const job = ctx.job;
    const user = ctx.account.user;
    const windows = job ? windowsOf(ctx.runtime, ctx.caller, user, ctx.runtime.models.get(job.model)) : tokenWindows(ctx.runtime, ctx.caller, user);
    // Without windows the stage is a plain call: no promise of its own.
    if (!windows || windows.length === 0) return next(give(ctx, "admission", nothingTaken));
    return takeWindows(limiter, windows, ctx.id).then(
      (hits) => next(give(ctx, "admission", {
        refused: false, reservation: undefined, holds: undefined, reservedUsage: undefined, output: undefined, windows, hits,
      })),
      (err: unknown) => {
        if (!(err instanceof GatewayError) && route.answersWithoutState) return next(give(ctx, "admission", nothingTaken));
        give(ctx, "admission", refusal);
        throw err instanceof GatewayError ? err : stateFailure(err, "rate limits");
      },
    );
  };
}
