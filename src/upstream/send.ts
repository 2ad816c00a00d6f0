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
  readonly headers: http.OutgoingHttpHeaders;
  readonly body: Buffer;
  /** No response head within this time: the attempt fails with kind "timeout". */
  readonly timeoutMs: number;
  /** Aborts the attempt (client went away). */
  readonly signal: AbortSignal;
}

export interface Sent {
  readonly response: http.IncomingMessage;
  readonly request: http.ClientRequest;
}

/** Sends the request; the caller owns the response stream (consume or destroy it). */
export function send(opts: SendOptions): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const lib = opts.url.protocol === "https:" ? https : http;
    const request = lib.request(opts.url, {
      method: "POST",
      headers: opts.headers,
      agent: agentFor(opts.url),
      signal: opts.signal,
    });
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
      if (opts.signal.aborted) return fail(new UpstreamFailure("aborted", "client closed the request"));
      const connectErrors = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET"];
      const kind: FailureKind = connectErrors.includes(err.code ?? "") ? "connect" : "reset";
      fail(new UpstreamFailure(kind, err.code ?? err.message));
    });
    request.end(opts.body);
  });
}
