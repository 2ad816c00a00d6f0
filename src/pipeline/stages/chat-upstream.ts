// Serves chat-completions from OpenAI-protocol channels: plan the attempts, send, fail
// over before the first byte, then relay the answer while tapping its usage.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { childCache, upstreamDuration, upstreamRetriesTotal } from "../../observability/metrics.js";
import { log } from "../../observability/log.js";
import { isStream, prepareChatBody } from "../../protocols/openai/chat-request.js";
import { lastObjectField } from "../../protocols/json-tail.js";
import { ChatStreamTap, generatedChars } from "../../protocols/openai/chat-stream-tap.js";
import { normalizeOpenAIUsage } from "../../protocols/openai/usage.js";
import { openaiProvider } from "../../providers/openai.js";
import { channelUrl } from "../../providers/provider.js";
import { nextKey } from "../../routing/keys.js";
import { planAttempts } from "../../routing/plan.js";
import type { Channel } from "../../runtime/types.js";
import { exhaustedError, shouldFailOver, type LastFailure } from "../../upstream/failover.js";
import { downstreamResponseHeaders, upstreamRequestHeaders } from "../../upstream/headers.js";
import { relay } from "../../upstream/relay.js";
import { Cancellation, send, UpstreamFailure, type UpstreamResponse } from "../../upstream/send.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { candidateTiers } from "./candidates.js";

/** Largest non-stream body kept in memory to read its usage. */
const maxTappedBody = 16 * 1024 * 1024;

/** The chat-completions handler for OpenAI-protocol channels. */
export function chatUpstreamStage(): Stage<RequestContext> {
  return async (ctx) => {
    const tiers = candidateTiers(ctx);
    const plan = planAttempts(tiers, ctx.runtime.server.upstreamAttempts, (c) => c.protocol === "openai");
    if (plan.length === 0) {
      throw new GatewayError(errors.endpointNotServed,
        `Model '${ctx.modelName}' is only served by channels of another protocol; protocol conversion is not available yet.`);
    }
    const cancel = new Cancellation();
    const onClose = () => { if (!ctx.res.writableFinished) cancel.cancel(); };
    ctx.res.once("close", onClose);
    try {
      await attemptAll(ctx, plan, cancel);
    } finally {
      ctx.res.off("close", onClose);
    }
  };
}

async function attemptAll(ctx: RequestContext, plan: readonly Channel[], cancel: Cancellation): Promise<void> {
  const json = ctx.json!;
  const stream = isStream(json);
  let last: LastFailure | undefined;
  for (const channel of plan) {
    ctx.attempts++;
    ctx.channel = channel;
    ctx.upstreamModel = channel.modelMap.get(ctx.modelName!) ?? ctx.modelName!;
    const prepared = prepareChatBody(ctx.body!, json, ctx.upstreamModel);
    const key = nextKey(channel);
    const started = process.hrtime.bigint();
    let upstream: UpstreamResponse;
    try {
      upstream = await send({
        url: channelUrl(channel.baseUrl, openaiProvider.paths.chat),
        headers: upstreamRequestHeaders(ctx.req.headers, openaiProvider.authHeaders(key), prepared.body.length),
        body: prepared.body,
        timeoutMs: ctx.runtime.server.upstreamTimeoutMs,
        cancel,
      });
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      observeAttempt(channel, ctx, started, err.kind);
      if (err.kind === "aborted") return;
      last = { kind: "transport", failure: err };
      if (err.kind === "timeout") break; // a slow upstream is not retried: 504
      upstreamRetriesTotal.inc({ channel: channel.name, reason: err.kind });
      log.warn("upstream attempt failed", { requestId: ctx.id, channel: channel.name, reason: err.kind, detail: err.message });
      continue;
    }
    const status = upstream.status;
    observeAttempt(channel, ctx, started, String(status));
    if (shouldFailOver(status)) {
      upstream.body.resume(); // drain so the connection returns to the pool
      last = { kind: "status", status, retryAfter: header(upstream, "retry-after") };
      upstreamRetriesTotal.inc({ channel: channel.name, reason: String(status) });
      log.warn("upstream attempt failed", { requestId: ctx.id, channel: channel.name, status });
      continue;
    }
    ctx.upstreamStatus = status;
    await relayAnswer(ctx, upstream, status, stream && isEventStream(upstream), prepared.stripUsage);
    return;
  }
  throw exhaustedError(last ?? { kind: "status", status: 502 });
}

async function relayAnswer(
  ctx: RequestContext, upstream: UpstreamResponse, status: number, stream: boolean, stripUsage: boolean,
): Promise<void> {
  // A body relayed unchanged keeps its length; a stream we may edit is re-framed.
  const headers = downstreamResponseHeaders(upstream.headers, openaiProvider.privateResponseHeaders, !stream);
  if (stream) {
    const tap = new ChatStreamTap(stripUsage);
    await relay({ ctx, body: upstream.body, status, headers, flushHeaders: true,
      transform: (chunk) => tap.push(chunk), finish: () => tap.end() });
    ctx.usage = tap.usage;
    ctx.outputChars = tap.outputChars;
    return;
  }
  // Non-stream: relay as it arrives and keep a copy to read usage at the end.
  const chunks: Buffer[] = [];
  let kept = 0;
  await relay({ ctx, body: upstream.body, status, headers, flushHeaders: false,
    transform: (chunk) => {
      if (kept + chunk.length <= maxTappedBody) { chunks.push(chunk); kept += chunk.length; }
      return chunk;
    } });
  if (status >= 200 && status < 300) readCompletion(ctx, Buffer.concat(chunks, kept));
}

/** Reads usage from a completion body, or the text length when it reports none. */
function readCompletion(ctx: RequestContext, body: Buffer): void {
  ctx.usage = normalizeOpenAIUsage(lastObjectField(body, "usage"));
  if (!ctx.usage) ctx.outputChars = generatedChars(body.toString("utf8"));
}

function isEventStream(res: UpstreamResponse): boolean {
  return (res.headers["content-type"] ?? "").startsWith("text/event-stream");
}

function header(res: UpstreamResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const attemptHistogram = childCache((v) => upstreamDuration.labels(...v));

function observeAttempt(channel: Channel, ctx: RequestContext, started: bigint, outcome: string): void {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  attemptHistogram(channel.name, ctx.modelName!, outcome).observe(seconds);
}
