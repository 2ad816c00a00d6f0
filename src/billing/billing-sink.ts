// Billing at the end of a request: price the usage (reported, or a documented estimate),
// settle the pre-deduction, append the usage-log entry and count the cost metric.

import type { Ledger } from "./ledger.js";
import { costOf } from "./cost.js";
import { fallbackUsage } from "./estimate.js";
import { log } from "../observability/log.js";
import { costTally } from "../observability/metrics.js";
import { emptyUsage, type Usage } from "../protocols/usage.js";
import type { RequestContext } from "../pipeline/context.js";
import { upstreamServed } from "../pipeline/outcome.js";
import type { UsageEntry } from "../state/store.js";
import type { UsageSink } from "./usage-sink.js";

/** Charges only what an upstream served (even if the client then left); the rest is free. */
export function billingSink(ledger: Ledger): UsageSink {
  return {
    record(ctx, status, durationMs) {
      const token = ctx.token;
      if (!token) return; // unauthenticated requests are counted in metrics, not billed
      const { usage, estimated } = billedUsage(ctx);
      const group = ctx.group ?? ctx.runtime.groups.get(token.group);
      const costNano = ctx.model && group && upstreamServed(ctx) ? costOf(usage, ctx.model.price, group.multiplierPpm, ctx.units) : 0n;
      const entry: UsageEntry = {
        requestId: ctx.id,
        time: Date.now() - Math.round(durationMs),
        token: token.name,
        user: token.user,
        group: token.group,
        model: ctx.modelName ?? "",
        upstreamModel: ctx.upstreamModel,
        channel: ctx.channel?.name,
        inboundProtocol: ctx.route?.name ?? "unknown",
        upstreamProtocol: ctx.channel?.protocol,
        usage,
        costNano,
        status,
        error: ctx.error?.code,
        durationMs,
        ttfbMs: ctx.firstByteNs ? Number(ctx.firstByteNs - ctx.startNs) / 1e6 : undefined,
        estimated: estimated || ctx.unitsEstimated === true,
      };
      try {
        ledger.settle(ctx.reservation, entry);
      } catch (err) {
        // The response is already out; losing the record must be loud, never silent.
        log.error("could not record usage", { requestId: ctx.id, costNano, error: String(err) });
        if (ctx.reservation) ledger.release(ctx.reservation);
        return;
      }
      if (costNano > 0n) costTally.add(Number(costNano), entry.model, entry.group);
    },
  };
}

function billedUsage(ctx: RequestContext): { usage: Usage; estimated: boolean } {
  if (ctx.usage) return { usage: ctx.usage, estimated: false };
  if (!upstreamServed(ctx)) return { usage: emptyUsage(), estimated: false };
  return { usage: fallbackUsage(ctx.body?.length ?? 0, ctx.outputChars ?? 0), estimated: true };
}
