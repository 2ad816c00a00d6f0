// Request rules before anything is reserved or sent: the model's `request_schema` (400
// naming the field), the route's own rules (e.g. image generation's one image per call),
// and the non-token units the request is billed by.

import { tokenPriced } from "../../billing/cost.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { routeProtocols } from "../../protocols/registry.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

export function rulesStage(): Stage<RequestContext> {
  return (ctx, next) => {
    const problem = ctx.model?.checkRequest?.(ctx.json);
    if (problem) {
      throw new GatewayError(problem.kind === "missing" ? errors.missingParameter : errors.invalidParameter, problem.message);
    }
    const rules = routeProtocols[ctx.route!.name]?.rules;
    if (rules) ctx.units = rules(ctx.json!, ctx.files, ctx.model !== undefined && tokenPriced(ctx.model.price));
    return next();
  };
}
