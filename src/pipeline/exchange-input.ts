// What the exchanges (upstream/exchanges/) need of a model call, as values: read off the
// phase results once, when the call reaches its terminal.

import { tokenPriced } from "../billing/cost.js";
import type { ExchangeInput } from "../upstream/exchanges/exchange.js";
import type { Needs } from "./context.js";
import { requestQuote } from "./shown-cost.js";

/** The most of an answer the client left that is still read for its usage. */
const DRAIN_MAX_BYTES = 8 * 1024 * 1024;

/** The exchange input of a request whose model is resolved. */
export function exchangeInput(ctx: Needs<"target" | "input" | "call">): ExchangeInput {
  const { call, target } = ctx;
  const server = ctx.runtime.server;
  const output = ctx.admission?.output;
  return {
    requestId: ctx.id, headers: ctx.req.headers, body: call.body, json: call.json, parts: ctx.input.parts, query: ctx.query,
    pathModel: target.pathModel, pathAction: target.pathAction, apiVersion: target.route.apiVersion, modelName: call.name,
    outputLimit: output?.limit, bodyMembers: ctx.edits?.members, tokenPriced: tokenPriced(call.model.price), canonical: output?.canonical,
    modelEndpoints: call.model.endpoints, conversion: call.model.conversion, res: ctx.res, idleTimeoutMs: server.streamIdleTimeoutMs,
    maxEventBytes: server.maxEventBytes,
    drain: { ms: server.usageDrainTimeoutMs, bytes: DRAIN_MAX_BYTES },
    quote: (usage) => requestQuote(ctx, usage),
    fitted: call.fitted,
  };
}
