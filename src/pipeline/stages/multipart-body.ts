// Reads a multipart/form-data body within its bounds, parsing its fields as the bytes arrive,
// so routing and billing see `model` and friends like a JSON body's; the bytes go upstream
// unchanged.

import type { BodyBudget } from "../body-budget.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { MultipartReader } from "../../media/multipart.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { readBody } from "../read-body.js";

export function multipartBodyStage(budget: BodyBudget): Stage<RequestContext> {
  return async (ctx, next) => {
    const type = ctx.req.headers["content-type"];
    if (type === undefined || !/^multipart\/form-data\b/i.test(type)) {
      throw new GatewayError(errors.unsupportedMediaType, "The request body must be multipart/form-data.");
    }
    const reader = new MultipartReader(type);
    ctx.body = await readBody(ctx, budget, (chunk) => reader.write(chunk));
    reader.end();
    const parts = await reader.parts;
    // Files appear as { file, size } so a request_schema can require or forbid them.
    const json: Record<string, unknown> = { ...parts.fields };
    for (const f of parts.files) json[f.field] ??= { file: f.filename, size: f.size };
    ctx.json = json;
    ctx.files = parts.files;
    ctx.parts = parts.order;
    await next();
  };
}
