// `gateway check --config F`: validates and compiles a config without serving, printing
// every problem with its file:line:col, and refuses what `gateway serve` would refuse to
// start (server/startup-policy.ts, the same code), so CI and operators can vet a change.
// With --prices it then prints each model's effective price table (price-table.ts).

import { dirname } from "node:path";
import { ConfigError, formatIssue, loadConfigFile } from "../config/index.js";
import type { Runtime } from "../runtime/types.js";
import { startupRefusals } from "../server/startup-policy.js";
import { UsageError, type Flags } from "./args.js";
import { runCommand, type Command } from "./command.js";
import { processIo, type CliIo } from "./format.js";
import { modelPriceTable, priceTableJson, renderPriceTable } from "./price-table.js";

/** --prices [MODEL…]: the named models' tables (every model's when none is named); exit 1
 * naming a model the config does not have. */
function printPrices(runtime: Runtime, flags: Flags, io: CliIo): number {
  const names = flags.operands.length ? flags.operands : [...runtime.models.keys()];
  const unknown = names.filter((name) => !runtime.models.has(name));
  if (unknown.length) {
    for (const name of unknown) io.err(`gateway check: no model '${name}' in ${runtime.sourcePath}\n`);
    return 1;
  }
  const json = flags.switches.has("json");
  if (!json) io.out("\n");
  const texts = names.map((name) => modelPriceTable(runtime, name)!).map(json ? priceTableJson : renderPriceTable);
  io.out(texts.join(json ? "" : "\n"));
  return 0;
}

export const checkCommand: Command = {
  name: "check",
  summary: "Validates and compiles a config without serving; exit 1 with every problem and its file:line:col.",
  synopsis: "gateway check [--config FILE] [--prices [MODEL...]] [--json]",
  operands: Infinity,
  options: {
    config: { type: "string", short: "c", value: "FILE", description: "the config to check (default gateway.yaml)" },
    prices: { type: "boolean", description: "then print each model's (or each MODEL's) effective price table" },
    json: { type: "boolean", description: "with --prices: one JSON object a line per model (the ok line and warnings go to stderr)" },
  },
  notes: "MODEL: a model of the config; unknown ones exit 1 naming them. See docs/pricing.md.",
  async run(flags, io) {
    const prices = flags.switches.has("prices");
    if (!prices && flags.operands.length) throw new UsageError(`unexpected argument '${flags.operands[0]}' for 'check'`);
    if (!prices && flags.switches.has("json")) throw new UsageError("--json goes with --prices");
    const file = flags.values.get("config") ?? "gateway.yaml";
    // With --json, stdout holds the JSON lines only.
    const say = (text: string): void => (prices && flags.switches.has("json") ? io.err(text) : io.out(text));
    try {
      const { runtime, warnings } = await loadConfigFile(file, { env: process.env });
      // What serve would refuse to start, in its words.
      const refusals = startupRefusals(runtime, dirname(runtime.sourcePath));
      if (refusals.length > 0) {
        for (const refusal of refusals) io.err(`${file}: ${refusal}\n`);
        return 1;
      }
      const counts = `${runtime.channels.size} channels, ${runtime.models.size} models, ${runtime.tokensByHash.size} tokens`;
      say(`ok: ${file} (${counts})\n`);
      for (const warning of warnings) say(`warning: ${warning}\n`);
      if (!prices) return 0;
      return printPrices(runtime, flags, io);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const issue of error.issues) io.err(formatIssue(issue) + "\n");
      io.err(`${file}: ${error.issues.length} problem${error.issues.length === 1 ? "" : "s"}\n`);
      return 1;
    }
  },
};

/** Runs `gateway check`; resolves to the exit code (0 valid, 1 invalid, 2 usage error). */
export async function runCheck(args: readonly string[], io: CliIo = processIo): Promise<number> {
  return runCommand(checkCommand, args, io);
}
