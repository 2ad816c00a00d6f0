// Matches the path to a route; unknown paths get a JSON 404 in the caller's protocol shape
// (respond.ts: errorProtocol).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { callerProtocol, matchRoute, maxPathLength, type Route } from "../routes.js";
import { give, type Has, type RequestContext, type Stage } from "../context.js";

/** The wire protocol a matched route answers in: one model list, three SDKs, each listing
 * models (and asking for one) with its own headers. */
function protocolOf(ctx: RequestContext, route: Route) {
  return route.protocolFromCaller ? callerProtocol(ctx.req.headers, ctx.query) : route.protocol;
}

/** The route stage: the target (route, protocol, what the path named), or 404/405. */
export function routeStage(): Stage<RequestContext, Has<"target">> {
  // Synchronous checks: returning next() directly spares a promise per request.
  return (ctx, next) => {
    if (ctx.path.length > maxPathLength) throw new GatewayError(errors.notFound);
    const match = matchRoute(ctx.req.method ?? "GET", ctx.path);
    if (match.kind === "not-found") throw new GatewayError(errors.notFound);
    const route = match.route;
    if (match.kind === "method") {
      give(ctx, "target", { route, protocol: protocolOf(ctx, route), pathModel: undefined, pathAction: undefined, jobId: undefined });
      throw new GatewayError(errors.methodNotAllowed, undefined, { headers: { allow: route.method } });
    }
    // Realtime clients name the model in the query.
    const pathModel = route.model === "query" ? new URLSearchParams(ctx.query).get("model") ?? undefined : match.pathModel;
    return next(give(ctx, "target", { route, protocol: protocolOf(ctx, route), pathModel, pathAction: match.pathAction, jobId: match.pathId }));
  };
}
