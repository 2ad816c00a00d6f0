// What a model call reserves for its output: the client's cap (or the model's
// max_output_tokens) for each answer it asks for, raised to what a converting channel's
// encoder may send upstream. The exchanges send the same cap to the provider wherever the
// client set none, so the reservation is an upper bound of what the answer can produce.

import { requestedAnswers, requestedMaxTokens } from "../billing/estimate.js";
import { outboundAdapterFor, passesThrough, routeProtocols } from "../protocols/registry.js";
import type { CanonicalRequest } from "../protocols/canonical.js";
import type { Needs, ReservedOutput } from "./context.js";

/** The output a request of `ctx` reserves for. A client's cap counts only on the routes
 * whose upstream is held to it (the model-calling protocols, which have an inbound
 * adapter); elsewhere (speech, images, transcription) no field of the client's bounds the
 * answer, and the model's max_output_tokens is the bound. */
export function reservedOutput(ctx: Needs<"target" | "caller" | "call">): ReservedOutput {
  const route = ctx.target.route.name;
  const { json, model } = ctx.call;
  const protocol = routeProtocols[route];
  // A client's limit above the model's maximum was clamped already (capabilities.ts); the
  // model's own default is held to that maximum too.
  const limit = (protocol?.inbound ? requestedMaxTokens(json) : undefined)
    ?? Math.min(model.maxOutputTokens, model.capabilities?.maxOutput ?? Infinity);
  const tokens = limit * requestedAnswers(json);
  if (!protocol?.inbound) return { limit, tokens };
  const endpoints = model.endpoints;
  const tiers = ctx.runtime.candidates.get(ctx.caller.group)?.get(ctx.call.name) ?? [];
  let canonical: CanonicalRequest | undefined;
  let most = tokens;
  for (const tier of tiers) {
    for (const channel of tier.channels) {
      if (passesThrough(route, protocol, channel.protocol, endpoints)) continue;
      const outbound = outboundAdapterFor(channel.protocol, endpoints);
      if (!outbound.outputCap) continue;
      try {
        canonical ??= protocol.inbound.decodeRequest(json, { pathModel: ctx.target.pathModel, pathStream: ctx.target.pathAction === "streamGenerateContent" });
      } catch {
        // Not convertible: the converting exchange refuses it (400) before anything is sent.
        return { limit, tokens };
      }
      most = Math.max(most, outbound.outputCap({ ...canonical, maxTokens: canonical.maxTokens ?? limit }) ?? 0);
    }
  }
  return { limit, tokens: most, canonical };
}
