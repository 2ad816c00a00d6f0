// Looks up the channels that may serve the request's model in its token's group.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { ChannelTier } from "../../runtime/types.js";
import type { RequestContext } from "../context.js";

/** The candidate tiers for (group, model); 503 channel_not_found when there are none. */
export function candidateTiers(ctx: RequestContext): readonly ChannelTier[] {
  const group = ctx.token!.group;
  const tiers = ctx.runtime.candidates.get(group)?.get(ctx.modelName!);
  if (!tiers || tiers.length === 0) {
    throw new GatewayError(errors.channelNotFound,
      `No available channel for model '${ctx.modelName}' in group '${group}'.`);
  }
  return tiers;
}
