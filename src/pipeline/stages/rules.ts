// The rules phase, before anything is reserved or sent: the model's `request_schema` (400
// naming the field), the route's own rules (e.g. image generation's one image per call),
// and the non-token units the request is billed by.

import { tokenPriced } from "../../billing/cost.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { routeProtocols } from "../../protocols/registry.js";
import { give, type Has, type Needs, type Stage } from "../context.js";
import type { Route } from "../routes.js";

type In = Needs<"target" | "input" | "call">;

/** The rules phase for a route: request_schema, the route's rules, the billed units. */
export function rulesStage(route: Route): Stage<In, Has<"rules">> {
  const rules = routeProtocols[route.name]?.rules;
  return (ctx, next) => {
    const { json, model } = ctx.call;
    const problem = model.checkRequest?.(json);
    if (problem) {
      throw new GatewayError(problem.kind === "missing" ? errors.missingParameter : errors.invalidParameter, problem.message);
    }
    return next(give(ctx, "rules", { units: rules ? rules(json, ctx.input.files, tokenPriced(model.price)) : undefined }));
  };
}
