// Pre-deduction: before any upstream call, reserve the request's worst-case cost against
// the token's quota and the user's balance (402 when it does not fit). The billing sink
// settles or releases it when the request ends, on every path.

import { costOf } from "../../billing/cost.js";
import { requestedMaxTokens, reserveUsage } from "../../billing/estimate.js";
import type { Ledger } from "../../billing/ledger.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

export function reserveStage(ledger: Ledger): Stage<RequestContext> {
  // Synchronous checks: returning next() directly spares a promise per request.
  return (ctx, next) => {
    const model = ctx.model!;
    const maxOutput = requestedMaxTokens(ctx.json) ?? model.maxOutputTokens;
    const worst = reserveUsage(ctx.body?.length ?? 0, maxOutput);
    const amount = costOf(worst, model.price, ctx.group!.multiplierPpm, ctx.units);
    ctx.reservation = ledger.reserve(ctx.token!, ctx.user!, amount);
    return next();
  };
}
