// The rollups a SQLite store's retention thinned: the usage_daily rows that hold more than
// the entries still there add up to. `gateway migrate` brings the ledger's rows of those
// keys up to them, since the ledger builds rollups and spend from the entries it is given
// alone; so the days and the balances retention thinned come across whole.

import type Database from "better-sqlite3";
import { SPEND_MONEY_SQL } from "./entry.js";
import type { Rollup } from "./rollups.js";

const COUNTED = ["requests", "input", "cache_read", "cache_write", "output", "reasoning", "cost", "channel_cost", "channel_cost_unknown"] as const;

/** usage_daily's rows that differ from what their entries add up to: retention kept the
 * row and removed some or all of its entries. */
const THINNED_SQL = `
  WITH kept AS (
    SELECT (time - ((time % 86400000) + 86400000) % 86400000) / 86400000 AS day, user, token, model,
      COALESCE(channel, '') AS channel, grp, COUNT(*) AS requests, SUM(input) AS input, SUM(cache_read) AS cache_read,
      SUM(cache_write) AS cache_write, SUM(output) AS output, SUM(reasoning) AS reasoning, ${SPEND_MONEY_SQL}
    FROM usage_log GROUP BY 1, 2, 3, 4, 5, 6
  )
  SELECT d.day, d.user, d.token, d.model, d.channel, d.grp, d.requests, d.input, d.cache_read, d.cache_write, d.output,
    d.reasoning, d.cost_nano AS cost, d.channel_cost_nano AS channel_cost, d.channel_cost_unknown
  FROM usage_daily d LEFT JOIN kept k
    ON k.day = d.day AND k.user = d.user AND k.token = d.token AND k.model = d.model AND k.channel = d.channel AND k.grp = d.grp
  WHERE k.requests IS NULL OR ${COUNTED.map((c) => `d.${c === "cost" ? "cost_nano" : c === "channel_cost" ? "channel_cost_nano" : c} <> k.${c}`).join(" OR ")}
  ORDER BY d.day, d.user, d.token, d.model, d.channel, d.grp`;

type GapRow = Record<"day" | (typeof COUNTED)[number], bigint> & Record<"user" | "token" | "model" | "channel" | "grp", string>;

/** The store's rollup rows retention thinned (none when it removed no entry, or the store
 * predates rollups). */
export function thinnedRollups(db: Database.Database): Rollup[] {
  const hasRollups = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage_daily'").get();
  if (!hasRollups) return [];
  const rows = db.prepare(THINNED_SQL).safeIntegers(true).all() as GapRow[];
  return rows.map((r) => ({
    day: Number(r.day), user: r.user, token: r.token, model: r.model, channel: r.channel, group: r.grp,
    requests: Number(r.requests),
    usage: { input: Number(r.input), cacheRead: Number(r.cache_read), cacheWrite: Number(r.cache_write), output: Number(r.output), reasoning: Number(r.reasoning) },
    costNano: r.cost, channelCostNano: r.channel_cost, channelCostUnknown: Number(r.channel_cost_unknown),
  }));
}
