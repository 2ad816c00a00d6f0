// Matches the path to a route; unknown paths get a JSON 404 in the caller's protocol shape.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { matchRoute } from "../routes.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import type { WireFamily } from "../../protocols/render-error.js";

/** Longest path accepted; longer ones are 404 without further parsing. */
const maxPathLength = 2048;

function isAnthropicCaller(ctx: RequestContext): boolean {
  const h = ctx.req.headers;
  return h["anthropic-version"] !== undefined || (h["x-api-key"] !== undefined && h.authorization === undefined);
}

/** @google/genai and Google's REST callers: a Google key (header or `?key=`), no bearer. */
function isGoogleCaller(ctx: RequestContext): boolean {
  const h = ctx.req.headers;
  if (h.authorization !== undefined) return false;
  return h["x-goog-api-key"] !== undefined || (ctx.query !== "" && new URLSearchParams(ctx.query).has("key"));
}

/** The family of a caller on a path shared by the SDKs (`/v1/models`), or of an unknown
 * `/v1` path: Google's and Anthropic's SDKs are told apart by their headers. */
function callerFamily(ctx: RequestContext): WireFamily {
  if (isGoogleCaller(ctx)) return "gemini";
  return isAnthropicCaller(ctx) ? "anthropic" : "openai";
}

export function routeStage(): Stage<RequestContext> {
  // Synchronous checks: returning next() directly spares a promise per request.
  return (ctx, next) => {
    if (ctx.path.length > maxPathLength) throw new GatewayError(errors.notFound);
    const match = matchRoute(ctx.req.method ?? "GET", ctx.path);
    if (match.kind === "not-found") {
      if (ctx.family === "openai" && ctx.path.startsWith("/v1/") && isGoogleCaller(ctx)) ctx.family = "gemini";
      throw new GatewayError(errors.notFound);
    }
    // One model list, three SDKs: each lists models (and asks for one) with its own headers.
    ctx.family = match.route.name === "models" && match.route.family === "openai" ? callerFamily(ctx) : match.route.family;
    ctx.route = match.route;
    if (match.kind === "method") {
      throw new GatewayError(errors.methodNotAllowed, undefined, { headers: { allow: match.route.method } });
    }
    ctx.pathModel = match.pathModel;
    ctx.pathAction = match.pathAction;
    ctx.jobId = match.pathId;
    return next();
  };
}
