// Looks up the channels that may serve the request's model in its token's group (the
// terminals that reach an upstream: model calls, token counts, realtime sessions).

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { ChannelTier, Runtime } from "../runtime/types.js";

/** The candidate tiers for (group, model); 503 channel_not_found when there are none. */
export function candidateTiers(runtime: Runtime, group: string, modelName: string): readonly ChannelTier[] {
  const tiers = runtime.candidates.get(group)?.get(modelName);
  if (!tiers || tiers.length === 0) {
    throw new GatewayError(errors.channelNotFound,
      `No available channel for model '${modelName}' in group '${group}'.`);
  }
  return tiers;
}
