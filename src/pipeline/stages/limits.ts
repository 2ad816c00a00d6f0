// Per-token rate limits from `limits`: total_requests counts every admitted request,
// failed ones included; request_rate counts requests that did not fail (a failed one is
// refunded). 429 with "N requests per M minutes" and Retry-After.
// A billed request's windows are taken by the reserve stage together with its
// pre-deduction (one round trip on a shared store), with the model's own window
// (models.<name>.limits.request_rate) once the model is known; other requests take the
// token's windows here (token counting routes are free: no model window).

import type { Hit, Limiter } from "../../state/interfaces.js";
import type { Stage } from "../compose.js";
import { answeredStatus, upstreamServed } from "../outcome.js";
import type { RequestContext } from "../context.js";
import { log } from "../../observability/log.js";
import { stateFailure } from "../state-failure.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { anyModelWindow, refundHits, takeWindows, tokenWindows, type LimitWindow, type PendingLimits } from "../rate-windows.js";

/**
 * @param admitsLater whether the request's handler takes the windows itself once the model
 * is known (the reserve stage, with the reservation; the job-access stage)
 */
export function limitsStage(limiter: Limiter, admitsLater: (ctx: RequestContext) => boolean): Stage<RequestContext> {
  // Whether a config has model windows, looked up once per config generation.
  const modelWindows = new WeakMap<RequestContext["runtime"], boolean>();
  const hasModelWindows = (runtime: RequestContext["runtime"]): boolean => {
    let has = modelWindows.get(runtime);
    if (has === undefined) modelWindows.set(runtime, (has = anyModelWindow(runtime)));
    return has;
  };
  // Without limits (or for a poll) the stage is a plain call: no promise of its own.
  return (ctx, next) => {
    // Balance polls must not eat the token's request budget; a job fetch reaches the upstream.
    if (ctx.route?.poll && !ctx.route.rateLimited) return next();
    const windows = tokenWindows(ctx.runtime, ctx.token!.name);
    if (admitsLater(ctx)) {
      if (windows || hasModelWindows(ctx.runtime)) return whenAdmitted(limiter, windows ?? [], ctx, next);
      return next();
    }
    return windows ? takenHere(limiter, windows, ctx, next) : next();
  };
}

/** Whether the finished request failed (it is not counted by windows that refund failures). */
function failed(ctx: RequestContext): boolean {
  return !upstreamServed(ctx) && answeredStatus(ctx) >= 400;
}

/** Hands the windows to the reserve stage; afterwards refunds a failed request's hits, and
 * counts a request that ended before it was admitted (a bad body) in the windows that count
 * failures. */
async function whenAdmitted(limiter: Limiter, windows: readonly LimitWindow[], ctx: RequestContext, next: () => Promise<void>): Promise<void> {
  const pending: PendingLimits = { windows, outcome: "pending" };
  ctx.limits = pending;
  let ok = false;
  try {
    await next();
    ok = !failed(ctx);
  } finally {
    // The reserve stage may have added the model's window.
    if (pending.outcome === "admitted") {
      if (!ok) await refundFailure(limiter, pending.windows, pending.hits!, ctx.id);
    } else if (pending.outcome === "pending") {
      await countUnadmitted(limiter, windows, ctx);
    }
  }
}

/** Takes each window now, in order; a full one refunds the hits before it and answers 429. */
async function takenHere(limiter: Limiter, windows: readonly LimitWindow[], ctx: RequestContext, next: () => Promise<void>): Promise<void> {
  let hits: Hit[];
  try {
    hits = await takeWindows(limiter, windows, ctx.id);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    // The free model list is let through while the limiter is unreachable.
    if (ctx.route?.handler === "models") return next();
    throw stateFailure(err, "rate limits");
  }
  let ok = false;
  try {
    await next();
    ok = !failed(ctx);
  } finally {
    if (!ok) await refundFailure(limiter, windows, hits, ctx.id);
  }
}

/** A failed request's hits in the windows that do not count failures are taken back. */
function refundFailure(limiter: Limiter, windows: readonly LimitWindow[], hits: readonly Hit[], requestId: string): Promise<void> {
  return refundHits(limiter, windows, hits, requestId, (w) => w.refundsFailure);
}

/** A request that failed before its admission still counts where failures count. */
async function countUnadmitted(limiter: Limiter, windows: readonly LimitWindow[], ctx: RequestContext): Promise<void> {
  const now = Date.now();
  for (const w of windows) {
    if (w.refundsFailure) continue;
    try {
      await limiter.take(w.key, w.window, now);
    } catch (err) {
      log.warn("rate limit hit not counted", { requestId: ctx.id, error: String(err) });
    }
  }
}
