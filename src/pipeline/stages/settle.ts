// Settlement: the stage around everything that can cost money (reserve → upstream). Once
// the rest of the chain is done it prices what the upstream served (its usage, or a marked
// estimate), settles the reservation against the accounts and appends the usage-log entry
// together, waits until both are done when they charge anything (the entry durable, the
// spend updated), and only then releases the answer's last bytes. A charge that cannot be
// committed withholds them: nothing is served unbilled.

import { costOf, unitPriced } from "../../billing/cost.js";
import { cutAnswerUsage } from "../../billing/estimate.js";
import type { UsageSink } from "../../billing/usage-sink.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { log } from "../../observability/log.js";
import { costTally } from "../../observability/metrics.js";
import { emptyUsage, type Usage } from "../../protocols/usage.js";
import type { Admitter, UsageLog } from "../../state/interfaces.js";
import { commitCharge } from "../commit-charge.js";
import type { UsageEntry } from "../../state/store.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { answeredStatus, upstreamServed } from "../outcome.js";
import { shownCost } from "../shown-cost.js";
import { billingFault } from "../billing-fault.js";

export function settleStage(admitter: Admitter, usageLog: UsageLog, observer: UsageSink): Stage<RequestContext> {
  return async (ctx, next) => {
    let failure: unknown;
    try {
      await next();
    } catch (err) {
      failure = err;
    }
    const entry = usageEntry(ctx, failure);
    ctx.settled = entry;
    const committed = commitCharge(admitter, usageLog, ctx, entry);
    observer.record({ entry, attempts: ctx.attempts });
    const served = ctx.served;
    if (entry.costNano > 0n) {
      costTally.add(Number(entry.costNano), entry.model, entry.group);
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

function causeText(err: unknown): string {
  return String((err as { cause?: unknown }).cause ?? err);
}

/** The request's usage-log entry: what it is charged, and how it ended. */
function usageEntry(ctx: RequestContext, failure: unknown): UsageEntry {
  const token = ctx.token!;
  const served = ctx.served;
  const group = ctx.group ?? ctx.runtime.groups.get(token.group);
  const billed = ctx.model && group ? billedUsage(ctx) : undefined;
  const costNano = !billed ? 0n
    : billed.costNano ?? costOf(billed.usage, ctx.model!.price, group!.multiplierPpm, served!.units ?? ctx.units);
  const durationMs = Number(process.hrtime.bigint() - ctx.startNs) / 1e6;
  const firstByteNs = served?.firstByteNs;
  return {
    requestId: ctx.id,
    time: Date.now() - Math.round(durationMs),
    token: token.name,
    user: token.user,
    group: token.group,
    model: ctx.modelName ?? "",
    upstreamModel: ctx.upstreamModel,
    channel: ctx.channel?.name,
    inboundProtocol: ctx.route?.name ?? "unknown",
    upstreamProtocol: ctx.channel?.protocol,
    usage: billed?.usage ?? emptyUsage(),
    costNano,
    status: failure === undefined ? answeredStatus(ctx) : failedStatus(ctx, failure),
    error: failure === undefined ? undefined : failure instanceof GatewayError ? failure.code : errors.internal.code,
    durationMs,
    ttfbMs: firstByteNs ? Number(firstByteNs - ctx.startNs) / 1e6 : undefined,
    estimated: billed !== undefined && (billed.estimated || (served!.unitsEstimated && unitPriced(ctx.model!.price))),
    droppedFields: served?.droppedFields,
  };
}

/** What is priced: the reported usage; the reservation (usage and amount) for a whole
 * answer that reported none on a token-priced model (a billing fault); an estimate
 * (cutAnswerUsage: what was reported, else input from the request's size and output from
 * the text delivered and, for a client that left, the time read) when the answer did not
 * complete or its model is not priced by tokens; undefined (nothing is charged) when no
 * upstream served it. */
function billedUsage(ctx: RequestContext): { usage: Usage; estimated: boolean; costNano?: bigint } | undefined {
  const served = ctx.served;
  if (!served || served.charge === "none" || !upstreamServed(ctx)) return undefined;
  if (served.charge === "reported" && served.usage) return { usage: served.usage, estimated: served.usageEstimated === true };
  const fault = billingFault(ctx);
  if (fault) return { usage: fault.usage, estimated: true, costNano: fault.costNano };
  return {
    usage: cutAnswerUsage({
      bodyBytes: ctx.body?.length ?? 0, outputChars: served.outputChars, reported: served.usage,
      readMs: served.readMs, reservedOutput: ctx.output?.tokens,
    }),
    estimated: true,
  };
}

/** The status a failed request's client sees: the error's, unless the answer had started. */
function failedStatus(ctx: RequestContext, failure: unknown): number {
  if (ctx.res.headersSent) return ctx.res.statusCode;
  return failure instanceof GatewayError ? failure.status : errors.internal.status;
}
