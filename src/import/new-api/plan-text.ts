// The plan and the outcome as an operator reads them: counts first, then every skipped
// item with its reason, then the adjustments made on the way.

import { formatNano } from "../../billing/cost.js";
import type { ImportOutcome } from "./apply.js";
import type { ExistingAccounts } from "./existing.js";
import type { ImportPlan } from "./plan.js";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** What the import will create, given what the store has already. */
export function planText(plan: ImportPlan, existing: ExistingAccounts): string {
  const newUsers = plan.users.filter((u) => !existing.users.has(u.user.name) && !existing.foreignUsers.has(u.user.name));
  const credit = newUsers.reduce((sum, u) => sum + u.creditNano, 0n);
  const newTokens = plan.tokens.filter((t) => !existing.tokens.has(t.token.name) && !existing.keysTaken.has(t.token.name) && !existing.foreignUsers.has(t.token.user));
  const lines = [
    "plan:",
    `  users:    ${plural(newUsers.length, "new user")}, ${existing.users.size} already there`
      + (existing.foreignUsers.size > 0 ? `, ${existing.foreignUsers.size} taken by another user (left alone)` : ""),
    `  credit:   opening balances of new users: ${formatNano(credit)} (users already there: credited before, not again)`,
    `  tokens:   ${plural(newTokens.length, "new token")}, ${existing.tokens.size} already there`
      + (existing.keysTaken.size > 0 ? `, ${existing.keysTaken.size} whose key another token has` : ""),
    `  groups:   ${[...plan.groups].map(([g, m]) => `${g} (×${m})`).join(", ") || "none"}`,
    `  channels: ${plan.channels.map((c) => `${c.name} (${c.protocol}, ${plural(c.models.length, "model")})`).join(", ") || "none"}`,
    `  models:   ${plural(plan.models.size, "priced model")}`,
  ];
  if (plan.skipped.length > 0) {
    lines.push(`skipped (${plan.skipped.length}):`);
    for (const s of plan.skipped) lines.push(`  ${s.kind} ${s.what}: ${s.reason}`);
  }
  if (plan.notes.length > 0) {
    lines.push("notes:");
    for (const n of plan.notes) lines.push(`  ${n}`);
  }
  return lines.join("\n") + "\n";
}

/** What a run did. */
export function outcomeText(o: ImportOutcome): string {
  const lines = [
    "done:",
    `  users:   ${o.usersCreated.length} created, ${o.usersThere.length} already there`
      + (o.usersForeign.length > 0 ? `, ${o.usersForeign.length} left alone (${o.usersForeign.join(", ")}: a user of that name not from new-api)` : ""),
    `  credit:  ${plural(o.creditsAdded, "opening credit")} added (${formatNano(o.creditNano)}), ${o.creditsThere} already there`,
    `  tokens:  ${o.tokensCreated.length} created, ${o.tokensThere.length} already there`
      + (o.tokensKeyTaken.length > 0 ? `, ${o.tokensKeyTaken.length} not created (key in use by another token: ${o.tokensKeyTaken.join(", ")})` : ""),
  ];
  return lines.join("\n") + "\n";
}
