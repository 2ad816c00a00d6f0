// Token counting (messages' /v1/messages/count_tokens, generate-content's :countTokens):
// free. A model with channels of the route's own protocol is counted by them, passed
// through with failover like any request; otherwise, or when they all failed, the gateway
// answers a local estimate in the route's shape. Nothing is reserved or charged: the chain
// has no reserve stage, and what a channel answers is marked charge "none".

import { estimateInputTokens } from "../../billing/estimate.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { tokenCountEstimates } from "../../observability/metrics.js";
import type { CountTokensSpec } from "../../protocols/count-tokens.js";
import { countTokensProtocols } from "../../protocols/registry.js";
import type { RoutingState } from "../../routing/routing-state.js";
import { planAttempts } from "../../routing/plan.js";
import type { Channel, ChannelTier } from "../../runtime/types.js";
import { passthroughExchange } from "../../upstream/exchanges/passthrough.js";
import { Cancellation } from "../../upstream/send.js";
import type { Served } from "../../upstream/served.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { candidateTiers } from "./candidates.js";
import { attemptAll, exchangeInput } from "./upstream.js";

export function countTokensStage(routing: RoutingState): Stage<RequestContext> {
  return async (ctx) => {
    const spec = countTokensProtocols[ctx.route!.name];
    spec.check(ctx.json!);
    const tiers = candidateTiers(ctx);
    const native = (c: Channel) => c.protocol === spec.passthrough.channelProtocol;
    // An exact count beats an estimate: the route's own protocol is asked whatever its priority.
    const plan = await routing.health.coolingLast(planAttempts(tiers, ctx.runtime.server.upstreamAttempts, native));
    if (plan.length > 0) {
      try {
        const answer = await countUpstream(ctx, plan, spec, routing);
        if (answer) ctx.served = { ...answer, charge: "none" };
        return;
      } catch (err) {
        if (!estimateInstead(err, tiers, native)) throw err;
        ctx.channel = undefined;
        ctx.upstreamModel = undefined;
      }
    }
    answerEstimate(ctx, spec);
  };
}

/** Passes the count through to the plan's channels, failing over as any request does. */
async function countUpstream(ctx: RequestContext, plan: readonly Channel[], spec: CountTokensSpec, routing: RoutingState): Promise<Served | undefined> {
  const exchange = passthroughExchange(exchangeInput(ctx), spec.passthrough);
  const cancel = new Cancellation();
  const onClose = () => { if (!ctx.res.writableFinished) cancel.cancel(); };
  ctx.res.once("close", onClose);
  try {
    return await attemptAll(ctx, plan, () => exchange, cancel, routing);
  } finally {
    ctx.res.off("close", onClose);
  }
}

/** When every channel of the route's protocol failed, a model that other channels serve
 * is estimated, as a converted request would have gone to them. A timeout is not. */
function estimateInstead(err: unknown, tiers: readonly ChannelTier[], native: (c: Channel) => boolean): boolean {
  if (!(err instanceof GatewayError) || err.code === errors.upstreamTimeout.code) return false;
  return tiers.some((t) => t.channels.some((c) => !native(c)));
}

/** The local estimate (billing/estimate.ts), from the request decoded into canonical form. */
function answerEstimate(ctx: RequestContext, spec: CountTokensSpec): void {
  const estimate = estimateInputTokens(spec.canonical(ctx.json!, ctx.pathModel));
  tokenCountEstimates.inc({ protocol: ctx.route!.name });
  const body = JSON.stringify(spec.answer(estimate));
  ctx.res.writeHead(200, {
    "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-gateway-token-count": "estimate",
  });
  ctx.res.end(body);
}
