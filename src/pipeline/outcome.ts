// How a request ended, one definition for logs, billing and rate limits: the status the
// client saw, and whether an upstream served it (an HTTP 2xx, or a WebSocket session).

import type { RequestContext } from "./context.js";

/** The status of the answer: the upstream's for an answer it served (its head may still be
 * withheld until settlement; 101 for a WebSocket session), 499 when the client left before
 * any answer. */
export function answeredStatus(ctx: RequestContext): number {
  const served = ctx.outcome?.served;
  if (served) return served.status;
  return ctx.res.headersSent ? ctx.res.statusCode : 499;
}

/** Whether an upstream served the request (what is charged, and counts as not failed). */
export function upstreamServed(ctx: RequestContext): boolean {
  const s = ctx.outcome?.served?.status;
  return s !== undefined && ((s >= 200 && s < 300) || s === 101);
}
