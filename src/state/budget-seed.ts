// Where a new budget counter's past comes from: the usage log, asked what the budget's
// subject used since the window's start, per bucket. A restart (or a new process) thus
// never hands out a fresh monthly budget.

import type { BudgetWindow } from "./interfaces.js";

/** What a subject used per bucket, in the budget's measure (tokens or nano-units). */
export type BudgetSeeder = (window: BudgetWindow) => Promise<readonly { bucket: number; amount: number }[]>;
