// The one error a bad gateway.yaml produces: every problem found, each with file:line:col
// and key path, so an operator fixes them all in one pass.

/** One problem in a config file. `line` and `column` are 1-based; 0 means "the whole file". */
export interface ConfigIssue {
  file: string;
  line: number;
  column: number;
  /** Key path such as `tokens[0].user` or `channels[1].models[2]`; empty for the file itself. */
  path: string;
  message: string;
}

/** Formats an issue as `file:line:col: path: message` (parts that do not apply are left out). */
export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  return issue.path ? `${where}: ${issue.path}: ${issue.message}` : `${where}: ${issue.message}`;
}

/** Thrown when a config cannot be used; `message` lists every issue, one per line. */
export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(issues.map(formatIssue).join("\n"));
    this.name = "ConfigError";
    this.issues = Object.freeze([...issues]);
  }
}
