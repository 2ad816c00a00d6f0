// Precomputes routing: for every (group, model), the enabled channels serving it, in tiers
// of equal priority (highest first) with weights pre-summed, so selection only looks up.

import type { Channel, ChannelTier } from "../runtime/types.js";

/** group → model → tiers; only (group, model) pairs with at least one channel appear. */
export type CandidateTable = Map<string, Map<string, ChannelTier[]>>;

/** Builds the candidate table from compiled channels (config order kept within a tier). */
export function buildCandidates(
  groups: Iterable<string>,
  models: Iterable<string>,
  channels: readonly Channel[],
): CandidateTable {
  const table: CandidateTable = new Map();
  const modelNames = [...models];
  for (const group of groups) {
    const byModel = new Map<string, ChannelTier[]>();
    for (const model of modelNames) {
      const serving = channels.filter((c) => c.enabled && c.groups.has(group) && c.models.has(model));
      if (serving.length) byModel.set(model, tiers(serving));
    }
    if (byModel.size) table.set(group, byModel);
  }
  return table;
}

function tiers(channels: Channel[]): ChannelTier[] {
  const byPriority = new Map<number, Channel[]>();
  for (const channel of channels) {
    const tier = byPriority.get(channel.priority);
    if (tier) tier.push(channel);
    else byPriority.set(channel.priority, [channel]);
  }
  return [...byPriority.entries()]
    .sort(([a], [b]) => b - a)
    .map(([priority, members]) => ({
      priority,
      channels: members,
      totalWeight: members.reduce((sum, c) => sum + c.weight, 0),
    }));
}
