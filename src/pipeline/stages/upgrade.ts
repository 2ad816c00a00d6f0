// The upgrade phase: a WebSocket-only route (realtime) refuses a plain HTTP request with a
// 426 before its model is looked at.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { RequestContext, Stage } from "../context.js";

/** The upgrade phase: a WebSocket-only route refuses a plain request (426). */
export function upgradeStage(): Stage<RequestContext> {
  return (ctx, next) => {
    if (!ctx.upgrade) throw new GatewayError(errors.upgradeRequired);
    return next(ctx);
  };
}
