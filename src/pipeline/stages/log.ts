// The outermost stage: turns anything thrown into a rendered error, then records the
// request in metrics (and, below info level, the log) once the response is done. Billing
// and the usage log are settlement's (settle.ts).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { errorText, log } from "../../observability/log.js";
import { inflight, requestDuration, requestTally, tokenTally } from "../../observability/metrics.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { answeredStatus } from "../outcome.js";
import { sendError } from "../respond.js";

export function logStage(): Stage<RequestContext> {
  return async (ctx, next) => {
    inflight.count++;
    try {
      await next();
    } catch (err) {
      ctx.error = err instanceof GatewayError ? err : internal(ctx, err);
      sendError(ctx, ctx.error);
    } finally {
      inflight.count--;
      record(ctx);
    }
  };
}

/** An exception that is not a catalogued error is a bug: logged once, with its stack. */
function internal(ctx: RequestContext, err: unknown): GatewayError {
  log.error("unhandled error", { requestId: ctx.id, error: errorText(err) });
  return new GatewayError(errors.internal);
}

function record(ctx: RequestContext): void {
  const status = answeredStatus(ctx);
  const durationMs = Number(process.hrtime.bigint() - ctx.startNs) / 1e6;
  const protocol = ctx.route?.name ?? "unknown";
  const model = ctx.modelName ?? "";
  const statusLabel = String(status);
  requestTally.add(1, protocol, model, ctx.channel?.name ?? "", ctx.token?.group ?? "", statusLabel);
  requestDuration.observe(durationMs / 1000, protocol, model, statusLabel);
  const u = ctx.served?.usage;
  if (u) {
    if (u.input) tokenTally.add(u.input, model, "input");
    if (u.cacheRead) tokenTally.add(u.cacheRead, model, "cache_read");
    if (u.cacheWrite) tokenTally.add(u.cacheWrite, model, "cache_write");
    if (u.output) tokenTally.add(u.output, model, "output");
    if (u.reasoning) tokenTally.add(u.reasoning, model, "reasoning");
  }
  if (!ctx.token && log.enabled("debug")) {
    log.debug("request", { requestId: ctx.id, method: ctx.req.method, path: ctx.path, status, durationMs, error: ctx.error?.code });
  }
}
