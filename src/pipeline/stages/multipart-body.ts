// Reads a multipart/form-data body within max_body and parses its fields, so routing and
// billing see `model` and friends like a JSON body's; the bytes go upstream unchanged.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { parseMultipart } from "../../media/multipart.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { readBody } from "./body.js";

export function multipartBodyStage(): Stage<RequestContext> {
  return async (ctx, next) => {
    const type = ctx.req.headers["content-type"];
    if (type === undefined || !/^multipart\/form-data\b/i.test(type)) {
      throw new GatewayError(errors.unsupportedMediaType, "The request body must be multipart/form-data.");
    }
    ctx.body = await readBody(ctx);
    const parts = await parseMultipart(ctx.body, type);
    // Files appear as { file, size } so a request_schema can require or forbid them.
    const json: Record<string, unknown> = { ...parts.fields };
    for (const f of parts.files) json[f.field] ??= { file: f.filename, size: f.size };
    ctx.json = json;
    ctx.files = parts.files;
    await next();
  };
}
