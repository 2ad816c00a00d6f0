// Sends one upstream attempt and resolves with the response head, or rejects with an
// UpstreamFailure that says whether another channel may be tried.

import http from "node:http";
import https from "node:https";
import { agentFor } from "./agents.js";

/** Why an attempt produced no response. `timeout` is final (504); the others fail over. */
export type FailureKind = "connect" | "reset" | "timeout" | "aborted";

export class UpstreamFailure extends Error {
  constructor(readonly kind: FailureKind, detail: string) {
    super(detail);
    this.name = "UpstreamFailure";
  }
}

export interface SendOptions {
  readonly url: URL;
  /** `url` as request options, computed once per channel (see upstreamTarget). */
  readonly target: UpstreamTarget;
  readonly headers: http.OutgoingHttpHeaders;
  readonly body: Buffer;
  /** No response head within this time: the attempt fails with kind "timeout". */
  readonly timeoutMs: number;
  /** Lets the caller cancel the attempt when its client goes away. */
  readonly cancel: Cancellation;
}

/**
 * Cancels the upstream call in flight. Cheaper than an AbortSignal, whose listeners
 * http.request sets up on every request.
 */
export class Cancellation {
  cancelled = false;
  #request: http.ClientRequest | undefined;

  /** The client went away: stop the upstream call, now or as soon as it starts. */
  cancel(): void {
    this.cancelled = true;
    this.#request?.destroy();
  }

  /** Attaches the request now in flight. */
  attach(request: http.ClientRequest | undefined): void {
    this.#request = request;
    if (this.cancelled) request?.destroy();
  }
}

export interface Sent {
  readonly response: http.IncomingMessage;
  readonly request: http.ClientRequest;
}

/** The parts of an upstream URL http.request needs, precomputed once per channel. */
export interface UpstreamTarget {
  readonly protocol: string;
  readonly hostname: string;
  readonly port: string;
  readonly path: string;
}

const targets = new WeakMap<URL, UpstreamTarget>();

/** Request options for a URL, cached per URL object (channel URLs live as long as their Runtime). */
export function upstreamTarget(url: URL): UpstreamTarget {
  let t = targets.get(url);
  if (!t) {
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    t = { protocol: url.protocol, hostname, port: url.port, path: url.pathname + url.search };
    targets.set(url, t);
  }
  return t;
}

/** Sends the request; the caller owns the response stream (consume or destroy it). */
export function send(opts: SendOptions): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const lib = opts.url.protocol === "https:" ? https : http;
    const request = lib.request({ ...opts.target, method: "POST", headers: opts.headers, agent: agentFor(opts.url) });
    opts.cancel.attach(request);
    let settled = false;
    const fail = (f: UpstreamFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      reject(f);
    };
    const timer = setTimeout(
      () => fail(new UpstreamFailure("timeout", `no response within ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
    request.on("response", (response) => {
      if (settled) return response.destroy();
      settled = true;
      clearTimeout(timer);
      resolve({ response, request });
    });
    request.on("error", (err: NodeJS.ErrnoException) => {
      if (opts.cancel.cancelled) return fail(new UpstreamFailure("aborted", "client closed the request"));
      const connectErrors = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET"];
      const kind: FailureKind = connectErrors.includes(err.code ?? "") ? "connect" : "reset";
      fail(new UpstreamFailure(kind, err.code ?? err.message));
    });
    request.end(opts.body);
  });
}
