// The outermost stage: turns anything thrown into a rendered error, then records the
// request in metrics, the usage hook and the log once the response is done.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { log } from "../../observability/log.js";
import { inflightRequests, requestDuration, requestsTotal, tokensTotal } from "../../observability/metrics.js";
import type { UsageSink } from "../../billing/usage-sink.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { sendError } from "../respond.js";

export function logStage(sink: UsageSink): Stage<RequestContext> {
  return async (ctx, next) => {
    inflightRequests.inc();
    try {
      await next();
    } catch (err) {
      ctx.error = err instanceof GatewayError ? err : internal(ctx, err);
      sendError(ctx, ctx.error);
    } finally {
      inflightRequests.dec();
      record(ctx, sink);
    }
  };
}

function internal(ctx: RequestContext, err: unknown): GatewayError {
  log.error("unhandled error", { requestId: ctx.id, error: err instanceof Error ? err.stack : String(err) });
  return new GatewayError(errors.internal);
}

function record(ctx: RequestContext, sink: UsageSink): void {
  const status = ctx.res.headersSent ? ctx.res.statusCode : 499; // 499: client left before an answer
  const durationMs = Number(process.hrtime.bigint() - ctx.startNs) / 1e6;
  const protocol = ctx.route?.name ?? "unknown";
  const model = ctx.modelName ?? "";
  const statusLabel = String(status);
  requestsTotal.inc({ protocol, model, channel: ctx.channel?.name ?? "", group: ctx.token?.group ?? "", status: statusLabel });
  requestDuration.observe({ protocol, model, status: statusLabel }, durationMs / 1000);
  if (ctx.usage) {
    const u = ctx.usage;
    if (u.input) tokensTotal.inc({ model, kind: "input" }, u.input);
    if (u.cacheRead) tokensTotal.inc({ model, kind: "cache_read" }, u.cacheRead);
    if (u.cacheWrite) tokensTotal.inc({ model, kind: "cache_write" }, u.cacheWrite);
    if (u.output) tokensTotal.inc({ model, kind: "output" }, u.output);
    if (u.reasoning) tokensTotal.inc({ model, kind: "reasoning" }, u.reasoning);
  }
  if (ctx.token) sink.record(ctx, status, durationMs);
  log.debug("request", {
    requestId: ctx.id, method: ctx.req.method, path: ctx.path, status, durationMs,
    token: ctx.token?.name, model: ctx.modelName, channel: ctx.channel?.name, error: ctx.error?.code,
  });
}
