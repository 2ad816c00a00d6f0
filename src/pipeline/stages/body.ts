// Reads the JSON request body within its bounds (see read-body.ts) and parses it once.

import type { BodyBudget } from "../body-budget.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { readBody } from "../read-body.js";

export function bodyStage(budget: BodyBudget): Stage<RequestContext> {
  return async (ctx, next) => {
    const type = ctx.req.headers["content-type"];
    if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
      throw new GatewayError(errors.unsupportedMediaType);
    }
    ctx.body = await readBody(ctx, budget);
    let parsed: unknown;
    try {
      parsed = JSON.parse(ctx.body.toString("utf8"));
    } catch (err) {
      throw new GatewayError(errors.invalidJson, `The request body is not valid JSON: ${(err as Error).message}`);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new GatewayError(errors.invalidJson, "The request body must be a JSON object.");
    }
    ctx.json = parsed as Record<string, unknown>;
    await next();
  };
}
