// The messages protocol requires an anthropic-version header. Its value is not checked:
// official SDKs send newer dates than SPEC.md's 2023-06-01, and the upstream gets it as sent.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Needs, Stage } from "../context.js";

/** The version-header phase: a messages-protocol route refuses a call without one (400). */
export function anthropicVersionStage(): Stage<Needs<"target">> {
  return (ctx, next) => {
    const version = ctx.req.headers["anthropic-version"];
    if (typeof version !== "string" || version.trim() === "") {
      throw new GatewayError(errors.missingVersionHeader,
        "The anthropic-version header is required on /v1/messages (for example: anthropic-version: 2023-06-01).");
    }
    return next(ctx);
  };
}
