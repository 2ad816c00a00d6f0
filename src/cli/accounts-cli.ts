// What the account commands (`gateway users|credit|tokens|codes|audit`) share: opening the
// accounts store and the usage log a config names, acting through the AccountService as
// `cli:<os user>`, and the one way they fail: a bad command line exits 2, a refusal of the
// store or the service (no such user, a name taken, a bad group) exits 1 with its message.
//
// The commands take the opener as a parameter, so tests run them on a memory store.

import { userInfo } from "node:os";
import { dirname } from "node:path";
import { InvalidField, parseExpiry, parseMoney } from "../accounts/money-input.js";
import { openAccountStore } from "../accounts/open.js";
import { AccountService, type SpendSource } from "../accounts/service.js";
import { IdempotencyMismatch, KeyTaken, NameTaken, NotFound, VersionConflict, type Actor, type AccountStore } from "../accounts/store.js";
import type { Runtime } from "../runtime/types.js";
import type { UsageLog } from "../state/interfaces.js";
import { openUsageLog, parseStoreSpec } from "../state/open.js";
import { UsageError, type Flags, type OptionTable } from "./args.js";
import type { Command } from "./command.js";
import { configOrIssues } from "./config-or-issues.js";
import type { CliIo } from "./format.js";

/** The accounts as a command acts on them; closed when the command ends. */
export interface CliAccounts {
  readonly service: AccountService;
  /** For what the service does not show (the audit log). */
  readonly store: AccountStore;
  /** Who the audit log says made each change: `cli:<os user>`. */
  readonly actor: Actor;
  close(): Promise<void>;
}

/** Opens the accounts a command acts on, or prints why it cannot and gives undefined. */
export type AccountsOpener = (flags: Flags, io: CliIo) => Promise<CliAccounts | undefined>;

/** Who the audit log says made a change from the command line. */
export function cliActor(): Actor {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER ?? process.env.LOGNAME; // no passwd entry (some containers)
  }
  return { actor: `cli:${name || "unknown"}` };
}

/** --config: where every account command finds the store. */
export const configOption: OptionTable = {
  config: { type: "string", short: "c", value: "FILE", description: "act on the accounts store (or ledger) this config names (default gateway.yaml)" },
};

/** What was spent, from the usage log, opened read-only when first asked (a command that
 * shows no money never opens it). What running gateways hold for requests in flight is
 * theirs (on SQLite, inside their process), so the CLI shows no `reserved`. */
class LazySpend implements SpendSource {
  #opened: Promise<UsageLog> | undefined;

  constructor(private readonly open: () => Promise<UsageLog>) {}

  #log(): Promise<UsageLog> {
    this.#opened ??= this.open().catch((err: unknown) => {
      throw new Error(`cannot read the usage log for the spend: ${(err as Error).message}`);
    });
    return this.#opened;
  }

  async spentByUser(user: string): Promise<bigint> {
    return (await this.#log()).spentByUser(user);
  }

  async spentByToken(token: string): Promise<bigint> {
    return (await this.#log()).spentByToken(token);
  }

  async close(): Promise<void> {
    const opened = this.#opened;
    if (opened) await opened.then((log) => log.close(), () => undefined);
  }
}

/**
 * The accounts store and usage log of `--config` (default gateway.yaml): `ledger:` when
 * set, else `store:`, relative to the config's folder. A memory store is refused: it lives
 * in the server's process, out of the CLI's reach.
 */
export const openCliAccounts: AccountsOpener = async (flags, io) => {
  const file = flags.values.get("config") ?? "gateway.yaml";
  const runtime = await configOrIssues(file, io);
  if (!runtime) return undefined;
  const spec = { store: runtime.store, ledger: runtime.ledger };
  const baseDir = dirname(runtime.sourcePath);
  let location;
  try {
    location = parseStoreSpec(spec.ledger ?? spec.store, baseDir);
  } catch (err) {
    io.err(`${file}: ${(err as Error).message}\n`);
    return undefined;
  }
  if (location.kind === "memory") {
    io.err(`${file}: store memory: keeps accounts inside the running gateway's process; the CLI cannot reach them.\n`
      + "Use store: sqlite:<path> (or ledger: postgres://…), or the admin API of the running gateway.\n");
    return undefined;
  }
  let store: AccountStore;
  try {
    store = await openAccountStore(spec, { baseDir });
  } catch (err) {
    io.err(`cannot open the accounts store: ${(err as Error).message}\n`);
    return undefined;
  }
  // The accounts store made the file (SQLite): the usage log in it is there to read.
  const spend = new LazySpend(() => openUsageLog(spec, { baseDir, mustExist: true }));
  return accountsOn({
    store, runtime, spend, actor: cliActor(),
    close: async () => {
      await Promise.all([store.close(), spend.close()]);
    },
  });
};

/** CliAccounts over an open store (what the opener and tests build). */
export function accountsOn(opts: {
  readonly store: AccountStore; readonly runtime: Runtime; readonly spend: SpendSource; readonly actor: Actor;
  readonly close: () => Promise<void>; readonly now?: () => number;
}): CliAccounts {
  return { service: new AccountService(opts.store, () => opts.runtime, opts.spend, undefined, opts.now), store: opts.store, actor: opts.actor, close: opts.close };
}

/** One account subcommand: its flags, and what it does with the accounts open. */
export interface AccountCommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly synopsis: string;
  readonly options?: OptionTable;
  /** The operands it requires, by name (NAME, USER, AMOUNT), in order. */
  readonly operands?: readonly string[];
  readonly notes?: string;
  /** Checks that need no store (exit 2 before anything is opened). */
  check?(flags: Flags, operands: readonly string[], io: CliIo): void;
  act(accounts: CliAccounts, flags: Flags, operands: readonly string[], io: CliIo): Promise<number | void>;
}

/** A Command from a spec: exact operands, then open, act, close; refusals exit 1. */
export function accountCommand(spec: AccountCommandSpec, open: AccountsOpener): Command {
  const wanted = spec.operands ?? [];
  return {
    name: spec.name,
    summary: spec.summary,
    synopsis: spec.synopsis,
    options: { ...configOption, ...spec.options },
    operands: wanted.length,
    notes: spec.notes,
    async run(flags, io) {
      if (flags.operands.length < wanted.length) {
        throw new UsageError(`'${spec.name}' needs ${wanted.slice(flags.operands.length).join(" and ")}`);
      }
      spec.check?.(flags, flags.operands, io);
      const accounts = await open(flags, io);
      if (!accounts) return 1;
      try {
        return (await spec.act(accounts, flags, flags.operands, io)) ?? 0;
      } catch (err) {
        if (err instanceof UsageError) throw err;
        // A refusal says what and why; anything else is the store (or usage log) failing.
        io.err(`gateway ${spec.name}: ${isRefusal(err) ? "" : "failed: "}${(err as Error).message}\n`);
        return 1;
      } finally {
        await accounts.close();
      }
    },
  };
}

/** What the store or the service refuses as such (its message says what and why). */
function isRefusal(err: unknown): boolean {
  return err instanceof InvalidField || err instanceof NotFound || err instanceof NameTaken || err instanceof VersionConflict
    || err instanceof IdempotencyMismatch || err instanceof KeyTaken;
}

/** A parent command (`gateway users`): names its subcommands; run alone it exits 2. */
export function parentCommand(name: string, summary: string, subcommands: readonly Command[]): Command {
  const words = subcommands.map((s) => s.name.slice(name.length + 1));
  return {
    name, summary, subcommands,
    synopsis: `gateway ${name} ${words.join("|")} …`,
    options: {},
    notes: `Subcommands:\n${subcommands.map((s) => `  ${s.synopsis ?? s.name}\n      ${s.summary}`).join("\n")}\n`
      + `Run 'gateway ${name} SUBCOMMAND --help' for one's options.`,
    async run() {
      throw new UsageError(`name what to do: ${words.join(", ")}`);
    },
  };
}

/** An amount flag or operand: a decimal of the currency; a bad one exits 2 naming it. */
export function moneyArg(what: string, value: string, opts: { allowNegative?: boolean } = {}): bigint {
  try {
    return parseMoney(value, what, opts);
  } catch (err) {
    throw new UsageError(err instanceof InvalidField ? `${what} '${value}': ${err.message.slice(err.field.length + 2)}` : String(err));
  }
}

/** --expires: an ISO date or date-time, or a span from now (30d, 12h). */
export function expiryArg(value: string, now: number): number {
  try {
    return parseExpiry(value, "--expires", now);
  } catch (err) {
    throw new UsageError(`--expires '${value}': write an ISO date or date-time (2027-01-01, 2027-01-01T00:00:00Z) or a span from now such as 30d or 12h`
      + (err instanceof InvalidField ? "" : ` (${String(err)})`));
  }
}

/** A comma-separated list flag (`--group a,b`); absent: undefined. */
export function listArg(flags: Flags, name: string): string[] | undefined {
  const value = flags.values.get(name);
  if (value === undefined) return undefined;
  const items = value.split(",").map((s) => s.trim());
  if (items.some((s) => s === "")) throw new UsageError(`--${name} '${value}': an empty item in the list`);
  return items;
}
