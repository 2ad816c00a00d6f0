// How a request ended, one definition for logs, billing and rate limits: the status the
// client saw, and whether an upstream served it (an HTTP 2xx, or a WebSocket session).

import type { RequestContext } from "./context.js";

/** The status of the answer: 101 for a WebSocket session that ran, 499 when the client
 * left before any answer. */
export function answeredStatus(ctx: RequestContext): number {
  if (ctx.upstreamStatus === 101) return 101;
  return ctx.res.headersSent ? ctx.res.statusCode : 499;
}

/** Whether an upstream served the request (what is charged, and counts as not failed). */
export function upstreamServed(ctx: RequestContext): boolean {
  const s = ctx.upstreamStatus;
  return s !== undefined && ((s >= 200 && s < 300) || s === 101);
}
