// `gateway usage`: spend from the usage log grouped by user, token, model and group, as a
// table or JSON lines. Also the plumbing shared with `gateway logs`: flags, opening the
// usage log named by the config (safe while the server writes: SQLite WAL readers never
// block). Only the usage log is opened: accounts and live state are the server's.

import { dirname } from "node:path";
import { ConfigError, formatIssue, loadConfigFile } from "../config/index.js";
import type { UsageLog } from "../state/interfaces.js";
import { openUsageLog } from "../state/open.js";
import type { SpendDimension, SpendRow } from "../state/store.js";
import { formatNano, formatTable, jsonLine, parseFlags, parseTimeArg, processIo, UsageError, type CliIo, type Flags } from "./format.js";

/** What a read-only command accepts and does once its usage log is open. */
export interface ReadCommand {
  readonly usage: string;
  readonly values: readonly string[];
  readonly switches: readonly string[];
  run(flags: Flags, usageLog: UsageLog, io: CliIo): Promise<void>;
}

/**
 * Opens the usage log a read-only command reads: `--store <spec>` (a relative sqlite path
 * is relative to the working folder), else the `ledger:` (or, without one, the `store:`)
 * of `--config` (default gateway.yaml), relative to that file's folder. A SQLite store
 * must already exist.
 */
export async function openCliUsageLog(flags: Flags): Promise<UsageLog> {
  const spec = flags.values.get("store");
  if (spec) return openUsageLog({ store: spec }, { baseDir: process.cwd(), mustExist: true });
  const { runtime } = await loadConfigFile(flags.values.get("config") ?? "gateway.yaml", { env: process.env });
  return openUsageLog({ store: runtime.store, ledger: runtime.ledger }, { baseDir: dirname(runtime.sourcePath), mustExist: true });
}

/**
 * Runs a read-only command: parses flags (exit 2 on a bad command line), opens the store
 * (exit 1 when the config or the store cannot be read), runs it and closes the store.
 */
export async function runReadCommand(command: ReadCommand, args: readonly string[], io: CliIo): Promise<number> {
  let flags: Flags;
  let usageLog: UsageLog;
  try {
    flags = parseFlags(args, { values: ["config", "store", ...command.values], switches: ["help", ...command.switches] });
    if (flags.switches.has("help")) {
      io.out(command.usage + "\n");
      return 0;
    }
    usageLog = await openCliUsageLog(flags);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n${command.usage}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      for (const issue of error.issues) io.err(formatIssue(issue) + "\n");
      io.err("cannot read the store location from the config; pass --store sqlite:<path> instead\n");
      return 1;
    }
    io.err(`${(error as Error).message}\n`);
    return 1;
  }
  try {
    await command.run(flags, usageLog, io);
    return 0;
  } catch (error) {
    if (!(error instanceof UsageError)) {
      io.err(`cannot read the store: ${(error as Error).message}\n`);
      return 1;
    }
    io.err(`${error.message}\n${command.usage}\n`);
    return 2;
  } finally {
    await usageLog.close();
  }
}

/** The `--since`/`--until` range of a command, in epoch ms. */
export function rangeOf(flags: Flags, io: CliIo): { since?: number; until?: number } {
  const now = io.now?.() ?? Date.now();
  const since = flags.values.get("since");
  const until = flags.values.get("until");
  return {
    since: since === undefined ? undefined : parseTimeArg("since", since, now),
    until: until === undefined ? undefined : parseTimeArg("until", until, now),
  };
}

const dimensions: readonly SpendDimension[] = ["user", "token", "model", "group"];

const usageText = `usage: gateway usage [--config gateway.yaml | --store sqlite:<path>]
         [--by user|token|model|group] [--since T] [--until T] [--json]
  T: an ISO date or date-time (2026-01-31, 2026-01-31T12:00:00Z) or a span back from now (24h, 7d)`;

function usageTable(by: SpendDimension, rows: readonly SpendRow[]): string {
  if (!rows.length) return `by ${by}: no requests\n`;
  const columns = [by.toUpperCase(), "REQUESTS", "INPUT", "CACHE_READ", "CACHE_WRITE", "OUTPUT", "REASONING", "COST"];
  const cells = rows.map((r) => [
    r.key,
    ...[r.requests, r.usage.input, r.usage.cacheRead, r.usage.cacheWrite, r.usage.output, r.usage.reasoning].map(String),
    formatNano(r.costNano),
  ]);
  return `by ${by}\n` + formatTable(columns.map((header, i) => ({ header, right: i > 0 })), cells);
}

function usageJson(by: SpendDimension, row: SpendRow): string {
  return jsonLine({ by, key: row.key, requests: row.requests, ...row.usage, cost: row.costNano });
}

const usageCommand: ReadCommand = {
  usage: usageText,
  values: ["by", "since", "until"],
  switches: ["json"],
  async run(flags, usageLog, io) {
    const by = flags.values.get("by");
    if (by !== undefined && !dimensions.includes(by as SpendDimension)) {
      throw new UsageError(`--by '${by}': expected one of ${dimensions.join(", ")}`);
    }
    const range = rangeOf(flags, io);
    const sections = by === undefined ? dimensions : [by as SpendDimension];
    const json = flags.switches.has("json");
    const texts: string[] = [];
    for (const dimension of sections) {
      const rows = await usageLog.spend(dimension, range);
      texts.push(json ? rows.map((row) => usageJson(dimension, row)).join("") : usageTable(dimension, rows));
    }
    io.out(texts.join(json ? "" : "\n"));
  },
};

/** Runs `gateway usage`; resolves to the exit code (0 ok, 1 store unreadable, 2 bad flags). */
export async function runUsage(args: readonly string[], io: CliIo = processIo): Promise<number> {
  return runReadCommand(usageCommand, args, io);
}
