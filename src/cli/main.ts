// The `gateway` command: serve (default) and check. Returns the process exit code.

import { runCheck } from "./check.js";
import { runServe } from "./serve.js";

const usage = `usage: gateway [serve] --config gateway.yaml
       gateway check --config gateway.yaml`;

/** Dispatches a subcommand; resolves to the exit code (serve resolves at shutdown). */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "check") return runCheck(rest);
  if (first === "serve") return runServe(rest);
  if (first === undefined || first.startsWith("--")) return runServe(argv);
  if (first === "help" || first === "-h") {
    process.stdout.write(usage + "\n");
    return 0;
  }
  process.stderr.write(`unknown command '${first}'\n${usage}\n`);
  return 2;
}
