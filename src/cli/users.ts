// `gateway users list|show|create|disable|enable`: the users of the store beside the ones
// gateway.yaml declares, with credit, spent and balance; creating one (with an opening
// grant), and disabling or enabling it. A gateway.yaml user is shown, never changed here.

import type { UserView } from "../accounts/service.js";
import type { Page } from "../accounts/store.js";
import { accountCommand, listArg, moneyArg, openCliAccounts, parentCommand, type AccountsOpener } from "./accounts-cli.js";
import { jsonLines, userDetails, usersTable } from "./account-format.js";
import type { Command } from "./command.js";
import { parseCount } from "./format.js";

const json = { json: { type: "boolean", description: "JSON (one object a line) instead of text" } } as const;

/** Reads every page (or the first `limit` items) of a listing. */
export async function allPages<T>(read: (after: string | undefined, limit: number) => Promise<Page<T>>, limit?: number): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  do {
    const page = await read(after, Math.min(1000, limit === undefined ? 1000 : limit - items.length));
    items.push(...page.items);
    after = page.next;
  } while (after !== undefined && (limit === undefined || items.length < limit));
  return items;
}

function statusCommand(status: "active" | "disabled", open: AccountsOpener): Command {
  const verb = status === "active" ? "enable" : "disable";
  return accountCommand({
    name: `users ${verb}`,
    summary: status === "active" ? "Enables a stored user: its tokens work again." : "Disables a stored user: its tokens are refused (401) until it is enabled.",
    synopsis: `gateway users ${verb} NAME [--config FILE]`,
    operands: ["NAME"],
    async act({ service, actor }, _flags, [name], io) {
      const user = await service.updateUser(name, { status }, actor);
      io.out(`user ${user.name} ${status === "active" ? "enabled" : "disabled"}\n`);
    },
  }, open);
}

/** `gateway users …` (the opener is a parameter for tests). */
export function usersCommand(open: AccountsOpener = openCliAccounts): Command {
  const list = accountCommand({
    name: "users list",
    summary: "Lists users, stored and gateway.yaml's, with credit, spent and balance.",
    synopsis: "gateway users list [--prefix P] [--limit N] [--json] [--config FILE]",
    options: {
      prefix: { type: "string", value: "P", description: "only users whose name starts with P" },
      limit: { type: "string", value: "N", description: "at most N users (default: all)", check: (v) => void parseCount("limit", v) },
      ...json,
    },
    async act({ service }, flags, _operands, io) {
      const prefix = flags.values.get("prefix");
      const limit = flags.values.get("limit");
      const users: UserView[] = await allPages((after, n) => service.users({ prefix, after, limit: n }), limit === undefined ? undefined : Number(limit));
      io.out(flags.switches.has("json") ? jsonLines(users) : usersTable(users));
    },
  }, open);

  const show = accountCommand({
    name: "users show",
    summary: "Shows one user: source, status, groups, credit, spent and balance.",
    synopsis: "gateway users show NAME [--json] [--config FILE]",
    operands: ["NAME"],
    options: json,
    async act({ service }, flags, [name], io) {
      const user = await service.user(name);
      io.out(flags.switches.has("json") ? jsonLines([user]) : userDetails(user));
    },
  }, open);

  const create = accountCommand({
    name: "users create",
    summary: "Creates a stored user, with its groups and an opening grant of credit.",
    synopsis: "gateway users create NAME [--group G[,G…]] [--plan P] [--credit AMOUNT] [--note TEXT] [--disabled] [--json] [--config FILE]",
    operands: ["NAME"],
    options: {
      group: { type: "string", value: "G[,G…]", description: "the groups its tokens may use (gateway.yaml's groups), comma-separated" },
      plan: { type: "string", value: "P", description: "a plan gateway.yaml declares (its groups, limits and budgets)" },
      credit: { type: "string", value: "AMOUNT", description: "an opening grant, in the currency (12.5), written to the ledger", check: (v) => void moneyArg("--credit", v) },
      note: { type: "string", value: "TEXT", description: "free text kept beside the account (an email, a customer id)" },
      disabled: { type: "boolean", description: "create it disabled" },
      ...json,
    },
    notes: "NAME: letters, digits and . _ - : @, starting with a letter or digit; not a name gateway.yaml declares.",
    async act({ service, actor }, flags, [name], io) {
      const credit = flags.values.get("credit");
      const user = await service.createUser({
        name, groups: listArg(flags, "group") ?? [], note: flags.values.get("note"),
        status: flags.switches.has("disabled") ? "disabled" : "active",
        creditNano: credit === undefined ? undefined : moneyArg("--credit", credit),
        ...(flags.values.get("plan") === undefined ? {} : { settings: { plan: flags.values.get("plan") } }),
      }, actor);
      io.out(flags.switches.has("json") ? jsonLines([user]) : `user ${user.name} created\n` + userDetails(user));
    },
  }, open);

  const plan = accountCommand({
    name: "users plan",
    summary: "Puts a stored user on a plan gateway.yaml declares (its groups, limits and budgets).",
    synopsis: "gateway users plan NAME PLAN [--config FILE]",
    operands: ["NAME", "PLAN"],
    async act({ service, actor }, _flags, [name, planName], io) {
      const user = await service.updateUser(name, {}, actor, undefined, { plan: planName });
      io.out(`user ${user.name} is on plan ${user.plan}\n`);
    },
  }, open);
  const unplan = accountCommand({
    name: "users unplan",
    summary: "Takes a stored user's plan away.",
    synopsis: "gateway users unplan NAME [--config FILE]",
    operands: ["NAME"],
    async act({ service, actor }, _flags, [name], io) {
      const user = await service.updateUser(name, {}, actor, undefined, { plan: null });
      io.out(`user ${user.name} has no plan now\n`);
    },
  }, open);

  return parentCommand("users", "Users of the accounts store (and gateway.yaml's): list, show, create, plan, unplan, disable, enable.",
    [list, show, create, plan, unplan, statusCommand("disabled", open), statusCommand("active", open)]);
}
