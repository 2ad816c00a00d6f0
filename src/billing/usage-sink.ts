// The usage hook: one call per finished request that named a model. Billing and the
// usage log will implement it; until then the default writes a structured log line.

import { log } from "../observability/log.js";
import type { RequestContext } from "../pipeline/context.js";

export interface UsageSink {
  /** Called once, after the response has ended, for every request that resolved a model. */
  record(ctx: RequestContext, status: number, durationMs: number): void;
}

/** Logs each request's usage at debug level (the usage log in the store is the record;
 * a line per request on stderr would cost more than the rest of the request). */
export const logUsageSink: UsageSink = {
  record(ctx, status, durationMs) {
    if (!log.enabled("debug")) return;
    log.debug("usage", {
      requestId: ctx.id,
      token: ctx.token?.name,
      user: ctx.user?.name,
      group: ctx.token?.group,
      model: ctx.modelName,
      upstreamModel: ctx.upstreamModel,
      channel: ctx.channel?.name,
      protocol: ctx.route?.name,
      attempts: ctx.attempts,
      usage: ctx.usage,
      usageMissing: ctx.model && ctx.usage === undefined && status < 400 ? true : undefined,
      status,
      durationMs: Math.round(durationMs * 1000) / 1000,
      ttfbMs: ctx.firstByteNs ? Number(ctx.firstByteNs - ctx.startNs) / 1e6 : undefined,
      error: ctx.error?.code,
    });
  },
};
