// Pre-deduction: before any upstream call, reserve the request's worst-case cost against
// the token's quota and the user's balance (402 when it does not fit). The billing sink
// settles or releases it when the request ends, on every path.

import { costOf } from "../../billing/cost.js";
import { requestedMaxTokens, reserveUsage } from "../../billing/estimate.js";
import type { Accounts } from "../../state/interfaces.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { stateFailure } from "../state-failure.js";

export function reserveStage(accounts: Accounts): Stage<RequestContext> {
  return async (ctx, next) => {
    const model = ctx.model!;
    const maxOutput = requestedMaxTokens(ctx.json) ?? model.maxOutputTokens;
    const worst = reserveUsage(ctx.body?.length ?? 0, maxOutput);
    const amount = costOf(worst, model.price, ctx.group!.multiplierPpm, ctx.units);
    try {
      ctx.reservation = await accounts.reserve(ctx.id, ctx.token!, ctx.user!, amount);
    } catch (err) {
      throw stateFailure(err, "accounts"); // before any upstream call: nothing served
    }
    return next();
  };
}
