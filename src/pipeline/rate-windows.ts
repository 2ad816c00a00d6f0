// A token's request-count windows (limits.total_requests, limits.request_rate) and a model's
// (models.<name>.limits.request_rate, every token's calls together), as the admit phase takes
// them (with the pre-deduction, one round trip on a shared store, or alone); the 429 a full
// window answers; and what settlement does with them once the request ends: a failed
// request's hits given back where failures do not count, and a request that ended before its
// admission counted where they do.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Model, RateWindow, Runtime, Token, User } from "../runtime/types.js";
import { log } from "../observability/log.js";
import type { Hit, Limiter, WindowTake } from "../state/interfaces.js";

export interface LimitWindow extends WindowTake {
  /** How the 429 names it: "Total request limit". */
  readonly what: string;
  /** request_rate counts requests that did not fail: a failed request's hit is taken back. */
  readonly refundsFailure: boolean;
}

/**
 * The token's windows in the order they are taken (its own limits, else the site-wide
 * ones), then its user's (all the user's tokens together), or undefined when there are none.
 */
export function tokenWindows(runtime: Runtime, token: Token, user: User | undefined): LimitWindow[] | undefined {
  const own = token.limits;
  const requestRate = own?.requestRate ?? runtime.limits.requestRate;
  const totalRequests = own?.totalRequests ?? runtime.limits.totalRequests;
  const ofUser = user?.limits;
  if (!requestRate && !totalRequests && !ofUser?.requestRate && !ofUser?.totalRequests) return undefined;
  const windows: LimitWindow[] = [];
  if (totalRequests) windows.push({ key: `${token.name}\0total`, window: totalRequests, what: "Total request limit", refundsFailure: false });
  if (requestRate) windows.push({ key: `${token.name}\0rate`, window: requestRate, what: "Request rate limit", refundsFailure: true });
  if (ofUser?.totalRequests) {
    windows.push({ key: `user\0${user!.name}\0total`, window: ofUser.totalRequests, what: "Total request limit of your account", refundsFailure: false });
  }
  if (ofUser?.requestRate) {
    windows.push({ key: `user\0${user!.name}\0rate`, window: ofUser.requestRate, what: "Request rate limit of your account", refundsFailure: true });
  }
  return windows;
}

/** The model's request rate, shared by every token; refunded on failure as request_rate. */
export function modelWindow(model: Model): LimitWindow | undefined {
  if (!model.requestRate) return undefined;
  return { key: `model\0${model.name}\0rate`, window: model.requestRate, what: `Request rate limit of model ${model.name}`, refundsFailure: true };
}

/** "1 minute", "5 minutes", "30 seconds". */
export function describeWindow(w: RateWindow): string {
  const [n, unit] = w.perMs % 3_600_000 === 0 ? [w.perMs / 3_600_000, "hour"]
    : w.perMs % 60_000 === 0 ? [w.perMs / 60_000, "minute"] : [w.perMs / 1000, "second"];
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/** The 429 of a full window, with Retry-After. */
export function windowFull(w: LimitWindow, retryAfterMs: number): GatewayError {
  const seconds = Math.ceil(retryAfterMs / 1000);
  return new GatewayError(errors.rateLimited,
    `${w.what} exceeded: at most ${w.window.max} requests per ${describeWindow(w.window)}. Retry after ${seconds} seconds.`,
    { headers: { "retry-after": String(seconds) } });
}

/** Takes each window in order; a full one (429) or a limiter failure (thrown as is) gives
 * back the hits taken before it, so a refused request is counted nowhere. */
export async function takeWindows(limiter: Limiter, windows: readonly LimitWindow[], requestId: string): Promise<Hit[]> {
  const now = Date.now();
  const hits: Hit[] = [];
  try {
    for (const w of windows) {
      const admission = await limiter.take(w.key, w.window, now);
      if (!admission.ok) throw windowFull(w, admission.retryAfterMs);
      hits.push(admission.hit);
    }
  } catch (err) {
    await refundHits(limiter, windows, hits, requestId);
    throw err;
  }
  return hits;
}

/** Takes back `hits[i]` of `windows[i]` (those `which` picks); one not taken back is logged
 * (it lapses with its window). */
export async function refundHits(limiter: Limiter, windows: readonly LimitWindow[], hits: readonly Hit[], requestId: string,
  which: (w: LimitWindow) => boolean = () => true): Promise<void> {
  for (let i = 0; i < hits.length; i++) {
    if (!which(windows[i])) continue;
    try {
      await limiter.refund(windows[i].key, hits[i]);
    } catch (err) {
      log.warn("rate limit hit not refunded", { requestId, error: String(err) });
    }
  }
}

/** A failed request's hits in the windows that do not count failures are taken back. */
export function refundFailure(limiter: Limiter, windows: readonly LimitWindow[], hits: readonly Hit[], requestId: string): Promise<void> {
  return refundHits(limiter, windows, hits, requestId, (w) => w.refundsFailure);
}

/** A request that failed before its admission still counts where failures count. */
export async function countUnadmitted(limiter: Limiter, windows: readonly LimitWindow[], requestId: string): Promise<void> {
  const now = Date.now();
  for (const w of windows) {
    if (w.refundsFailure) continue;
    try {
      await limiter.take(w.key, w.window, now);
    } catch (err) {
      log.warn("rate limit hit not counted", { requestId, error: String(err) });
    }
  }
}
