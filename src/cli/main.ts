// The `gateway` command: serve (default), check, usage, logs and migrate. Returns the process exit code.

import { runCheck } from "./check.js";
import { runLogs } from "./logs.js";
import { runMigrate } from "./migrate.js";
import { runServe } from "./serve.js";
import { runUsage } from "./usage.js";

const usage = `usage: gateway [serve] --config gateway.yaml
       gateway check --config gateway.yaml
       gateway usage [--config gateway.yaml] [--by user|token|model|group] [--since 24h] [--json]
       gateway logs [--config gateway.yaml] [--user NAME] [--since 24h] [--limit N] [--json]
       gateway migrate --from sqlite:./data/gateway.db --to postgres://user@host:5432/db`;

/** Dispatches a subcommand; resolves to the exit code (serve resolves at shutdown). */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "check") return runCheck(rest);
  if (first === "usage") return runUsage(rest);
  if (first === "logs") return runLogs(rest);
  if (first === "migrate") return runMigrate(rest);
  if (first === "serve") return runServe(rest);
  if (first === undefined || first.startsWith("--")) return runServe(argv);
  if (first === "help" || first === "-h") {
    process.stdout.write(usage + "\n");
    return 0;
  }
  process.stderr.write(`unknown command '${first}'\n${usage}\n`);
  return 2;
}
