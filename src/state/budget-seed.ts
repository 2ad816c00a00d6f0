// Where a new budget counter's past comes from: the usage log, asked what the budget's
// subject used since the window's start, per bucket. A restart (or a new process) thus
// never hands out a fresh monthly budget.

import type { BudgetWindow, UsageLog } from "./interfaces.js";

/** What a subject used per bucket, in the budget's measure (tokens or nano-units). */
export type BudgetSeeder = (window: BudgetWindow) => Promise<readonly { bucket: number; amount: number }[]>;

/** The seeder over a usage log: its buckets in the window's measure. */
export function seedFromLog(usageLog: UsageLog): BudgetSeeder {
  return async (window) => {
    if (!window.seed) return [];
    const rows = await usageLog.usageBuckets(window.seed.subject, window.seed.sinceMs, window.bucketMs);
    return rows.map((r) => ({ bucket: r.bucket, amount: window.measure === "money" ? Number(r.costNano) : r.tokens }));
  };
}
