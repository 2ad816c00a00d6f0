// What a `gateway` subcommand is, and the one way every command runs: parse its flags
// against its option table (plus --help and --version), answer those two, run it, and
// turn a bad command line into a message naming the problem, a hint and exit 2.

import { optionLines, parseFlags, UsageError, type Flags, type OptionTable } from "./args.js";
import type { CliIo } from "./format.js";
import { packageVersion } from "../runtime/version.js";

export interface Command {
  /** The word after `gateway`. */
  readonly name: string;
  /** One line for `gateway --help`. */
  readonly summary: string;
  /** The usage line, when `gateway NAME [options]` says too little. */
  readonly synopsis?: string;
  /** The command's own options; --help and --version are added to every command. */
  readonly options: OptionTable;
  /** How many arguments that are not options it takes (default none). */
  readonly operands?: number;
  /** Help text after the options (formats of values), if any. */
  readonly notes?: string;
  /** Commands run as `gateway NAME WORD …`, each named `NAME WORD` (`channels test`). */
  readonly subcommands?: readonly Command[];
  /** Runs with valid flags; resolves to the exit code. Throws UsageError for a bad combination. */
  run(flags: Flags, io: CliIo): Promise<number>;
}

/** The options every command accepts. */
export const commonOptions: OptionTable = {
  help: { type: "boolean", short: "h", description: "print this help and exit" },
  version: { type: "boolean", description: "print the version and exit" },
};

function synopsisOf(command: Command): string {
  return `usage: ${command.synopsis ?? `gateway ${command.name} [options]`}`;
}

/** `gateway NAME --help`: usage line, summary, one line per option, notes. */
export function commandHelp(command: Command): string {
  const notes = command.notes ? `\n${command.notes}\n` : "";
  return `${synopsisOf(command)}\n${command.summary}\n\noptions:\n${optionLines({ ...command.options, ...commonOptions })}${notes}`;
}

/**
 * Runs `command` with `args` (what follows its name); resolves to the exit code. `help`
 * is what --help prints (the command's own help unless the caller knows better).
 */
export async function runCommand(command: Command, args: readonly string[], io: CliIo, help = () => commandHelp(command)): Promise<number> {
  const sub = command.subcommands?.find((s) => s.name === `${command.name} ${args[0]}`);
  if (sub) return runCommand(sub, args.slice(1), io);
  try {
    const flags = parseFlags(args, command.name, { ...command.options, ...commonOptions }, command.operands);
    if (flags.switches.has("help")) {
      io.out(help());
      return 0;
    }
    if (flags.switches.has("version")) {
      io.out(packageVersion() + "\n");
      return 0;
    }
    return await command.run(flags, io);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`gateway: ${error.message}\n${synopsisOf(command)}\nrun 'gateway ${command.name} --help' for its options\n`);
    return 2;
  }
}
