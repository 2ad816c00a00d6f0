// The `gateway` command: dispatches to a subcommand (serve when none is named) and prints
// the overview. Returns the process exit code. A new command is a module exporting a
// Command (see command.ts) and one entry in `commands`.

import { commonOptions, runCommand, type Command } from "./command.js";
import { optionLines } from "./args.js";
import { auditCommand } from "./audit.js";
import { channelsCommand } from "./channels.js";
import { checkCommand } from "./check.js";
import { codesCommand } from "./codes.js";
import { creditCommand } from "./credit.js";
import { importCommand } from "./import.js";
import { processIo, type CliIo } from "./format.js";
import { logsCommand } from "./logs.js";
import { migrateCommand } from "./migrate.js";
import { pricesCommand } from "./prices.js";
import { serveCommand } from "./serve.js";
import { tokensCommand } from "./tokens.js";
import { usageCommand } from "./usage.js";
import { usersCommand } from "./users.js";

/** Every command, in the order `gateway --help` lists them. */
export const commands: readonly Command[] = [
  serveCommand, checkCommand, channelsCommand, usageCommand, logsCommand, migrateCommand, pricesCommand,
  usersCommand(), creditCommand(), tokensCommand(), codesCommand(), auditCommand(), importCommand(),
];

/** `gateway --help`: the commands, one line each, and where to read more. */
export function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}\n`).join("");
  return `usage: gateway [COMMAND] [options]

commands:
${lines}
options:
${optionLines(commonOptions)}
With no command, gateway serves: \`gateway --config FILE\` is \`gateway serve --config FILE\`.
Run 'gateway COMMAND --help' for a command's options.
`;
}

/** Dispatches `argv` (what follows `gateway`); resolves to the exit code (serve resolves at shutdown). */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [first, ...rest] = argv;
  // No command: serve, with any flags given; --help then shows the overview.
  if (first === undefined || first.startsWith("-")) return runCommand(serveCommand, argv, io, overview);
  if (first === "help") {
    if (rest.length === 0) return runCommand(serveCommand, ["--help"], io, overview);
    const [name, ...more] = rest;
    return runNamed(name, ["--help", ...more], io);
  }
  return runNamed(first, rest, io);
}

function runNamed(name: string, args: readonly string[], io: CliIo): Promise<number> {
  const command = commands.find((c) => c.name === name);
  if (command) return runCommand(command, args, io);
  io.err(`gateway: unknown command '${name}'\nrun 'gateway --help' for the commands\n`);
  return Promise.resolve(2);
}
