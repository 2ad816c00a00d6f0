// What an answer shows its client of its cost (X-Gateway-Cost, or beside the usage at a
// stream's end): the usage-log entry's cost, exactly, unless the token's group has
// show_cost: false. Settlement decides it once the charge is committed; an answer whose
// head must go before it ends, and that is billed by its request alone, is quoted up front.

import { costOf, formatNano } from "../billing/cost.js";
import { fallbackUsage } from "../billing/estimate.js";
import type { Usage } from "../protocols/usage.js";
import type { Group } from "../runtime/types.js";
import type { UsageEntry } from "../state/store.js";
import type { RequestContext } from "./context.js";
import { upstreamServed } from "./outcome.js";

/** The cost shown for a settled request: for a whole answer an upstream served and that
 * was priced (a free model's is "0"); undefined for anything else, or when hidden. */
export function shownCost(ctx: RequestContext, entry: UsageEntry, failure: unknown): string | undefined {
  const served = ctx.outcome?.served;
  if (failure !== undefined || !served || served.ending !== "complete" || served.charge === "none" || !upstreamServed(ctx)) return undefined;
  return ctx.call && shows(ctx) ? formatNano(entry.costNano) : undefined;
}

/**
 * The cost an answer billed by its request alone (its usage known before it arrives, or
 * none: then the request's estimate) will be charged, as shown: settlement prices such an
 * answer by the same terms. For answers relayed as they arrive (audio), whose head goes
 * before their end. Undefined when the group hides costs.
 */
export function requestQuote(ctx: RequestContext, usage: Usage | undefined): string | undefined {
  const call = ctx.call;
  const group = groupOf(ctx);
  if (!call || !group?.showCost) return undefined;
  return formatNano(costOf(usage ?? fallbackUsage(call.body.length, 0), call.model.price, group.multiplierPpm, ctx.rules?.units));
}

function groupOf(ctx: RequestContext): Group | undefined {
  return ctx.account?.group ?? (ctx.caller ? ctx.runtime.groups.get(ctx.caller.group) : undefined);
}

function shows(ctx: RequestContext): boolean {
  return groupOf(ctx)?.showCost ?? false;
}
