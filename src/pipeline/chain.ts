// The middleware chain, in the one order DESIGN.md states. Common stages first, then the
// route's handler stages; composed once per handler at startup so a request only looks up.

import type { UsageSink } from "../billing/usage-sink.js";
import type { HandlerName } from "../server/routes.js";
import { compose, type Stage } from "./compose.js";
import type { RequestContext } from "./context.js";
import { accessStage } from "./stages/access.js";
import { authStage } from "./stages/auth.js";
import { bodyStage } from "./stages/body.js";
import { chatUpstreamStage } from "./stages/chat-upstream.js";
import { logStage } from "./stages/log.js";
import { modelStage } from "./stages/model.js";
import { modelsStage } from "./stages/models.js";
import { notServedStage } from "./stages/not-served.js";
import { routeStage } from "./stages/route.js";

export interface ChainDeps {
  readonly usage: UsageSink;
}

/** Builds the request handler: log → route → auth → access → [handler stages]. */
export function buildChain(deps: ChainDeps): (ctx: RequestContext) => Promise<void> {
  const handlers: Record<HandlerName, (ctx: RequestContext) => Promise<void>> = {
    chat: compose([bodyStage(), modelStage(), chatUpstreamStage()]),
    models: compose([modelsStage()]),
    "not-served": compose([notServedStage()]),
  };
  const dispatch: Stage<RequestContext> = (ctx) => handlers[ctx.route!.handler](ctx);
  return compose([logStage(deps.usage), routeStage(), authStage(), accessStage(), dispatch]);
}
