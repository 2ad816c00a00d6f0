// The request log: one JSON line per finished request on stdout, for log shippers. The
// caller hands over names and numbers only (request id, token and user names, model,
// channel, status, tokens, cost, durations); nothing here sees a key or a body. Lines are
// gathered and written once per event-loop turn: one write for a burst of requests, and
// none of them waits on stdout.

import { envLogLevel, levelPasses, type LogLevel, type LogThreshold } from "./log.js";

/** One finished request, as logged. Absent fields are left out of the line. */
export interface RequestLine {
  readonly requestId: string;
  readonly method?: string;
  readonly path: string;
  /** Route name (chat-completions, messages, …), or "unknown". */
  readonly protocol: string;
  readonly token?: string;
  readonly user?: string;
  readonly group?: string;
  readonly model?: string;
  readonly upstreamModel?: string;
  readonly channel?: string;
  readonly attempts?: number;
  readonly status: number;
  /** The gateway's error code, when it answered with one. */
  readonly error?: string;
  readonly tokens?: Readonly<Record<string, number>>;
  /** Hosted tool calls billed per call (web_search, …), when the answer ran any. */
  readonly toolCalls?: Readonly<Record<string, number>>;
  /** Exact decimal in the billing currency. */
  readonly cost?: string;
  /** The usage was estimated (the answer reported none). */
  readonly estimated?: boolean;
  readonly durationMs: number;
  /** Time to the answer's first body byte (the first chunk of a stream). */
  readonly ttfbMs?: number;
}

/** The level of a request's line: failures stand out under a stricter log.level. */
export function requestLevel(status: number): LogLevel {
  return status >= 500 ? "error" : status >= 400 ? "warn" : "info";
}

export class RequestLog {
  readonly #write: (text: string) => void;
  /** The threshold when gateway.yaml sets no log.level. */
  readonly #fallback: LogThreshold;
  #pending: string[] = [];
  #scheduled = false;
  readonly #flush = () => this.flush();

  constructor(write: (text: string) => void = (text) => void process.stdout.write(text)) {
    this.#write = write;
    // Under the test runner, silent unless asked (as the diagnostic log).
    this.#fallback = envLogLevel() ?? (process.env.NODE_TEST_CONTEXT ? "off" : "info");
  }

  /** Whether a line of `level` is written under log.level `configured`; check it before
   * building the line. */
  enabled(level: LogLevel, configured: LogThreshold | undefined): boolean {
    return levelPasses(level, configured ?? this.#fallback);
  }

  /** Queues one request's line (already checked with enabled()). */
  add(level: LogLevel, line: RequestLine): void {
    // The common head spliced in as text: no second object per request.
    const head = `{"time":"${new Date().toISOString()}","level":"${level}","msg":"request",`;
    this.#pending.push(head + JSON.stringify(line).slice(1));
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  /** Writes the lines gathered so far. */
  flush(): void {
    this.#scheduled = false;
    if (this.#pending.length === 0) return;
    const text = this.#pending.join("\n") + "\n";
    this.#pending = [];
    this.#write(text);
  }
}
