// Token counting (messages' /v1/messages/count_tokens, generate-content's :countTokens):
// free. A model with channels of the route's own protocol that count it (a kind may not:
// Bedrock counts Claude only) is counted by them, passed through with failover like any
// request; otherwise, or when they all failed, the gateway answers a local estimate in the
// route's shape. Nothing is reserved or charged: the route
// is admitted by its rate windows alone, and what a channel answers is marked charge "none".

import { estimateInputTokens } from "../../billing/estimate.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { tokenCountEstimates } from "../../observability/metrics.js";
import { kindOf } from "../../providers/index.js";
import type { CountTokensSpec } from "../../protocols/count-tokens.js";
import { countTokensProtocols } from "../../protocols/registry.js";
import type { RoutingState } from "../../routing/routing-state.js";
import { planAttempts } from "../../routing/plan.js";
import type { Channel, ChannelTier } from "../../runtime/types.js";
import { attemptAll, type Attempts } from "../../upstream/attempts.js";
import { passthroughExchange } from "../../upstream/exchanges/passthrough.js";
import { Cancellation } from "../../upstream/send.js";
import { candidateTiers } from "../candidates.js";
import { give, type Needs, type Stage } from "../context.js";
import { exchangeInput } from "../exchange-input.js";
import type { Route } from "../routes.js";

type Counting = Needs<"target" | "caller" | "input" | "call">;

/** The count-tokens terminal: counted by a channel of the route's protocol, else estimated. */
export function countTokensStage(routing: RoutingState, route: Route): Stage<Counting> {
  const spec = countTokensProtocols[route.name];
  return async (ctx) => {
    spec.check(ctx.call.json);
    const tiers = candidateTiers(ctx.runtime, ctx.caller.group, ctx.call.name);
    const native = countsNatively(spec, ctx.call.name);
    // An exact count beats an estimate: the route's own protocol is asked whatever its priority.
    const plan = await routing.health.coolingLast(planAttempts(tiers, ctx.runtime.server.upstreamAttempts, native));
    if (plan.length > 0) {
      const attempts = await countUpstream(ctx, plan, spec, routing);
      const err = attempts.error;
      const estimate = err !== undefined && estimateInstead(err, tiers, native);
      give(ctx, "outcome", {
        served: attempts.answer && { ...attempts.answer, charge: "none" },
        // An estimate names no channel: none counted it.
        channel: estimate ? undefined : attempts.channel, upstreamModel: estimate ? undefined : attempts.upstreamModel,
        attempts: attempts.tried.length,
      });
      if (err !== undefined && !estimate) throw err;
      if (!estimate) return;
    }
    answerEstimate(ctx, spec, route);
  };
}

/** A channel that counts the model itself: it speaks the route's protocol, and its kind
 * counts the model it knows the request's by (model_map applied). */
function countsNatively(spec: CountTokensSpec, modelName: string): (c: Channel) => boolean {
  return (c) => {
    if (c.protocol !== spec.passthrough.channelProtocol) return false;
    const counts = kindOf(c).countsTokens;
    return counts === undefined || counts(c, c.modelMap.get(modelName) ?? modelName);
  };
}

/** Passes the count through to the plan's channels, failing over as any request does. */
async function countUpstream(ctx: Counting, plan: readonly Channel[], spec: CountTokensSpec, routing: RoutingState): Promise<Attempts> {
  const exchange = passthroughExchange(exchangeInput(ctx), spec.passthrough);
  const cancel = new Cancellation();
  const onClose = () => { if (!ctx.res.writableFinished) cancel.cancel(); };
  ctx.res.once("close", onClose);
  const server = ctx.runtime.server;
  try {
    return await attemptAll({
      channels: plan, exchangeFor: () => exchange, cancel, routing, requestId: ctx.id, modelName: ctx.call.name,
      timeoutMs: server.upstreamTimeoutMs, idleTimeoutMs: server.streamIdleTimeoutMs, client: ctx.res,
    });
  } finally {
    ctx.res.off("close", onClose);
  }
}

/** When every channel that counts natively failed, a model that other channels serve is
 * estimated, as a converted request would have gone to them. A timeout is not. */
function estimateInstead(err: unknown, tiers: readonly ChannelTier[], native: (c: Channel) => boolean): boolean {
  if (!(err instanceof GatewayError) || err.code === errors.upstreamTimeout.code) return false;
  return tiers.some((t) => t.channels.some((c) => !native(c)));
}

/** The local estimate (billing/estimate.ts), from the request decoded into canonical form. */
function answerEstimate(ctx: Counting, spec: CountTokensSpec, route: Route): void {
  const estimate = estimateInputTokens(spec.canonical(ctx.call.json, ctx.target.pathModel));
  tokenCountEstimates.inc({ protocol: route.name });
  const body = JSON.stringify(spec.answer(estimate));
  ctx.res.writeHead(200, {
    "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-gateway-token-count": "estimate",
  });
  ctx.res.end(body);
}
