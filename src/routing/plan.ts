// The attempt plan for one request: channels in the order they will be tried.
// Highest priority first; within a priority, a weighted random order without repeats.

import type { Channel, ChannelTier } from "../runtime/types.js";

/**
 * Orders candidate channels for failover: tier by tier, each tier shuffled by weight
 * (a channel with weight 3 comes first three times as often as one with weight 1).
 * `accept` filters out channels this request cannot use; `limit` bounds the result.
 */
export function planAttempts(
  tiers: readonly ChannelTier[],
  limit: number,
  accept: (c: Channel) => boolean = () => true,
  random: () => number = Math.random,
): Channel[] {
  // The common case, one channel: no copies, no random draw.
  if (tiers.length === 1 && tiers[0].channels.length === 1) {
    const only = tiers[0].channels[0];
    return limit > 0 && accept(only) ? [only] : [];
  }
  const plan: Channel[] = [];
  for (const tier of tiers) {
    if (plan.length >= limit) break;
    const pool = tier.channels.filter(accept);
    let weight = pool.length === tier.channels.length ? tier.totalWeight : sumWeights(pool);
    while (pool.length > 0 && plan.length < limit) {
      const i = pickWeighted(pool, weight, random);
      const [picked] = pool.splice(i, 1);
      weight -= picked.weight;
      plan.push(picked);
    }
  }
  return plan;
}

function sumWeights(channels: readonly Channel[]): number {
  let total = 0;
  for (const c of channels) total += c.weight;
  return total;
}

function pickWeighted(pool: readonly Channel[], total: number, random: () => number): number {
  if (pool.length === 1 || total <= 0) return 0;
  let r = random() * total;
  for (let i = 0; i < pool.length; i++) {
    r -= pool[i].weight;
    if (r < 0) return i;
  }
  return pool.length - 1;
}
