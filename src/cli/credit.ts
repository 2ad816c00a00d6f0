// `gateway credit add|list`: the credit ledger of a user (stored or gateway.yaml's). A
// grant or top-up is a positive amount, an adjustment a negative one; each says why, and an
// idempotency key (a payment id) makes a retried top-up credit once.

import { UsageError } from "./args.js";
import { accountCommand, moneyArg, openCliAccounts, parentCommand, type AccountsOpener } from "./accounts-cli.js";
import { creditTable, jsonLines, RESERVED_NOTE } from "./account-format.js";
import type { Command } from "./command.js";
import { parseCount } from "./format.js";
import { allPages } from "./users.js";

const json = { json: { type: "boolean", description: "JSON (one object a line) instead of text" } } as const;

/** `gateway credit …` (the opener is a parameter for tests). */
export function creditCommand(open: AccountsOpener = openCliAccounts): Command {
  const add = accountCommand({
    name: "credit add",
    summary: "Adds a grant or top-up (AMOUNT > 0) or an adjustment (AMOUNT < 0) to a user's credit, with its reason.",
    synopsis: "gateway credit add USER AMOUNT --reason TEXT [--idempotency-key K] [--json] [--config FILE]",
    operands: ["USER", "AMOUNT"],
    options: {
      reason: { type: "string", value: "TEXT", description: "why (kept in the ledger and the audit log); required" },
      "idempotency-key": { type: "string", value: "K", description: "a payment id: the same key never credits twice" },
      ...json,
    },
    notes: "AMOUNT: a decimal of the currency (12.5), at most 9 decimal places. A negative AMOUNT goes after `--`:\n"
      + "  gateway credit add bob --reason 'refund of a double charge' -- -5\n"
      + "The same --idempotency-key with the same user and amount adds nothing (exit 0, says so); with another, exit 1.",
    check(flags, [, amount]) {
      moneyArg("AMOUNT", amount, { allowNegative: true });
      if (!flags.values.has("reason")) throw new UsageError("--reason is required: say why (it is kept in the ledger)");
    },
    async act({ service, actor }, flags, [user, amount], io) {
      const { entry, created, user: after } = await service.addCredit(
        user, moneyArg("AMOUNT", amount, { allowNegative: true }), flags.values.get("reason")!, actor, flags.values.get("idempotency-key"));
      if (flags.switches.has("json")) {
        io.out(jsonLines([{ entry, created, user: after }]));
        return;
      }
      io.out(created ? `${entry.kind} of ${entry.amount} to ${user} recorded (entry ${entry.id})\n`
        : `nothing added: idempotency key '${entry.idempotency_key}' was used before (entry ${entry.id}, ${entry.at})\n`);
      io.out(`${user}: credit ${after.credit}, spent ${after.spent}, balance ${after.balance}\n`);
      if (after.reserved === undefined) io.out(RESERVED_NOTE);
    },
  }, open);

  const list = accountCommand({
    name: "credit list",
    summary: "Lists a user's credit entries, newest first: grants, adjustments and redeemed codes.",
    synopsis: "gateway credit list USER [--limit N] [--json] [--config FILE]",
    operands: ["USER"],
    options: {
      limit: { type: "string", value: "N", description: "at most N entries (default: all)", check: (v) => void parseCount("limit", v) },
      ...json,
    },
    async act({ service }, flags, [user], io) {
      const limit = flags.values.get("limit");
      const entries = await allPages(async (after, n) => {
        const page = await service.creditEntries(user, { before: after === undefined ? undefined : Number(after), limit: n });
        return page;
      }, limit === undefined ? undefined : Number(limit));
      io.out(flags.switches.has("json") ? jsonLines(entries) : creditTable(entries));
    },
  }, open);

  return parentCommand("credit", "A user's credit ledger: add a grant, top-up or adjustment; list the entries.", [add, list]);
}
