// Writes a gateway error to the client in its protocol's shape. The request id header is
// already set on the response, so errors carry it too.

import type { RequestContext } from "./context.js";
import { protocolOfPath, isGoogleCaller, maxPathLength } from "./routes.js";
import type { Protocol } from "../runtime/types.js";
import type { GatewayError } from "../errors/gateway-error.js";
import { renderError } from "../protocols/render-error.js";
import { boundUnreadBody } from "./read-body.js";

/** Sends the error, or, when the response has already started, cuts it off. */
export function sendError(ctx: RequestContext, err: GatewayError): void {
  const res = ctx.res;
  if (res.headersSent) {
    if (!res.writableEnded) res.destroy();
    return;
  }
  const body = renderError(errorProtocol(ctx), err);
  // Refused before its body was all received: read and discard the rest, within bounds.
  if (!ctx.req.complete && !ctx.upgrade) boundUnreadBody(ctx.req, ctx.runtime.server);
  res.writeHead(err.status, {
    ...err.headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** The shape an error answers in: the route's once it is known; before, the protocol
 * guessed from the path (an unknown /v1 path called with a Google key: Gemini's). */
export function errorProtocol(ctx: RequestContext): Protocol {
  if (ctx.target) return ctx.target.protocol;
  const guessed = protocolOfPath(ctx.path);
  return guessed === "openai" && ctx.path.length <= maxPathLength && ctx.path.startsWith("/v1/") && isGoogleCaller(ctx.req.headers, ctx.query) ? "gemini" : guessed;
}
