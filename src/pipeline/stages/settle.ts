// Settlement: the phase around everything after auth. Once the rest of the request is done
// it gives back what admission took that the request does not keep (a failed request's
// hits in the windows that refund failures; a request that ended before its admission is
// counted in the windows that count failures), prices what the upstream served (its usage,
// or a marked estimate), settles the reservation and the holds against the accounts and
// appends the usage-log entry together, waits until both are done when they charge
// anything (the entry durable, the spend updated), and only then releases the answer's
// last bytes. A charge that cannot be committed withholds them: nothing is served unbilled.

import { encodeBreakdown } from "../../billing/breakdown.js";
import { operatorCost, priceUsage, unitPriced, type Priced } from "../../billing/cost.js";
import { cutAnswerUsage } from "../../billing/estimate.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { log } from "../../observability/log.js";
import { emptyUsage, type Usage } from "../../protocols/usage.js";
import { answeredUnits } from "../../protocols/variants.js";
import type { Group } from "../../runtime/types.js";
import type { Limiter } from "../../state/interfaces.js";
import type { UsageEntry } from "../../state/store.js";
import type { Served } from "../../upstream/served.js";
import { commitCharge, type Held, type Ledger } from "../commit-charge.js";
import { give, modelNameOf, type Call, type Needs, type Stage } from "../context.js";
import { answeredStatus, upstreamServed } from "../outcome.js";
import { countUnadmitted, refundFailure, tokenWindows } from "../rate-windows.js";
import type { Route } from "../routes.js";
import { shownCost } from "../shown-cost.js";
import { billingFault } from "../billing-fault.js";
import type { PriceFallbacks } from "../price-fallbacks.js";

type Settling = Needs<"target" | "caller">;

/** What settlement needs. */
export interface SettleDeps extends Ledger {
  readonly limiter: Limiter;
  readonly priceFallbacks: PriceFallbacks;
}

const nothingHeld: Held = Object.freeze({});

/** The settle phase: wraps the rest of the request and settles it on every path. */
export function settleStage(deps: SettleDeps, route: Route): Stage<Settling> {
  const admitted = route.admission !== "free";
  return async (ctx, next) => {
    let failure: unknown;
    try {
      await next(ctx);
    } catch (err) {
      failure = err;
    }
    const released = admitted ? releaseWindows(deps.limiter, ctx, failure) : undefined;
    if (released) await released;
    const entry = usageEntry(ctx, failure, deps.priceFallbacks);
    give(ctx, "settled", entry);
    const committed = commitCharge(deps, ctx.admission ?? nothingHeld, entry, ctx.outcome?.attempts ?? 0);
    const served = ctx.outcome?.served;
    if (entry.costNano > 0n) {
      try {
        await committed;
      } catch (err) {
        log.error("charge not recorded; the answer is withheld", { requestId: ctx.id, costNano: entry.costNano, error: causeText(err) });
        served?.abandon();
        // A 503 in the caller's protocol when nothing was sent yet; a started stream is cut.
        throw failure ?? err;
      }
    } else {
      committed.catch((err) => log.error("usage entry not recorded", { requestId: ctx.id, error: causeText(err) }));
    }
    served?.release(shownCost(ctx, entry, failure));
    if (failure !== undefined) throw failure;
  };
}

/** The rate windows once the request ended: an admitted request that failed gets back its
 * hits where failures are not counted; one that passed access but ended before its
 * admission (a bad body, a model it may not use) is counted where failures are. One
 * refused by a window, a slot or a budget is counted nowhere. Undefined when there is
 * nothing to do (no promise to wait for on the common path). */
function releaseWindows(limiter: Limiter, ctx: Settling, failure: unknown): Promise<void> | undefined {
  const admission = ctx.admission;
  if (admission) {
    return admission.hits.length > 0 && failed(ctx, failure) ? refundFailure(limiter, admission.windows, admission.hits, ctx.id) : undefined;
  }
  if (!ctx.account) return undefined; // refused by access: counted nowhere
  const windows = tokenWindows(ctx.runtime, ctx.caller, ctx.account.user);
  return windows ? countUnadmitted(limiter, windows, ctx.id) : undefined;
}

/** Whether the finished request failed (it is not counted by windows that refund failures). */
function failed(ctx: Settling, failure: unknown): boolean {
  return failure !== undefined || (!upstreamServed(ctx) && answeredStatus(ctx) >= 400);
}

function causeText(err: unknown): string {
  return String((err as { cause?: unknown }).cause ?? err);
}

/** The request's usage-log entry: what it is charged, and how it ended. */
function usageEntry(ctx: Settling, failure: unknown, fallbacks: PriceFallbacks): UsageEntry {
  const token = ctx.caller;
  const outcome = ctx.outcome;
  const served = outcome?.served;
  const group = ctx.account?.group ?? ctx.runtime.groups.get(token.group);
  const call = ctx.call;
  const billed = call && group && served ? billedUsage(ctx, call, group, served) : undefined;
  if (billed?.priced.fallbacks && call) fallbacks.note(call.model.name, billed.priced.fallbacks);
  const durationMs = Number(process.hrtime.bigint() - ctx.startNs) / 1e6;
  const firstByteNs = served?.firstByteNs;
  return {
    requestId: ctx.id,
    time: Date.now() - Math.round(durationMs),
    token: token.name,
    user: token.user,
    group: token.group,
    model: modelNameOf(ctx) ?? "",
    upstreamModel: outcome?.upstreamModel,
    channel: outcome?.channel?.name,
    key: served ? outcome?.key : undefined,
    inboundProtocol: ctx.target.route.name,
    upstreamProtocol: outcome?.channel?.protocol,
    usage: billed?.usage ?? emptyUsage(),
    costNano: billed?.priced.costNano ?? 0n,
    breakdown: billed ? encodeBreakdown(billed.priced) : undefined,
    channelCostNano: billed?.channelCostNano,
    status: failure === undefined ? answeredStatus(ctx) : failedStatus(ctx, failure),
    error: failure === undefined ? undefined : failure instanceof GatewayError ? failure.code : errors.internal.code,
    durationMs,
    ttfbMs: firstByteNs ? Number(firstByteNs - ctx.startNs) / 1e6 : undefined,
    estimated: billed?.estimated ?? false,
    droppedFields: served?.droppedFields,
  };
}

/** What is priced, and its cost: the reported usage; the reservation (usage and amount)
 * for a whole answer that reported none on a token-priced model (a billing fault); an
 * estimate (cutAnswerUsage: what was reported, else input from the request's size and
 * output from the text delivered and, for a client that left, the time read) when the
 * answer did not complete or its model is not priced by tokens; undefined (nothing is
 * charged) when no upstream served it. The cost to the operator is the same usage at the
 * channel's cost. */
function billedUsage(ctx: Settling, call: Call, group: Group, served: Served): Billed | undefined {
  if (served.charge === "none" || !upstreamServed(ctx)) return undefined;
  const price = call.model.price;
  const units = answeredUnits(served.units, ctx.rules?.units);
  const channel = ctx.outcome?.channel;
  // `atList`: the usage priced at the list price, which the operator's cost reuses.
  const billed = (usage: Usage, estimated: boolean, atList: Priced, charged = atList): Billed => ({
    usage, estimated, priced: charged,
    channelCostNano: operatorCost(usage, price, call.model.name, channel?.cost, units, atList),
  });
  if (served.charge === "reported" && served.usage) {
    const usage = served.usage;
    const estimated = served.usageEstimated === true || (served.unitsEstimated && unitPriced(price));
    return billed(usage, estimated, priceUsage(usage, price, group.multiplierPpm, units));
  }
  const fault = billingFault(ctx);
  if (fault) {
    // The reservation was priced from this usage at admission: the breakdown reproduces it.
    const priced = priceUsage(fault.usage, price, group.multiplierPpm, ctx.rules?.units);
    return billed(fault.usage, true, priced, priced.costNano === fault.costNano ? priced : reservationCharge(fault.costNano));
  }
  const usage = cutAnswerUsage({
    bodyBytes: call.body.length, outputChars: served.outputChars, reported: served.usage,
    readMs: served.readMs, reservedOutput: ctx.admission?.output?.tokens,
  });
  return billed(usage, true, priceUsage(usage, price, group.multiplierPpm, units));
}

/** A charge of the reservation's amount as it stands (its pricing could not be repeated):
 * one line, so the breakdown still adds up to what was charged. */
function reservationCharge(costNano: bigint): Priced {
  const priceFemto = costNano * 1_000_000n;
  return { costNano, lines: [{ component: "reservation", quantity: 1, priceFemto, per: 1 }], multiplierPpm: 1_000_000n, scaledSum: priceFemto * 1_000_000n };
}

/** A request's charge: the usage priced, its cost and breakdown, and its cost to the operator. */
interface Billed {
  readonly usage: Usage;
  readonly estimated: boolean;
  readonly priced: Priced;
  readonly channelCostNano: bigint;
}

/** The status a failed request's client sees: the error's, unless the answer had started. */
function failedStatus(ctx: Settling, failure: unknown): number {
  if (ctx.res.headersSent) return ctx.res.statusCode;
  return failure instanceof GatewayError ? failure.status : errors.internal.status;
}
