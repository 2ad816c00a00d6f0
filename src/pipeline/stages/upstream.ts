// The model-call terminal: plans the attempts (a session's channel first, cooling channels
// last), picks per channel a pass-through (same protocol) or a conversion (through the
// hub), hands the plan to the failover loop (upstream/attempts.ts), and writes what it
// returned as the outcome: the answer relayed with its usage tapped, or the error.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { log } from "../../observability/log.js";
import { passesThrough, routeProtocols, type RouteProtocol } from "../../protocols/registry.js";
import { planAttempts } from "../../routing/plan.js";
import { affinityKey, sessionOf } from "../../routing/affinity.js";
import type { RoutingState } from "../../routing/routing-state.js";
import type { Channel, Protocol, ChannelTier } from "../../runtime/types.js";
import { attemptAll } from "../../upstream/attempts.js";
import { convertExchange } from "../../upstream/exchanges/convert.js";
import type { Exchange, ExchangeInput } from "../../upstream/exchanges/exchange.js";
import { passthroughExchange } from "../../upstream/exchanges/passthrough.js";
import { Cancellation } from "../../upstream/send.js";
import { candidateTiers } from "../candidates.js";
import { give, type Needs, type Stage } from "../context.js";
import { exchangeInput } from "../exchange-input.js";
import type { Route } from "../routes.js";

type Calling = Needs<"target" | "caller" | "input" | "call">;

/** The model-call terminal shared by chat-completions, messages, generate-content, responses, … */
export function upstreamStage(routing: RoutingState, route: Route): Stage<Calling> {
  const protocol = routeProtocols[route.name];
  const reachable = (c: Channel) => c.protocol === protocol.passthrough.channelProtocol || protocol.inbound !== undefined;
  return async (ctx) => {
    const { call, caller } = ctx;
    const tiers = candidateTiers(ctx.runtime, caller.group, call.name);
    const sessionKey = affinityKeyOf(ctx);
    const session = sessionKey === undefined ? undefined
      : { key: sessionKey, bound: await advisory(routing.affinity.bound(sessionKey, ctx.runtime.affinityTtlMs), "read", ctx.id) };
    // A channel cooling down after repeated failures goes last; a session's channel first.
    const plan = await routing.health.coolingLast(planAttempts(tiers, ctx.runtime.server.upstreamAttempts, reachable));
    if (session?.bound) preferBound(plan, tiers, session.bound, reachable, ctx);
    if (plan.length === 0) {
      throw new GatewayError(errors.conversionUnsupported,
        `Model '${call.name}' is served only by channels of another protocol, and ${route.name} requests cannot be converted for them.`);
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
      const server = ctx.runtime.server;
      const attempts = await attemptAll({
        channels: plan, exchangeFor: exchanges(exchangeInput(ctx), route, protocol, call.model.endpoints), cancel, routing,
        requestId: ctx.id, modelName: call.name, timeoutMs: server.upstreamTimeoutMs, idleTimeoutMs: server.streamIdleTimeoutMs, client: ctx.res,
      });
      const served = attempts.answer;
      give(ctx, "outcome", {
        served, channel: attempts.channel, upstreamModel: attempts.upstreamModel, key: attempts.key, attempts: attempts.tried.length,
      });
      if (attempts.error !== undefined) throw attempts.error;
      if (!served || !attempts.channel) return; // the client left before any answer
      const ok = served.status < 300;
      const channel = attempts.channel.name;
      if (served.jobId && ok) {
        await routing.jobs.remember(served.jobId, { channel, user: caller.user, model: call.name, requestId: ctx.id });
      }
      // Bind only after a success, and only a new session: a bound one keeps its channel.
      if (session && !session.bound && ok) await advisory(routing.affinity.bind(session.key, channel, ctx.runtime.affinityTtlMs), "written", ctx.id);
    } finally {
      ctx.res.off("close", onClose);
      if (wait) clearTimeout(wait);
    }
  };
}

/** The binding key of the request's session, when affinity is on and it names one. */
function affinityKeyOf(ctx: Calling): string | undefined {
  if (ctx.runtime.affinityTtlMs <= 0) return undefined;
  const session = sessionOf(ctx.req.headers["x-gateway-session-id"], ctx.call.json);
  return session === undefined ? undefined : affinityKey(ctx.caller.name, ctx.call.name, session);
}

/** Session affinity only steers routing: unreachable, the request is routed without it
 * (and a served answer is not failed for it). */
function advisory<T>(call: Promise<T>, what: "read" | "written", requestId: string): Promise<T | undefined> {
  return call.catch((err) => {
    log.warn(`session affinity not ${what}`, { requestId, error: String(err) });
    return undefined;
  });
}

/**
 * Puts a session's channel first in the plan (the others stay as failover). A session
 * whose channel no longer serves this model in this group is not moved silently: 503.
 */
function preferBound(
  plan: Channel[], tiers: readonly ChannelTier[], bound: string, reachable: (c: Channel) => boolean, ctx: Calling,
): void {
  const channel = tiers.flatMap((t) => t.channels).find((c) => c.name === bound);
  if (!channel || !reachable(channel)) {
    throw new GatewayError(errors.affinityChannelUnavailable,
      `The channel this session is bound to no longer serves '${ctx.call.name}'. Start a new session (another session id) to be routed to an available channel.`);
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
function exchanges(
  input: ExchangeInput, route: Route, protocol: RouteProtocol, endpoints: ExchangeInput["modelEndpoints"],
): (c: Protocol) => Exchange {
  let passthrough: Exchange | undefined;
  let converting: Exchange | undefined;
  const inbound = protocol.inbound;
  return (channelProtocol) => {
    if (passesThrough(route.name, protocol, channelProtocol, endpoints)) return (passthrough ??= passthroughExchange(input, protocol.passthrough));
    // A channel of another protocol is in the plan only when the route converts (reachable).
    if (!inbound) throw new GatewayError(errors.conversionUnsupported);
    return (converting ??= convertExchange(input, inbound));
  };
}
