// The model phase: resolves the requested model against the price list, the route's
// endpoint kind and the token's model allowlist, and fits the request to the model's
// capabilities before the rules and the reservation see it (they judge what is sent).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Endpoint } from "../../runtime/types.js";
import type { Model } from "../../runtime/types.js";
import { fitToCapabilities } from "../../protocols/capabilities.js";
import { give, type Call, type Has, type Input, type Needs, type Stage } from "../context.js";
import type { Route } from "../routes.js";

/** Where each endpoint kind is served, for errors that point the caller to it. */
const pathOf: Record<Endpoint, string> = {
  chat: "/v1/chat/completions", responses: "/v1/responses", embeddings: "/v1/embeddings",
  image: "/v1/images/generations", video: "/v1/videos", speech: "/v1/audio/speech",
  transcription: "/v1/audio/transcriptions", rerank: "/v1/rerank", moderation: "/v1/moderations",
  realtime: "/v1/realtime",
};

/** A route without a body (realtime) calls its model with none. */
const noBody = Buffer.alloc(0);
const noJson: Record<string, unknown> = Object.freeze({});

/** Whether a route serves the model: it is priced for the route's kind, or it is a
 * responses model and the route is a chat one (converted to the responses protocol). */
function accepts(routeEndpoint: Endpoint, model: Model): boolean {
  return model.endpoints.has(routeEndpoint) || (routeEndpoint === "chat" && model.endpoints.has("responses"));
}

type In = Needs<"target" | "caller"> & { readonly input: Input | undefined };

/** The model phase for a route: its model from the body, the path or the query. */
export function modelStage(route: Route): Stage<In, Has<"call">> {
  const fromBody = route.model === "body";
  // Synchronous checks: returning next() directly spares a promise per request.
  return (ctx, next) => {
    const input = ctx.input;
    const name = fromBody ? input?.json.model : ctx.target.pathModel;
    if (typeof name !== "string" || name === "") {
      throw new GatewayError(errors.missingParameter, "The 'model' parameter is required.");
    }
    const model = ctx.runtime.models.get(name);
    if (!model) {
      throw new GatewayError(errors.modelNotFound,
        `The model '${name}' does not exist. Model IDs are exact and case-sensitive; GET /v1/models lists yours.`);
    }
    const token = ctx.caller;
    if (token.allowModel && !token.allowModel(name)) {
      throw new GatewayError(errors.modelNotAllowed, `This access token has no access to the model '${name}'.`);
    }
    const endpoint = route.endpoint;
    if (endpoint && !accepts(endpoint, model)) {
      throw new GatewayError(errors.wrongEndpoint,
        `The model '${name}' is a ${model.endpoint} model; call ${pathOf[model.endpoint]} instead.`);
    }
    const fit = model.capabilities && input ? fitToCapabilities(route.name, input.json, model.capabilities) : undefined;
    const call: Call = fit
      ? { name, model, fitted: fit.changed, json: fit.json, body: Buffer.from(JSON.stringify(fit.json)) }
      : { name, model, fitted: undefined, json: input?.json ?? noJson, body: input?.body ?? noBody };
    return next(give(ctx, "call", call));
  };
}
