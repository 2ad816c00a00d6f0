// Structured log: one JSON object per line on stderr. Callers pass fields, never secrets;
// nothing here knows about keys, so nothing here can leak them.

export type LogLevel = "debug" | "info" | "warn" | "error";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function initialLevel(): LogLevel {
  const env = process.env.GATEWAY_LOG_LEVEL as LogLevel | undefined;
  if (env && env in rank) return env;
  return process.env.NODE_TEST_CONTEXT ? "error" : "info";
}

let threshold = rank[initialLevel()];
let sink: (line: string) => void = (line) => process.stderr.write(line + "\n");

/** Changes the least severe level that is written. */
export function setLogLevel(level: LogLevel): void {
  threshold = rank[level];
}

/** Redirects log lines (tests capture them to assert on warnings). */
export function setLogSink(next: (line: string) => void): () => void {
  const previous = sink;
  sink = next;
  return () => {
    sink = previous;
  };
}

function write(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
  if (rank[level] < threshold) return;
  const entry = { time: new Date().toISOString(), level, msg, ...fields };
  sink(JSON.stringify(entry, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
}

export const log = {
  /** Whether a level is written; check it before building costly fields on the hot path. */
  enabled: (level: LogLevel) => rank[level] >= threshold,
  debug: (msg: string, fields?: Record<string, unknown>) => write("debug", msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write("info", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write("warn", msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write("error", msg, fields),
};

/** An error as a log field: its stack when it has one (a bug's whereabouts), else its text. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.stack ?? err.message : String(err);
}
