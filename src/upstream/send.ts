// Sends one upstream attempt and resolves with the response head and its body stream,
// or rejects with an UpstreamFailure that says whether another channel may be tried.

import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { upstreamAgent } from "./agents.js";

/** Why an attempt produced no response. `timeout` is final (504); the others fail over. */
export type FailureKind = "connect" | "reset" | "timeout" | "aborted";

export class UpstreamFailure extends Error {
  constructor(readonly kind: FailureKind, detail: string) {
    super(detail);
    this.name = "UpstreamFailure";
  }
}

/**
 * Cancels the upstream call in flight when the client goes away. undici takes any signal
 * with an `aborted` flag and once/removeListener for "abort"; this holds the one or two
 * listeners a request has, cheaper than an EventEmitter or an AbortController.
 */
export class Cancellation {
  aborted = false;
  #listeners: (() => void)[] = [];

  once(_event: "abort", listener: () => void): this {
    this.#listeners.push(listener);
    return this;
  }

  /** undici checks that a signal has `on`; the abort fires at most once anyway. */
  on(event: "abort", listener: () => void): this {
    return this.once(event, listener);
  }

  removeListener(_event: "abort", listener: () => void): this {
    const i = this.#listeners.indexOf(listener);
    if (i !== -1) this.#listeners.splice(i, 1);
    return this;
  }

  /** Lets go of the call in flight: a later cancel() no longer stops it (its answer is
   * being relayed, and the relay decides when to stop reading). */
  release(): void {
    this.#listeners = [];
  }

  /** Stops the upstream call, now or as soon as it starts. */
  cancel(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
  }
}

export interface SendOptions {
  /** Default POST. */
  readonly method?: "GET" | "POST";
  /** The full upstream URL (origin, path and query). */
  readonly url: URL;
  readonly headers: Record<string, string | string[]>;
  /** Absent for GET. */
  readonly body?: Buffer;
  /** No response head within this time: the attempt fails with kind "timeout". */
  readonly timeoutMs: number;
  /** Longest silence between body chunks (default timeoutMs); past it the body stream
   * errors with UND_ERR_BODY_TIMEOUT (server.stream_idle_timeout). */
  readonly idleTimeoutMs?: number;
  readonly cancel: Cancellation;
}

/** An upstream answer: status, headers, and the body to consume or destroy. */
export interface UpstreamResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
}

const connectCodes = new Set([
  "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT",
]);

/** Sends the request; the caller owns the response body (consume or destroy it). */
export async function send(opts: SendOptions): Promise<UpstreamResponse> {
  try {
    const r = await upstreamAgent().request({
      origin: opts.url.origin,
      path: opts.url.pathname + opts.url.search,
      method: opts.method ?? "POST",
      headers: opts.headers,
      body: opts.body,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.idleTimeoutMs ?? opts.timeoutMs,
      signal: opts.cancel,
    });
    return { status: r.statusCode, headers: r.headers as IncomingHttpHeaders, body: r.body };
  } catch (err) {
    throw classify(err as NodeJS.ErrnoException, opts.cancel);
  }
}

function classify(err: NodeJS.ErrnoException, cancel: Cancellation): UpstreamFailure {
  if (cancel.aborted) return new UpstreamFailure("aborted", "client closed the request");
  const code = err.code ?? "";
  if (code === "UND_ERR_HEADERS_TIMEOUT") return new UpstreamFailure("timeout", "no response in time");
  if (connectCodes.has(code)) return new UpstreamFailure("connect", code);
  return new UpstreamFailure("reset", code || err.message);
}

/** Whether an upstream answer is a Server-Sent Events stream. */
export function isEventStream(upstream: UpstreamResponse): boolean {
  return /^text\/event-stream/i.test(upstream.headers["content-type"] ?? "");
}

/** Reads an unwanted body to its end (its connection goes back to the pool) or, `close`,
 * closes it; either way with its errors listened to: an unheard one would end the process. */
export function discard(body: Readable, close = false): void {
  body.on("error", ignore);
  if (close) body.destroy();
  else body.resume();
}

function ignore(): void {}
