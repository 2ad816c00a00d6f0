// Matches the path to a route; unknown paths get a JSON 404 in the caller's protocol shape.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { matchRoute } from "../../server/routes.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

/** Longest path accepted; longer ones are 404 without further parsing. */
const maxPathLength = 2048;

function isAnthropicCaller(ctx: RequestContext): boolean {
  const h = ctx.req.headers;
  return h["anthropic-version"] !== undefined || (h["x-api-key"] !== undefined && h.authorization === undefined);
}

export function routeStage(): Stage<RequestContext> {
  // Synchronous checks: returning next() directly spares a promise per request.
  return (ctx, next) => {
    if (ctx.path.length > maxPathLength) throw new GatewayError(errors.notFound);
    const match = matchRoute(ctx.req.method ?? "GET", ctx.path);
    if (match.kind === "not-found") throw new GatewayError(errors.notFound);
    ctx.family = match.route.family;
    ctx.route = match.route;
    if (match.kind === "method") {
      throw new GatewayError(errors.methodNotAllowed, undefined, { headers: { allow: match.route.method } });
    }
    ctx.pathModel = match.pathModel;
    ctx.pathAction = match.pathAction;
    ctx.jobId = match.pathId;
    // One model list, three SDKs: the Anthropic SDK lists models with its own headers.
    if (match.route.name === "models" && ctx.family === "openai" && isAnthropicCaller(ctx)) ctx.family = "anthropic";
    return next();
  };
}
