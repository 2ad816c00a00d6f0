// A billing fault: an answer that completed without the usage its provider always sends
// (a token-priced model's whole answer, not a stream the client or the upstream cut).
// It is billed at the reservation (the pre-deduction, an upper bound of its cost), never
// at a byte estimate a client could shrink; logged once per request and counted.

import { tokenPriced } from "../billing/cost.js";
import { log } from "../observability/log.js";
import { billingFaults } from "../observability/metrics.js";
import type { Usage } from "../protocols/usage.js";
import type { RequestContext } from "./context.js";
import { modelNameOf } from "./context.js";

/** Why an answer is a billing fault (the metric's `reason` label). */
export type BillingFaultReason = "missing_usage";

/** What a billing fault is charged: the reservation's amount, and the usage it was priced from. */
export interface FaultCharge {
  readonly usage: Usage;
  readonly costNano: bigint;
}

/** The charge of a whole answer without usage on a token-priced model, logged and counted;
 * undefined when the answer is no billing fault (or no reservation was held to bill). */
export function billingFault(ctx: RequestContext): FaultCharge | undefined {
  const served = ctx.outcome?.served;
  // A realtime session (101) reports usage per response, and may rightly have none: it is
  // metered by its own rules, not judged here.
  if (!served || served.charge !== "reported" || served.usage !== undefined || served.status === 101) return undefined;
  const model = ctx.call?.model;
  const reservation = ctx.admission?.reservation;
  const reservedUsage = ctx.admission?.reservedUsage;
  if (!model || !tokenPriced(model.price) || !reservation || !reservedUsage) return undefined;
  const channel = ctx.outcome?.channel;
  const reason: BillingFaultReason = "missing_usage";
  billingFaults.inc({ channel: channel?.name ?? "", reason });
  log.warn("billing fault: the answer carried no usage; billed at the reservation", {
    requestId: ctx.id, reason, model: modelNameOf(ctx), channel: channel?.name, protocol: ctx.target?.route.name,
    costNano: reservation.amountNano,
  });
  return { usage: reservedUsage, costNano: reservation.amountNano };
}
