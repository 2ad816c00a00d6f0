// Pre-deduction: before any upstream call, reserve the request's worst-case cost against
// the token's quota and the user's balance (401/402 when used up or when it does not fit),
// taking in the same step the token's and the model's rate windows, a slot of the token's
// concurrency and the worst-case tokens in its tokens-per-minute budgets (429 when one has
// no room): one round trip on a shared store. The settle stage settles the reservation and
// gives back the holds when the request ends, on every path.

import { costOf } from "../../billing/cost.js";
import { reserveBytesTokens, reserveInputTokens, reserveUsage } from "../../billing/estimate.js";
import type { AdmitResult, Admitter } from "../../state/interfaces.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { concurrencyFull, concurrencySlots, tokenBudgets, tokensFull, tooLargeForBudget, totalTokens } from "../admission-limits.js";
import { modelWindow, windowFull, type LimitWindow } from "../rate-windows.js";
import { reservedOutput } from "../output-limit.js";
import { stateFailure } from "../state-failure.js";

const noWindows: readonly never[] = [];
/** Handlers whose body is the JSON of a model call. */
const jsonBodied: ReadonlySet<string> = new Set(["proxy", "messages"]);

/**
 * @param opts.session the opening of a realtime session: it takes the rate windows and a
 * concurrency slot and is refused when the money is used up, but reserves nothing and holds
 * no tokens-per-minute estimate: each response in it is admitted on its own (realtime-admission).
 */
export function reserveStage(admitter: Admitter, opts: { session?: boolean } = {}): Stage<RequestContext> {
  return async (ctx, next) => {
    const model = ctx.model!;
    const output = reservedOutput(ctx);
    // A JSON body is read for what its bytes undercount (non-ASCII text, media, tools); an
    // upload is counted by its size alone.
    const body = ctx.body;
    const input = body && jsonBodied.has(ctx.route!.handler) ? reserveInputTokens(body) : reserveBytesTokens(body?.length ?? 0);
    const worst = reserveUsage(input, output.tokens);
    const amount = opts.session ? 0n : costOf(worst, model.price, ctx.group!.multiplierPpm, ctx.units);
    const limits = ctx.limits;
    const ofModel = limits ? modelWindow(model) : undefined;
    if (limits && ofModel) limits.windows = [...limits.windows, ofModel];
    const windows: readonly LimitWindow[] = limits?.windows ?? noWindows;
    const slots = concurrencySlots(ctx.runtime, ctx.token!);
    const budgets = opts.session ? noWindows : tokenBudgets(ctx.runtime, ctx.token!, ctx.group!, model, totalTokens(worst));
    for (const b of budgets) if (b.tokens > b.max) throw tooLargeForBudget(b);
    let admitted: AdmitResult;
    try {
      admitted = await admitter.admit({
        requestId: ctx.id, token: ctx.token!, user: ctx.user!, amountNano: amount, windows, slots, budgets, now: Date.now(),
      });
    } catch (err) {
      throw stateFailure(err, "accounts"); // before any upstream call: nothing served
    }
    if (!admitted.ok) {
      if (limits) limits.outcome = "refused";
      if (admitted.refused === "slots") throw concurrencyFull(slots[admitted.index], admitted.retryAfterMs);
      if (admitted.refused === "tokens") throw tokensFull(budgets[admitted.index], admitted.retryAfterMs);
      throw windowFull(windows[admitted.index], admitted.retryAfterMs);
    }
    ctx.reservation = admitted.reservation;
    ctx.reservedUsage = worst;
    ctx.output = output;
    if (slots.length > 0 || budgets.length > 0) ctx.holds = admitted.holds;
    if (limits) {
      limits.outcome = "admitted";
      limits.hits = admitted.hits;
    }
    return next();
  };
}
