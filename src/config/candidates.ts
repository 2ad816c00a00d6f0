// Precomputes routing: for every (group, model), the enabled channels serving it, in tiers
// of equal priority (highest first) with weights pre-summed, so selection only looks up.
// A group with strategy: cheapest splits each priority by the channels' cost to the
// operator, cheapest first, so the plan tries them in that order (weighted among equals).

import { rankingCost } from "../billing/cost.js";
import type { Channel, ChannelTier, Group, Model } from "../runtime/types.js";

/** group → model → tiers; only (group, model) pairs with at least one channel appear. */
export type CandidateTable = Map<string, Map<string, ChannelTier[]>>;

/** Builds the candidate table from compiled channels (config order kept within a tier). */
export function buildCandidates(
  groups: Iterable<Group>,
  models: ReadonlyMap<string, Model>,
  channels: readonly Channel[],
): CandidateTable {
  const table: CandidateTable = new Map();
  for (const group of groups) {
    const byModel = new Map<string, ChannelTier[]>();
    for (const model of models.values()) {
      const serving = channels.filter((c) => c.enabled && c.groups.has(group.name) && c.models.has(model.name));
      if (serving.length === 0) continue;
      const byPriority = tiers(serving, (c) => c.priority);
      byModel.set(model.name, group.strategy === "cheapest" ? byPriority.flatMap((tier) => byCost(tier, model)) : byPriority);
    }
    if (byModel.size) table.set(group.name, byModel);
  }
  return table;
}

/** Channels in tiers of one key each, highest key first. */
function tiers(channels: readonly Channel[], key: (c: Channel) => number, priority?: number): ChannelTier[] {
  const byKey = new Map<number, Channel[]>();
  for (const channel of channels) {
    const k = key(channel);
    const tier = byKey.get(k);
    if (tier) tier.push(channel);
    else byKey.set(k, [channel]);
  }
  return [...byKey.entries()]
    .sort(([a], [b]) => b - a)
    .map(([k, members]) => ({
      priority: priority ?? k,
      channels: members,
      totalWeight: members.reduce((sum, c) => sum + c.weight, 0),
    }));
}

/** One priority's channels split by their cost for the model, cheapest first. */
function byCost(tier: ChannelTier, model: Model): ChannelTier[] {
  if (tier.channels.length === 1) return [tier];
  const costs = new Map(tier.channels.map((c) => [c, rankingCost(model.price, model.name, c.cost)]));
  const distinct = [...new Set(costs.values())].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Rank 0 is the cheapest; the highest key comes first, so key by the negated rank.
  return tiers(tier.channels, (c) => -distinct.indexOf(costs.get(c)!), tier.priority);
}
