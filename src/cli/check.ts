// `gateway check --config F`: validates and compiles a config without serving, printing
// every problem with its file:line:col, and refuses what `gateway serve` would refuse to
// start (server/startup-policy.ts, the same code), so CI and operators can vet a change.

import { dirname } from "node:path";
import { ConfigError, formatIssue, loadConfigFile } from "../config/index.js";
import { startupRefusals } from "../server/startup-policy.js";
import { runCommand, type Command } from "./command.js";
import { processIo, type CliIo } from "./format.js";

export const checkCommand: Command = {
  name: "check",
  summary: "Validates and compiles a config without serving; exit 1 with every problem and its file:line:col.",
  options: {
    config: { type: "string", short: "c", value: "FILE", description: "the config to check (default gateway.yaml)" },
  },
  async run(flags, io) {
    const file = flags.values.get("config") ?? "gateway.yaml";
    try {
      const { runtime, warnings } = await loadConfigFile(file, { env: process.env });
      // What serve would refuse to start, in its words.
      const refusals = startupRefusals(runtime, dirname(runtime.sourcePath));
      if (refusals.length > 0) {
        for (const refusal of refusals) io.err(`${file}: ${refusal}\n`);
        return 1;
      }
      const counts = `${runtime.channels.size} channels, ${runtime.models.size} models, ${runtime.tokensByHash.size} tokens`;
      io.out(`ok: ${file} (${counts})\n`);
      for (const warning of warnings) io.out(`warning: ${warning}\n`);
      return 0;
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
