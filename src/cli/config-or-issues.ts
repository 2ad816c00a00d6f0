// The config a command reads, or every problem with it printed (file:line:col) and nothing.

import { ConfigError, formatIssue, loadConfigFile } from "../config/index.js";
import type { Runtime } from "../runtime/types.js";
import type { CliIo } from "./format.js";

/** The compiled config of `file`; undefined (its problems printed) when it does not load. */
export async function configOrIssues(file: string, io: CliIo): Promise<Runtime | undefined> {
  try {
    return (await loadConfigFile(file, { env: process.env })).runtime;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const issue of error.issues) io.err(formatIssue(issue) + "\n");
    return undefined;
  }
}
