// `gateway audit`: the audit log of account changes, newest first: who (an admin key's
// name, cli:<os user>, token:<name> for a redemption), what, on which user, token or batch,
// and what changed. Never a key or a key hash.

import type { AuditRecord } from "../accounts/store.js";
import { accountCommand, openCliAccounts, type AccountsOpener } from "./accounts-cli.js";
import { auditJson, auditTable } from "./account-format.js";
import type { Command } from "./command.js";
import { parseCount } from "./format.js";

const DEFAULT_LIMIT = 50;

/** `gateway audit` (the opener is a parameter for tests). */
export function auditCommand(open: AccountsOpener = openCliAccounts): Command {
  return accountCommand({
    name: "audit",
    summary: "The audit log of account changes, newest first: actor, action, target and what changed.",
    synopsis: "gateway audit [--target NAME] [--actor A] [--limit N] [--json] [--config FILE]",
    options: {
      target: { type: "string", value: "NAME", description: "only changes to this user, token or batch" },
      actor: { type: "string", value: "A", description: "only changes by this actor (an admin key's name, cli:<os user>, token:<name>)" },
      limit: { type: "string", value: "N", description: `at most N records (default ${DEFAULT_LIMIT})`, check: (v) => void parseCount("limit", v) },
      json: { type: "boolean", description: "one JSON object a line (before and after in full) instead of a table" },
    },
    notes: "ACTION: user.create, user.update, token.create, token.update, token.revoke, credit.add, codes.create, code.redeem.",
    async act({ store }, flags, _operands, io) {
      const limit = Number(flags.values.get("limit") ?? DEFAULT_LIMIT);
      const records: AuditRecord[] = [];
      let before: number | undefined;
      do {
        const page = await store.audit({ target: flags.values.get("target"), actor: flags.values.get("actor"), before, limit: Math.min(1000, limit - records.length) });
        records.push(...page.items);
        before = page.next === undefined ? undefined : Number(page.next);
      } while (before !== undefined && records.length < limit);
      io.out(flags.switches.has("json") ? auditJson(records) : auditTable(records));
    },
  }, open);
}
