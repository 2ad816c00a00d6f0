// The one table between reasoning effort levels and thinking budgets, so every protocol
// converts "high" to the same budget and back.

import type { ReasoningEffort } from "./canonical.js";

const budgets: Readonly<Record<ReasoningEffort, number>> = { minimal: 1024, low: 2048, medium: 8192, high: 24576 };

/** The thinking budget (tokens) for an effort level. */
export function budgetOf(effort: ReasoningEffort): number {
  return budgets[effort];
}

/** Thinking budget → effort: ≤1024 minimal, ≤2048 low, ≤8192 medium, else high. */
export function effortOf(budget: number): ReasoningEffort {
  if (budget <= 1024) return "minimal";
  if (budget <= 2048) return "low";
  if (budget <= 8192) return "medium";
  return "high";
}
