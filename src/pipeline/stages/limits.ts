// Per-token rate limits from `limits`: total_requests counts every admitted request,
// failed ones included; request_rate counts requests that did not fail (a failed one is
// refunded). 429 with "N requests per M minutes" and Retry-After.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Admission, Limiter } from "../../state/interfaces.js";
import type { RateWindow } from "../../runtime/types.js";
import type { Stage } from "../compose.js";
import { answeredStatus, upstreamServed } from "../outcome.js";
import type { RequestContext } from "../context.js";
import { log } from "../../observability/log.js";
import { stateFailure } from "../state-failure.js";

/** "1 minute", "5 minutes", "30 seconds". */
export function describeWindow(w: RateWindow): string {
  const [n, unit] = w.perMs % 3_600_000 === 0 ? [w.perMs / 3_600_000, "hour"]
    : w.perMs % 60_000 === 0 ? [w.perMs / 60_000, "minute"] : [w.perMs / 1000, "second"];
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

function limited(what: string, w: RateWindow, retryAfterMs: number): GatewayError {
  return new GatewayError(errors.rateLimited,
    `${what} exceeded: at most ${w.max} requests per ${describeWindow(w)}. Retry after ${Math.ceil(retryAfterMs / 1000)} seconds.`,
    { headers: { "retry-after": String(Math.ceil(retryAfterMs / 1000)) } });
}

export function limitsStage(limiter: Limiter): Stage<RequestContext> {
  const limit = limitedStage(limiter);
  // Without limits (or for a poll) the stage is a plain call: no promise of its own.
  return (ctx, next) => {
    const { requestRate, totalRequests } = ctx.runtime.limits;
    // Polls (balance, job status) must not eat the token's request budget.
    if ((!requestRate && !totalRequests) || ctx.route?.poll) return next();
    return limit(ctx, next);
  };
}

/** An admission, or (the limiter unreachable) a 503; the free model list is let through then. */
async function take(limiter: Limiter, ctx: RequestContext, key: string, window: RateWindow, now: number): Promise<Admission | undefined> {
  try {
    return await limiter.take(key, window, now);
  } catch (err) {
    if (ctx.route?.handler === "models") return undefined;
    throw stateFailure(err, "rate limits");
  }
}

/** Takes a hit back; unreachable, it is logged (it lapses with its window). */
async function refund(limiter: Limiter, key: string, hit: number, requestId: string): Promise<void> {
  try {
    await limiter.refund(key, hit);
  } catch (err) {
    log.warn("rate limit hit not refunded", { requestId, error: String(err) });
  }
}

function limitedStage(limiter: Limiter): Stage<RequestContext> {
  return async (ctx, next) => {
    const { requestRate, totalRequests } = ctx.runtime.limits;
    const name = ctx.token!.name;
    const now = Date.now();
    const totalKey = `${name}\0total`;
    const rateKey = `${name}\0rate`;
    const hits: { total?: number; rate?: number } = {};
    if (totalRequests) {
      const a = await take(limiter, ctx, totalKey, totalRequests, now);
      if (a && !a.ok) throw limited("Total request limit", totalRequests, a.retryAfterMs);
      hits.total = a?.hit;
    }
    if (requestRate) {
      const a = await take(limiter, ctx, rateKey, requestRate, now);
      if (a && !a.ok) {
        if (hits.total !== undefined) await refund(limiter, totalKey, hits.total, ctx.id); // refused: not counted
        throw limited("Request rate limit", requestRate, a.retryAfterMs);
      }
      hits.rate = a?.hit;
    }
    let failed = true;
    try {
      await next();
      failed = !upstreamServed(ctx) && answeredStatus(ctx) >= 400;
    } finally {
      if (failed && hits.rate !== undefined) await refund(limiter, rateKey, hits.rate, ctx.id);
    }
  };
}
