// Bodies that may be JSON or a multipart upload (video generation with a first-frame file):
// picks the reader by Content-Type.

import type { BodyBudget } from "../body-budget.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { bodyStage } from "./body.js";
import { multipartBodyStage } from "./multipart-body.js";

export function uploadBodyStage(budget: BodyBudget): Stage<RequestContext> {
  const json = bodyStage(budget);
  const multipart = multipartBodyStage(budget);
  return (ctx, next) => (/^multipart\//i.test(ctx.req.headers["content-type"] ?? "") ? multipart : json)(ctx, next);
}
