// Structured log: one JSON object per line on stderr. Callers pass fields, never secrets;
// nothing here knows about keys, so nothing here can leak them.

export type LogLevel = "debug" | "info" | "warn" | "error";
/** The least severe level written (gateway.yaml log.level); "off" writes nothing. */
export type LogThreshold = LogLevel | "off";

const rank: Record<LogThreshold, number> = { debug: 10, info: 20, warn: 30, error: 40, off: 100 };

/** GATEWAY_LOG_LEVEL when it names a level, else undefined. */
export function envLogLevel(): LogThreshold | undefined {
  const env = process.env.GATEWAY_LOG_LEVEL as LogThreshold | undefined;
  return env && env in rank ? env : undefined;
}

function initialLevel(): LogThreshold {
  return envLogLevel() ?? (process.env.NODE_TEST_CONTEXT ? "error" : "info");
}

let threshold = rank[initialLevel()];
let sink: (line: string) => void = (line) => process.stderr.write(line + "\n");

/** Changes the least severe level that is written. */
export function setLogLevel(level: LogThreshold): void {
  threshold = rank[level];
}

/** Follows gateway.yaml's log.level (at start and on each reload); unset: the initial level. */
export function applyLogLevel(configured: LogThreshold | undefined): void {
  threshold = rank[configured ?? initialLevel()];
}

/** Whether `level` is written under `min` (the request log's own check). */
export function levelPasses(level: LogLevel, min: LogThreshold): boolean {
  return rank[level] >= rank[min];
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
