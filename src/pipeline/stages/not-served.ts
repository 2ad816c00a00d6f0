// Routes that exist in the API surface but whose handler has not landed yet answer a
// clear 501 in their protocol's shape, after authentication (so tokens are still checked).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

export function notServedStage(): Stage<RequestContext> {
  return async (ctx) => {
    throw new GatewayError(errors.endpointNotServed, `${ctx.req.method} ${ctx.path} is not served by this gateway version yet.`);
  };
}
