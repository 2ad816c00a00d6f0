// `gateway check --config F`: validates and compiles a config without serving, printing
// every problem with its file:line:col, so CI and operators can vet a change.

import { ConfigError, formatIssue, loadConfigFile } from "../config/index.js";

/** The --config value; "" when the flag is given without one; undefined when absent. */
function configFlag(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--config" || args[i] === "-c") return args[i + 1] ?? "";
    if (args[i].startsWith("--config=")) return args[i].slice("--config=".length);
  }
  return undefined;
}

/** Runs `gateway check`; resolves to the exit code (0 valid, 1 invalid, 2 usage error). */
export async function runCheck(args: string[]): Promise<number> {
  const file = configFlag(args) ?? "gateway.yaml";
  if (!file) {
    process.stderr.write("usage: gateway check --config gateway.yaml\n");
    return 2;
  }
  try {
    const { runtime, warnings } = await loadConfigFile(file, { env: process.env });
    const counts = `${runtime.channels.size} channels, ${runtime.models.size} models, ${runtime.tokensByHash.size} tokens`;
    process.stdout.write(`ok: ${file} (${counts})\n`);
    for (const warning of warnings) process.stdout.write(`warning: ${warning}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const issue of error.issues) process.stderr.write(formatIssue(issue) + "\n");
    process.stderr.write(`${file}: ${error.issues.length} problem${error.issues.length === 1 ? "" : "s"}\n`);
    return 1;
  }
}
