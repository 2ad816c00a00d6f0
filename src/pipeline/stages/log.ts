// The outermost stage: turns anything thrown into a rendered error, then records the
// request in metrics and the request log (one JSON line on stdout) once the response is
// done. Billing and the usage log are settlement's (settle.ts).

import { formatNano } from "../../billing/cost.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { errorText, log } from "../../observability/log.js";
import {
  inflight, modelLabel, requestDuration, requestTally, timeToFirstToken, tokenTally,
} from "../../observability/metrics.js";
import { requestLevel, type RequestLine, type RequestLog } from "../../observability/request-log.js";
import type { Usage } from "../../protocols/usage.js";
import { give, modelNameOf, type RequestContext, type Stage } from "../context.js";
import { answeredStatus, upstreamServed } from "../outcome.js";
import { sendError } from "../respond.js";

/** The log stage, first of every request: renders what was thrown and records the request. */
export function logStage(requestLog: RequestLog): Stage<RequestContext> {
  return async (ctx, next) => {
    inflight.count++;
    try {
      await next(ctx);
    } catch (err) {
      const error = err instanceof GatewayError ? err : internal(ctx, err);
      sendError(give(ctx, "error", error), error);
    } finally {
      inflight.count--;
      record(ctx, requestLog);
    }
  };
}

/** An exception that is not a catalogued error is a bug: logged once, with its stack. */
function internal(ctx: RequestContext, err: unknown): GatewayError {
  log.error("unhandled error", { requestId: ctx.id, error: errorText(err) });
  return new GatewayError(errors.internal);
}

function record(ctx: RequestContext, requestLog: RequestLog): void {
  const status = answeredStatus(ctx);
  const durationMs = Number(process.hrtime.bigint() - ctx.startNs) / 1e6;
  const protocol = ctx.target?.route.name ?? "unknown";
  const outcome = ctx.outcome;
  const served = outcome?.served;
  // A model the client named that the config does not declare is counted as "other".
  const model = modelLabel(ctx.runtime.models, modelNameOf(ctx) ?? requestedModel(ctx));
  const channel = outcome?.channel?.name ?? "";
  const statusLabel = String(status);
  requestTally.add(1, protocol, model, channel, ctx.caller?.group ?? "", statusLabel);
  requestDuration.observe(durationMs / 1000, protocol, model, statusLabel);
  const u = served?.usage;
  if (u) {
    if (u.input) tokenTally.add(u.input, model, "input");
    if (u.cacheRead) tokenTally.add(u.cacheRead, model, "cache_read");
    if (u.cacheWrite) tokenTally.add(u.cacheWrite, model, "cache_write");
    if (u.output) tokenTally.add(u.output, model, "output");
    if (u.reasoning) tokenTally.add(u.reasoning, model, "reasoning");
  }
  const firstByteNs = served?.firstByteNs;
  const ttfbMs = firstByteNs === undefined ? undefined : Number(firstByteNs - ctx.startNs) / 1e6;
  if (ttfbMs !== undefined && upstreamServed(ctx)) timeToFirstToken.observe(ttfbMs / 1000, model, channel);
  const level = requestLevel(status);
  if (requestLog.enabled(level, ctx.runtime.logLevel)) requestLog.add(level, requestLine(ctx, status, durationMs, ttfbMs));
}

/** The model a request named, declared or not (only for its bounded metrics label). */
function requestedModel(ctx: RequestContext): string | undefined {
  const named = ctx.target?.pathModel ?? ctx.input?.json.model;
  return typeof named === "string" ? named : undefined;
}

/** The request's log line: names and numbers, never a key, a header or a body. */
function requestLine(ctx: RequestContext, status: number, durationMs: number, ttfbMs: number | undefined): RequestLine {
  const settled = ctx.settled;
  const outcome = ctx.outcome;
  const usage = settled?.usage ?? outcome?.served?.usage;
  const token = ctx.caller;
  return {
    requestId: ctx.id,
    method: ctx.req.method,
    // The path only (the query can carry a Gemini-style key), bounded.
    path: ctx.path.length > 200 ? ctx.path.slice(0, 200) : ctx.path,
    protocol: ctx.target?.route.name ?? "unknown",
    token: token?.name,
    user: token?.user,
    group: token?.group,
    model: modelNameOf(ctx),
    upstreamModel: outcome?.upstreamModel,
    channel: outcome?.channel?.name,
    attempts: outcome?.attempts || undefined,
    status,
    error: ctx.error?.code ?? settled?.error,
    tokens: usage ? tokenCounts(usage) : undefined,
    toolCalls: usage?.toolCalls,
    cost: settled ? formatNano(settled.costNano) : undefined,
    estimated: settled?.estimated || undefined,
    durationMs: Math.round(durationMs * 1000) / 1000,
    ttfbMs: ttfbMs === undefined ? undefined : Math.round(ttfbMs * 1000) / 1000,
  };
}

function tokenCounts(u: Usage): Record<string, number> | undefined {
  if (!u.input && !u.cacheRead && !u.cacheWrite && !u.output && !u.reasoning) return undefined;
  return { input: u.input, cache_read: u.cacheRead, cache_write: u.cacheWrite, output: u.output, reasoning: u.reasoning };
}
