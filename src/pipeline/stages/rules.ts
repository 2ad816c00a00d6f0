// Route-specific request rules (e.g. image generation's one-image-per-call) and the
// non-token units a request is billed by, before anything is reserved or sent.

import { routeProtocols } from "../../protocols/registry.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

export function rulesStage(): Stage<RequestContext> {
  return (ctx, next) => {
    const rules = routeProtocols[ctx.route!.name]?.rules;
    if (rules) ctx.units = rules(ctx.json!, ctx.files);
    return next();
  };
}
