// Resolves the requested model against the price list, the route's endpoint kind and
// the token's model allowlist.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Endpoint } from "../../runtime/types.js";
import type { Model } from "../../runtime/types.js";
import { fitToCapabilities } from "../../protocols/capabilities.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

/** Where each endpoint kind is served, for errors that point the caller to it. */
const pathOf: Record<Endpoint, string> = {
  chat: "/v1/chat/completions", responses: "/v1/responses", embeddings: "/v1/embeddings",
  image: "/v1/images/generations", video: "/v1/videos", speech: "/v1/audio/speech",
  transcription: "/v1/audio/transcriptions", rerank: "/v1/rerank", moderation: "/v1/moderations",
  realtime: "/v1/realtime",
};

/** Whether a route serves the model: it is priced for the route's kind, or it is a
 * responses model and the route is a chat one (converted to the responses protocol). */
function accepts(routeEndpoint: Endpoint, model: Model): boolean {
  return model.endpoints.has(routeEndpoint) || (routeEndpoint === "chat" && model.endpoints.has("responses"));
}

export function modelStage(): Stage<RequestContext> {
  // Synchronous checks: returning next() directly spares a promise per request.
  return (ctx, next) => {
    const name = ctx.pathModel ?? ctx.json?.model;
    if (typeof name !== "string" || name === "") {
      throw new GatewayError(errors.missingParameter, "The 'model' parameter is required.");
    }
    const model = ctx.runtime.models.get(name);
    if (!model) {
      throw new GatewayError(errors.modelNotFound,
        `The model '${name}' does not exist. Model IDs are exact and case-sensitive; GET /v1/models lists yours.`);
    }
    ctx.modelName = name;
    ctx.model = model;
    const token = ctx.token!;
    if (token.allowModel && !token.allowModel(name)) {
      throw new GatewayError(errors.modelNotAllowed, `This access token has no access to the model '${name}'.`);
    }
    const endpoint = ctx.route!.endpoint;
    if (endpoint && !accepts(endpoint, model)) {
      throw new GatewayError(errors.wrongEndpoint,
        `The model '${name}' is a ${model.endpoint} model; call ${pathOf[model.endpoint]} instead.`);
    }
    // Fitted before the rules and the reservation see it: they judge what is sent.
    const fit = model.capabilities && ctx.json ? fitToCapabilities(ctx.route!.name, ctx.json, model.capabilities) : undefined;
    if (fit) {
      ctx.json = fit.json;
      ctx.body = Buffer.from(JSON.stringify(fit.json));
      ctx.fitted = fit.changed;
    }
    return next();
  };
}
