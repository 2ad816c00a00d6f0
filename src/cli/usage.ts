// `gateway usage`: spend from the usage log grouped by user, token, model, group, channel,
// channel key (its fingerprint, never the key) or day, with revenue, cost to the operator
// and margin, as a table or JSON lines; of everyone, or of one user or token. Also the plumbing shared with `gateway logs`: flags, opening the
// usage log named by the config (safe while the server writes: SQLite WAL readers never
// block). Only the usage log is opened: accounts and live state are the server's.

import { dirname } from "node:path";
import { ConfigError, formatIssue, loadConfigFile } from "../config/index.js";
import type { UsageLog } from "../state/interfaces.js";
import { openUsageLog } from "../state/open.js";
import { dayNamer } from "../state/spend-keys.js";
import { NO_CHANNEL, type SpendDimension, type SpendRange, type SpendRow } from "../state/store.js";
import { UsageError, type Flags, type OptionTable } from "./args.js";
import { runCommand, type Command } from "./command.js";
import { formatNano, formatTable, jsonLine, parseTimeArg, processIo, type CliIo } from "./format.js";
import { marginOf, percentText } from "../billing/margin.js";

/** A read-only command: its own options and what it does once the usage log is open. */
export interface ReadCommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly options: OptionTable;
  /** Resolves to the exit code, or to nothing for 0. */
  read(flags: Flags, usageLog: UsageLog, io: CliIo): Promise<number | void>;
}

/** Where a read-only command finds the usage log. */
const storeOptions: OptionTable = {
  config: { type: "string", short: "c", value: "FILE", description: "read the store (or ledger) this config names (default gateway.yaml)" },
  store: { type: "string", value: "SPEC", description: "read this store instead of a config's: sqlite:<path> or postgres://…" },
};

/** Help text for the time arguments. */
const timeNotes = "T: an ISO date or date-time (2026-01-31, 2026-01-31T12:00:00Z) or a span back from now (24h, 7d)";

/** `--since`/`--until`: checked when parsed (the clock does not change what is valid). */
export const timeOptions: OptionTable = {
  since: { type: "string", value: "T", description: "only requests at or after T", check: (v) => void parseTimeArg("since", v, 0) },
  until: { type: "string", value: "T", description: "only requests before T", check: (v) => void parseTimeArg("until", v, 0) },
};

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
 * A read-only command: opens the store (exit 1 when the config or the store cannot be
 * read), runs, and closes the store. A bad command line throws UsageError (exit 2).
 */
export function readCommand(spec: ReadCommandSpec): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    notes: timeNotes,
    options: { ...storeOptions, ...spec.options },
    async run(flags, io) {
      if (flags.values.has("config") && flags.values.has("store")) throw new UsageError("give --config or --store, not both");
      let usageLog: UsageLog;
      try {
        usageLog = await openCliUsageLog(flags);
      } catch (error) {
        if (error instanceof ConfigError) {
          for (const issue of error.issues) io.err(formatIssue(issue) + "\n");
          io.err("cannot read the store location from the config; pass --store sqlite:<path> instead\n");
          return 1;
        }
        io.err(`${(error as Error).message}\n`);
        return 1;
      }
      try {
        return (await spec.read(flags, usageLog, io)) ?? 0;
      } catch (error) {
        if (error instanceof UsageError) throw error;
        io.err(`cannot read the store: ${(error as Error).message}\n`);
        return 1;
      } finally {
        await usageLog.close();
      }
    },
  };
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

const dimensions: readonly SpendDimension[] = ["user", "token", "model", "group", "channel", "key", "day"];
/** The sections printed without --by (as before channels were a dimension). */
const defaultSections: readonly SpendDimension[] = ["user", "token", "model", "group"];

/** Whether a row's key is the row of requests no channel answered, or no key served. */
const isNone = (by: SpendDimension, key: string): boolean => (by === "channel" || by === "key") && key === NO_CHANNEL;

/** A row's key as shown: the requests no channel answered (no key served) have none. */
const keyText = (by: SpendDimension, key: string): string => (isNone(by, key) ? "-" : key);

/** `--timezone`: a zone the runtime knows (checked when parsed). */
function checkTimeZone(value: string): void {
  try {
    dayNamer(value);
  } catch {
    throw new UsageError(`--timezone '${value}': expected an IANA time zone like Europe/Berlin or UTC`);
  }
}

const UNKNOWN = "unknown";

function usageTable(by: SpendDimension, rows: readonly SpendRow[]): string {
  if (!rows.length) return `by ${by}: no requests\n`;
  const columns = [by.toUpperCase(), "REQUESTS", "INPUT", "CACHE_READ", "CACHE_WRITE", "OUTPUT", "REASONING", "REVENUE", "CHANNEL_COST", "MARGIN", "MARGIN_%"];
  const unknown: string[] = [];
  const cells = rows.map((r) => {
    const m = marginOf(r);
    if (r.channelCostUnknown > 0) {
      const recorded = r.channelCostNano > 0n ? `; the others cost ${formatNano(r.channelCostNano)}` : "";
      unknown.push(`  ${keyText(by, r.key)}: ${r.channelCostUnknown} of ${r.requests} requests recorded no cost to the operator${recorded}`);
    }
    return [
      keyText(by, r.key),
      ...[r.requests, r.usage.input, r.usage.cacheRead, r.usage.cacheWrite, r.usage.output, r.usage.reasoning].map(String),
      formatNano(m.revenueNano),
      m.costNano === undefined ? UNKNOWN : formatNano(m.costNano),
      m.marginNano === undefined ? UNKNOWN : formatNano(m.marginNano),
      m.marginHundredths !== undefined ? percentText(m.marginHundredths) : m.marginNano === undefined ? UNKNOWN : "-",
    ];
  });
  const notes = unknown.length === 0 ? ""
    : `cost to the operator unknown (entries recorded before it was kept):\n${unknown.join("\n")}\n`;
  return `by ${by}\n` + formatTable(columns.map((header, i) => ({ header, right: i > 0 })), cells) + notes;
}

/** One row as a JSON line: `cost` is the revenue (what was charged), exact as before;
 * `channelCost`, `margin` (exact decimals) and `marginPercent` (a two-decimal string) are
 * null while `channelCostUnknown` requests recorded no cost to the operator, and
 * `channelCostRecorded` sums the costs that were. */
function usageJson(by: SpendDimension, row: SpendRow): string {
  const m = marginOf(row);
  return jsonLine({
    by, key: isNone(by, row.key) ? null : row.key, requests: row.requests, ...row.usage,
    cost: row.costNano,
    channelCost: m.costNano,
    margin: m.marginNano,
    marginPercent: m.marginHundredths === undefined ? undefined : percentText(m.marginHundredths),
    channelCostUnknown: row.channelCostUnknown,
    channelCostRecorded: row.channelCostNano,
  });
}

export const usageCommand: Command = readCommand({
  name: "usage",
  summary: "Spend from the usage log by user, token, model, group, channel, channel key or day, with revenue, cost and margin: a table, or JSON lines with --json.",
  options: {
    by: {
      type: "string", value: "DIMENSION", choices: dimensions,
      description: `one section only: ${dimensions.join(", ")} (default: ${defaultSections.join(", ")}); key: channel/key fingerprint, day: newest first`,
    },
    ...timeOptions,
    timezone: { type: "string", value: "ZONE", description: "with --by day: count days in this IANA time zone (default UTC)", check: checkTimeZone },
    user: { type: "string", value: "NAME", description: "only this user's requests (every token of it): what the console shows the user" },
    token: { type: "string", value: "NAME", description: "only this token's requests" },
    json: { type: "boolean", description: "one JSON object a line instead of tables" },
  },
  async read(flags, usageLog, io) {
    const by = flags.values.get("by") as SpendDimension | undefined;
    const timeZone = flags.values.get("timezone");
    if (timeZone !== undefined && by !== "day") throw new UsageError("--timezone counts days: give it with --by day");
    const user = flags.values.get("user");
    const token = flags.values.get("token");
    if (user !== undefined && token !== undefined) throw new UsageError("give --user or --token, not both");
    const subject = user !== undefined ? { kind: "user" as const, name: user } : token !== undefined ? { kind: "token" as const, name: token } : undefined;
    const range: SpendRange = { ...rangeOf(flags, io), timeZone, ...(subject ? { subject } : {}) };
    const sections = by === undefined ? defaultSections : [by];
    const json = flags.switches.has("json");
    const texts: string[] = [];
    for (const dimension of sections) {
      const rows = await usageLog.spend(dimension, range);
      texts.push(json ? rows.map((row) => usageJson(dimension, row)).join("") : usageTable(dimension, rows));
    }
    io.out(texts.join(json ? "" : "\n"));
  },
});

/** Runs `gateway usage`; resolves to the exit code (0 ok, 1 store unreadable, 2 bad flags). */
export async function runUsage(args: readonly string[], io: CliIo = processIo): Promise<number> {
  return runCommand(usageCommand, args, io);
}
