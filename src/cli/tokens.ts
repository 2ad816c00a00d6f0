// `gateway tokens list|show|create|revoke|disable|enable`: the store's tokens. A new
// token's key is printed once, at creation, and kept nowhere (the store holds its hash);
// revoking is final, disabling is not. gateway.yaml's tokens are shown, never changed here.

import { UsageError } from "./args.js";
import { accountCommand, expiryArg, listArg, moneyArg, openCliAccounts, parentCommand, type AccountsOpener } from "./accounts-cli.js";
import { jsonLines, tokenDetails, tokensTable } from "./account-format.js";
import type { Command } from "./command.js";
import { parseCount } from "./format.js";
import { allPages } from "./users.js";

const json = { json: { type: "boolean", description: "JSON (one object a line) instead of text" } } as const;

type Change = "revoke" | "disable" | "enable";

function changeCommand(verb: Change, open: AccountsOpener): Command {
  const summaries: Record<Change, string> = {
    revoke: "Revokes a stored token for good: its key is refused from now on; its name stays taken.",
    disable: "Disables a stored token: its key is refused (401) until it is enabled.",
    enable: "Enables a disabled stored token.",
  };
  return accountCommand({
    name: `tokens ${verb}`,
    summary: summaries[verb],
    synopsis: `gateway tokens ${verb} NAME [--config FILE]`,
    operands: ["NAME"],
    async act({ service, actor }, _flags, [name], io) {
      const token = verb === "revoke" ? await service.revokeToken(name, actor)
        : await service.updateToken(name, { status: verb === "enable" ? "active" : "disabled" }, actor);
      io.out(`token ${token.name} ${verb === "revoke" ? "revoked" : verb === "enable" ? "enabled" : "disabled"}\n`);
    },
  }, open);
}

/** `gateway tokens …` (the opener is a parameter for tests). */
export function tokensCommand(open: AccountsOpener = openCliAccounts): Command {
  const list = accountCommand({
    name: "tokens list",
    summary: "Lists the store's tokens (gateway.yaml's are in the file): user, group, status, key hint, expiry, quota.",
    synopsis: "gateway tokens list [--user U] [--prefix P] [--limit N] [--json] [--config FILE]",
    options: {
      user: { type: "string", value: "U", description: "only the tokens of user U" },
      prefix: { type: "string", value: "P", description: "only tokens whose name starts with P" },
      limit: { type: "string", value: "N", description: "at most N tokens (default: all)", check: (v) => void parseCount("limit", v) },
      ...json,
    },
    async act({ service }, flags, _operands, io) {
      const limit = flags.values.get("limit");
      const tokens = await allPages((after, n) => service.tokens({ user: flags.values.get("user"), prefix: flags.values.get("prefix"), after, limit: n }),
        limit === undefined ? undefined : Number(limit));
      io.out(flags.switches.has("json") ? jsonLines(tokens) : tokensTable(tokens));
    },
  }, open);

  const show = accountCommand({
    name: "tokens show",
    summary: "Shows one token (stored or gateway.yaml's), with what it has spent; never its key.",
    synopsis: "gateway tokens show NAME [--json] [--config FILE]",
    operands: ["NAME"],
    options: json,
    async act({ service }, flags, [name], io) {
      const token = await service.token(name);
      io.out(flags.switches.has("json") ? jsonLines([token]) : tokenDetails(token));
    },
  }, open);

  const create = accountCommand({
    name: "tokens create",
    summary: "Creates a stored token for a stored user and prints its key, once.",
    synopsis: "gateway tokens create NAME --user U [--group G] [--expires 30d|ISO] [--quota AMOUNT] [--allow-ip CIDR[,…]] [--model M[,…]] [--disabled] [--json] [--config FILE]",
    operands: ["NAME"],
    options: {
      user: { type: "string", value: "U", description: "the stored user it belongs to; required" },
      group: { type: "string", value: "G", description: "its group, one of the user's (default: the user's only group)" },
      expires: { type: "string", value: "WHEN", description: "when it stops working: an ISO date or date-time, or a span from now (30d, 12h)", check: (v) => void expiryArg(v, 0) },
      quota: { type: "string", value: "AMOUNT", description: "the most it may spend in total, in the currency (default: unlimited)", check: (v) => void moneyArg("--quota", v) },
      "allow-ip": { type: "string", value: "CIDR[,…]", description: "addresses and CIDR ranges it may be used from, comma-separated (default: any)" },
      model: { type: "string", value: "M[,…]", description: "the models (names or globs) it may call, comma-separated (default: every model of its group)" },
      disabled: { type: "boolean", description: "create it disabled" },
      ...json,
    },
    notes: "The key is printed once (with --json: the `key` field) and stored only as its sha256: keep it now.",
    check(flags) {
      if (!flags.values.has("user")) throw new UsageError("--user is required: the stored user the token belongs to");
    },
    async act({ service, actor }, flags, [name], io) {
      const expires = flags.values.get("expires");
      const quota = flags.values.get("quota");
      const { token, key } = await service.createToken({
        name, user: flags.values.get("user")!, group: flags.values.get("group"),
        status: flags.switches.has("disabled") ? "disabled" : "active",
        expiresAt: expires === undefined ? undefined : expiryArg(expires, io.now?.() ?? Date.now()),
        quotaNano: quota === undefined ? undefined : moneyArg("--quota", quota),
        allowIps: listArg(flags, "allow-ip"), models: listArg(flags, "model"),
      }, actor);
      if (flags.switches.has("json")) {
        io.out(jsonLines([{ token, key }]));
        return;
      }
      io.out(`token ${token.name} created for user ${token.user} (group ${token.group})\n`
        + `key (shown once, now: the gateway keeps only its hash):\n\n  ${key}\n\n`
        + tokenDetails(token));
    },
  }, open);

  return parentCommand("tokens", "Tokens of the accounts store: list, show, create (the key shown once), revoke, disable, enable.",
    [list, show, create, changeCommand("revoke", open), changeCommand("disable", open), changeCommand("enable", open)]);
}
