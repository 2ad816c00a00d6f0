// The body phase: reads the request body within its bounds (see read-body.ts) as its route
// says, JSON or multipart/form-data, or either by Content-Type (an upload), and parses it once.

import type { BodyBudget } from "../body-budget.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { MultipartReader } from "../../media/multipart.js";
import { give, type Has, type Input, type Needs, type RequestContext, type Stage } from "../context.js";
import { readBody } from "../read-body.js";
import type { BodyKind } from "../routes.js";

type In = Needs<"target">;

/** The body stage for a route's body kind (not "none"). */
export function bodyStage(budget: BodyBudget, kind: Exclude<BodyKind, "none">): Stage<In, Has<"input">> {
  if (kind === "json") return (ctx, next) => jsonBody(ctx, budget).then((input) => next(give(ctx, "input", input)));
  if (kind === "multipart") return (ctx, next) => multipartBody(ctx, budget).then((input) => next(give(ctx, "input", input)));
  return (ctx, next) => (/^multipart\//i.test(ctx.req.headers["content-type"] ?? "") ? multipartBody(ctx, budget) : jsonBody(ctx, budget))
    .then((input) => next(give(ctx, "input", input)));
}

/** A JSON object body. */
async function jsonBody(ctx: RequestContext, budget: BodyBudget): Promise<Input> {
  const type = ctx.req.headers["content-type"];
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new GatewayError(errors.unsupportedMediaType);
  }
  const body = await readBody(ctx, budget);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw new GatewayError(errors.invalidJson, `The request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new GatewayError(errors.invalidJson, "The request body must be a JSON object.");
  }
  return { body, json: parsed as Record<string, unknown>, files: undefined, parts: undefined };
}

/** A multipart/form-data body, its fields parsed as the bytes arrive, so routing and
 * billing see `model` and friends like a JSON body's; the bytes go upstream unchanged. */
async function multipartBody(ctx: RequestContext, budget: BodyBudget): Promise<Input> {
  const type = ctx.req.headers["content-type"];
  if (type === undefined || !/^multipart\/form-data\b/i.test(type)) {
    throw new GatewayError(errors.unsupportedMediaType, "The request body must be multipart/form-data.");
  }
  const reader = new MultipartReader(type);
  const body = await readBody(ctx, budget, (chunk) => reader.write(chunk));
  reader.end();
  const parts = await reader.parts;
  // Files appear as { file, size } so a request_schema can require or forbid them.
  const json: Record<string, unknown> = { ...parts.fields };
  for (const f of parts.files) json[f.field] ??= { file: f.filename, size: f.size };
  return { body, json, files: parts.files, parts: parts.order };
}
