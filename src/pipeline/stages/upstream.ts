// Serves a model call from its channels: plan the attempts, pick per channel a pass-through
// (same protocol) or a conversion (through the hub) and a key in rotation, send, retry a
// refused or out-of-credit key on the channel's next key, fail over before the first byte,
// then relay the answer while tapping its usage.

import { Readable } from "node:stream";
import { tokenPriced } from "../../billing/cost.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { log } from "../../observability/log.js";
import {
  keyFailureTally, upstreamDuration, upstreamErrorClass, upstreamErrorTally, upstreamRetriesTotal,
} from "../../observability/metrics.js";
import { passesThrough, routeProtocols, type RouteProtocol } from "../../protocols/registry.js";
import { providers } from "../../providers/index.js";
import { judgeKeyFault, type KeyFault, type KeyVerdict } from "../../providers/provider.js";
import { planAttempts } from "../../routing/plan.js";
import { affinityKey, sessionOf } from "../../routing/affinity.js";
import { isOut, type KeyOut } from "../../routing/key-health.js";
import type { KeyStats } from "../../routing/key-stats.js";
import type { RoutingState } from "../../routing/routing-state.js";
import type { Channel, ChannelProtocol, ChannelTier } from "../../runtime/types.js";
import { convertExchange } from "../../upstream/exchanges/convert.js";
import { BrokenAnswer, type Exchange, type ExchangeInput } from "../../upstream/exchanges/exchange.js";
import { passthroughExchange } from "../../upstream/exchanges/passthrough.js";
import { readAll } from "../../upstream/exchanges/exchange.js";
import { exhaustedError, shouldFailOver, type LastFailure } from "../../upstream/failover.js";
import { Cancellation, discard, send, UpstreamFailure, type UpstreamResponse } from "../../upstream/send.js";
import type { Served } from "../../upstream/served.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { requestQuote } from "../shown-cost.js";
import { candidateTiers } from "./candidates.js";

/** The most of an answer the client left that is still read for its usage. */
const DRAIN_MAX_BYTES = 8 * 1024 * 1024;

/** The model-call handler shared by chat-completions, messages, generate-content, responses. */
export function upstreamStage(routing: RoutingState): Stage<RequestContext> {
  return async (ctx) => {
    const protocol = routeProtocols[ctx.route!.name];
    const reachable = (c: Channel) => c.protocol === protocol.passthrough.channelProtocol || protocol.inbound !== undefined;
    const tiers = candidateTiers(ctx);
    const sessionKey = affinityKeyOf(ctx);
    const session = sessionKey === undefined ? undefined
      : { key: sessionKey, bound: await advisory(routing.affinity.bound(sessionKey, ctx.runtime.affinityTtlMs), "read", ctx) };
    // A channel cooling down after repeated failures goes last; a session's channel first.
    const plan = await routing.health.coolingLast(planAttempts(tiers, ctx.runtime.server.upstreamAttempts, reachable));
    if (session?.bound) preferBound(plan, tiers, session.bound, reachable, ctx);
    if (plan.length === 0) {
      throw new GatewayError(errors.conversionUnsupported,
        `Model '${ctx.modelName}' is served only by channels of another protocol, and ${ctx.route!.name} requests cannot be converted for them.`);
    }
    const cancel = new Cancellation();
    // A client that leaves before the answer's head: the call in flight is waited for up to
    // server.usage_drain_timeout (its answer is then read for its usage), then cancelled.
    // Once an answer is relayed, the exchange reads on or stops (Cancellation.release).
    let wait: NodeJS.Timeout | undefined;
    const drainMs = ctx.runtime.server.usageDrainTimeoutMs;
    const onClose = () => {
      if (ctx.res.writableFinished) return;
      if (drainMs > 0) wait = setTimeout(() => cancel.cancel(), drainMs);
      else cancel.cancel();
    };
    ctx.res.once("close", onClose);
    try {
      const served = await attemptAll(ctx, plan, exchanges(ctx, protocol), cancel, routing);
      if (!served) return; // the client left before any answer
      ctx.served = served;
      const ok = served.status < 300;
      if (served.jobId && ok) {
        await routing.jobs.remember(served.jobId, { channel: ctx.channel!.name, user: ctx.token!.user, model: ctx.modelName!, requestId: ctx.id });
      }
      // Bind only after a success, and only a new session: a bound one keeps its channel.
      if (session && !session.bound && ok) await advisory(routing.affinity.bind(session.key, ctx.channel!.name, ctx.runtime.affinityTtlMs), "written", ctx);
    } finally {
      ctx.res.off("close", onClose);
      if (wait) clearTimeout(wait);
    }
  };
}

/** The binding key of the request's session, when affinity is on and it names one. */
function affinityKeyOf(ctx: RequestContext): string | undefined {
  if (ctx.runtime.affinityTtlMs <= 0) return undefined;
  const session = sessionOf(ctx.req.headers["x-gateway-session-id"], ctx.json);
  return session === undefined ? undefined : affinityKey(ctx.token!.name, ctx.modelName!, session);
}

/**
 * Puts a session's channel first in the plan (the others stay as failover). A session
 * whose channel no longer serves this model in this group is not moved silently: 503.
 */
function preferBound(
  plan: Channel[], tiers: readonly ChannelTier[], bound: string, reachable: (c: Channel) => boolean, ctx: RequestContext,
): void {
  const channel = tiers.flatMap((t) => t.channels).find((c) => c.name === bound);
  if (!channel || !reachable(channel)) {
    throw new GatewayError(errors.affinityChannelUnavailable,
      `The channel this session is bound to no longer serves '${ctx.modelName}'. Start a new session (another session id) to be routed to an available channel.`);
  }
  const at = plan.indexOf(channel);
  if (at === 0) return;
  if (at > 0) plan.splice(at, 1);
  else if (plan.length >= ctx.runtime.server.upstreamAttempts) plan.pop();
  plan.unshift(channel);
}

/** The exchange for a channel protocol, made once per request on first use: a pass-through
 * for the route's own protocol, one converting exchange for every other (it converts per
 * channel). */
function exchanges(ctx: RequestContext, protocol: RouteProtocol): (c: ChannelProtocol) => Exchange {
  let passthrough: Exchange | undefined;
  let converting: Exchange | undefined;
  const input = exchangeInput(ctx);
  const route = ctx.route!.name;
  const endpoints = ctx.model!.endpoints;
  return (channelProtocol) => passesThrough(route, protocol, channelProtocol, endpoints)
    ? (passthrough ??= passthroughExchange(input, protocol.passthrough))
    : (converting ??= convertExchange(input, protocol.inbound!));
}

/** What the exchanges need of the request, as values. */
export function exchangeInput(ctx: RequestContext): ExchangeInput {
  return {
    requestId: ctx.id, headers: ctx.req.headers, body: ctx.body!, json: ctx.json!, parts: ctx.parts, query: ctx.query,
    pathModel: ctx.pathModel, pathAction: ctx.pathAction, apiVersion: ctx.route!.apiVersion, modelName: ctx.modelName!,
    outputLimit: ctx.output?.limit, bodyMembers: ctx.bodyMembers, tokenPriced: tokenPriced(ctx.model!.price), canonical: ctx.output?.canonical, modelEndpoints: ctx.model!.endpoints,
    conversion: ctx.model!.conversion, res: ctx.res, idleTimeoutMs: ctx.runtime.server.streamIdleTimeoutMs,
    maxEventBytes: ctx.runtime.server.maxEventBytes,
    drain: { ms: ctx.runtime.server.usageDrainTimeoutMs, bytes: DRAIN_MAX_BYTES },
    quote: (usage) => requestQuote(ctx, usage),
    fitted: ctx.fitted,
  };
}

/** Tries the plan's channels in order until one answers; the answer served, or undefined
 * when the client left first. Throws the client-facing error when every attempt failed.
 * Within a channel, a key the provider refuses or says is out of credit is taken out of
 * rotation and the request is tried again on the channel's next key; a channel whose keys
 * are all out is passed over. A fault the provider names only in its message is first
 * confirmed by a probe of the gateway's own (routing/key-probes.ts), which this request
 * waits for (bounded): confirmed, it is a fault like any; not, the answer is this
 * request's own and goes to the client as it came. */
export async function attemptAll(
  ctx: RequestContext, plan: readonly Channel[], exchangeFor: (c: ChannelProtocol) => Exchange, cancel: Cancellation,
  routing: RoutingState,
): Promise<Served | undefined> {
  const { health, keys, keyHealth, keyStats, keyProbes } = routing;
  let last: LastFailure | undefined;
  channels: for (const channel of plan) {
    ctx.channel = channel;
    ctx.upstreamModel = channel.modelMap.get(ctx.modelName!) ?? ctx.modelName!;
    const exchange = exchangeFor(channel.protocol);
    const viewed = keyHealth.view(channel);
    const outs = viewed instanceof Promise ? await noted(viewed, channel, noKeysOut) : viewed;
    const fingerprints = keyHealth.fingerprints(channel);
    /** Keys refused in this request (indexes), beside those out of rotation before it. */
    let refused: number[] | undefined;
    const now = Date.now();
    const usable = (i: number) => !isOut(outs[i], now) && !refused?.includes(i);
    for (;;) {
      const index = keys.pick(channel, usable);
      if (index === undefined) {
        // Every key is out: the next channel. Its reason is the answer only if nothing else went wrong.
        last ??= { kind: "keys", reason: outs.some((o) => o?.reason === "quota") ? "quota" : "auth" };
        continue channels;
      }
      // A client that left is not served from another channel or key.
      if (ctx.res.destroyed && ctx.attempts > 0) return undefined;
      ctx.attempts++;
      const fingerprint = fingerprints[index];
      const request = exchange.request(channel, ctx.upstreamModel, channel.keys[index]);
      const started = process.hrtime.bigint();
      let upstream: UpstreamResponse;
      try {
        // Spelled out, not spread: on Node 20 every property added after an object spread
        // builds a new hidden class, ~200 B that only a full GC frees; here it was half of
        // what the gateway promoted per request (BENCH_HEAP_PROMOTED=1).
        upstream = await send({
          url: request.url, headers: request.headers, body: request.body, timeoutMs: ctx.runtime.server.upstreamTimeoutMs,
          idleTimeoutMs: ctx.runtime.server.streamIdleTimeoutMs, cancel,
        });
      } catch (err) {
        if (!(err instanceof UpstreamFailure)) throw err;
        observeAttempt(channel, ctx, started, err.kind, keyStats, fingerprint);
        if (err.kind === "aborted") return undefined;
        last = { kind: "transport", failure: err };
        if (err.kind === "timeout") break channels; // a slow upstream is not retried: 504
        await noted(health.recordFailure(channel.name), channel);
        upstreamRetriesTotal.inc({ channel: channel.name, reason: err.kind });
        log.warn("upstream attempt failed", { requestId: ctx.id, channel: channel.name, reason: err.kind, detail: err.message });
        continue channels;
      }
      const judged = await keyFaultOf(channel, upstream);
      upstream = judged.upstream;
      const status = upstream.status;
      const fault = judged.verdict?.confirm
        ? await keyProbes.confirm({ channel, index, fingerprint, upstreamModel: ctx.upstreamModel, fault: judged.verdict.fault })
        : judged.verdict?.fault;
      observeAttempt(channel, ctx, started, String(status), keyStats, fingerprint, fault);
      if (fault) {
        discard(upstream.body); // drained, so the connection returns to the pool
        last = { kind: "keys", reason: fault };
        (refused ??= []).push(index);
        await noted(keyHealth.markOut(channel, index, fault), channel);
        upstreamRetriesTotal.inc({ channel: channel.name, reason: `key_${fault}` });
        log.warn("upstream refused a channel key; trying the next", { requestId: ctx.id, channel: channel.name, key: fingerprint, status, reason: fault });
        continue;
      }
      if (shouldFailOver(status)) {
        discard(upstream.body);
        last = { kind: "status", status, retryAfter: header(upstream, "retry-after") };
        await noted(health.recordFailure(channel.name), channel);
        upstreamRetriesTotal.inc({ channel: channel.name, reason: String(status) });
        log.warn("upstream attempt failed", { requestId: ctx.id, channel: channel.name, status });
        continue channels;
      }
      // The answer is the exchange's from here: a client leaving no longer cancels it.
      cancel.release();
      const answer = await exchange.respond(upstream, channel);
      if (answer instanceof BrokenAnswer) {
        log.warn("upstream answer broken", { requestId: ctx.id, channel: channel.name, reason: answer.reason });
        // A body cut short, stalled or not JSON: nothing of it reached the client: the channel failed, and the next may answer.
        last = { kind: "broken", reason: answer.reason };
        upstreamErrorTally.add(1, channel.name, "broken_answer");
        keyFailureTally.add(1, channel.name, fingerprint, "broken_answer");
        await noted(health.recordFailure(channel.name), channel);
        upstreamRetriesTotal.inc({ channel: channel.name, reason: "broken_answer" });
        continue channels;
      }
      // Not waited for: the answer need not wait to forget a channel's past failures.
      void noted(health.recordSuccess(channel.name), channel);
      return answer;
    }
  }
  throw exhaustedError(last ?? { kind: "status", status: 502 });
}

/** No key known out: what routing assumes when key health cannot be read. */
const noKeysOut: readonly (KeyOut | undefined)[] = [];

/** Health is advice: a store that cannot read or note it does not fail the request. */
/** Session affinity only steers routing: unreachable, the request is routed without it
 * (and a served answer is not failed for it). */
function advisory<T>(call: Promise<T>, what: "read" | "written", ctx: RequestContext): Promise<T | undefined> {
  return call.catch((err) => {
    log.warn(`session affinity not ${what}`, { requestId: ctx.id, error: String(err) });
    return undefined;
  });
}

function noted<T>(recorded: Promise<T>, channel: Channel, fallback?: T): Promise<T> {
  return recorded.catch((err) => {
    log.warn("channel health not recorded", { channel: channel.name, error: String(err) });
    return fallback as T;
  });
}

/**
 * What an answer says of the channel key, for a status the provider uses for a refused key
 * or an account out of credit (401/403, Gemini 400 API_KEY_INVALID, OpenAI 429
 * insufficient_quota, Anthropic 400 "credit balance is too low"): its error body is read
 * (bounded) and judged by the provider's rules (providers/). An answer of any other status
 * is not read; either way it goes on with its body intact.
 */
async function keyFaultOf(channel: Channel, upstream: UpstreamResponse): Promise<{ verdict?: KeyVerdict; upstream: UpstreamResponse }> {
  const rules = providers[channel.protocol].keyFaults;
  if (!rules.statuses.includes(upstream.status)) return { upstream };
  const body = await readAll(upstream.body, KEY_FAULT_BODY_LIMIT);
  const verdict = judgeKeyFault(rules, upstream.status, body.toString("utf8"));
  return { verdict, upstream: { status: upstream.status, headers: upstream.headers, body: Readable.from([body]) } };
}

/** The most of an error answer read to tell whether it names a key fault (errors are small). */
const KEY_FAULT_BODY_LIMIT = 256 * 1024;

function header(res: UpstreamResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function observeAttempt(
  channel: Channel, ctx: RequestContext, started: bigint, outcome: string, keyStats: KeyStats, key: string, fault?: KeyFault,
): void {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  upstreamDuration.observe(seconds, channel.name, ctx.modelName!, outcome);
  // A key the provider refused or found out of credit is that, whatever its status says
  // (an OpenAI insufficient_quota is a 429, not a rate limit); a 401/403 the provider's
  // fields do not blame on the key (a header or a file of the request) is the client's.
  const errorClass = fault ?? (outcome === "401" || outcome === "403" ? "client" : upstreamErrorClass(outcome));
  if (errorClass !== undefined) upstreamErrorTally.add(1, channel.name, errorClass);
  if (outcome === "aborted") return; // the client left: nothing to say of the key
  if (errorClass !== undefined) keyFailureTally.add(1, channel.name, key, errorClass);
  keyStats.record(channel.name, key, seconds, errorClass !== undefined);
}
