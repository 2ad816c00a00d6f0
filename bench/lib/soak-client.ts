// One soak request over raw node:http, optionally cut off by the client the way a real
// one leaves (socket destroyed mid-body, before the answer, or mid-stream), and what the
// client got: status, request id, error code, whether the answer was complete.

import http from "node:http";
import { errorCodeOf, jsonComplete, streamComplete, streamHasError, type WireRequest } from "./soak-requests.js";

/** How the client leaves early, if it does. */
export type AbortPlan =
  | { readonly kind: "none" }
  /** Sends the head and half the body, then destroys the socket. */
  | { readonly kind: "mid-body" }
  /** Sends the whole request, destroys the socket after `afterMs` unless the answer began. */
  | { readonly kind: "before-answer"; readonly afterMs: number }
  /** Destroys the socket once `afterChunks` body chunks of a streamed answer arrived. */
  | { readonly kind: "mid-stream"; readonly afterChunks: number };

export interface Outcome {
  /** HTTP status, when the head arrived. */
  readonly status?: number;
  readonly requestId?: string;
  /** Error code from an error body (any protocol's shape). */
  readonly errorCode?: string;
  /** The answer arrived whole and well-formed (a 2xx with its protocol's ending). */
  readonly complete: boolean;
  /** The client carried out its abort plan (the socket was destroyed on purpose). */
  readonly abortedByClient: boolean;
  /** A 200 stream that carried an error event. */
  readonly streamError: boolean;
  /** A 200 answer that ended (or broke) without its protocol's ending, not by the client. */
  readonly truncated: boolean;
  /** A transport failure not caused by the client (e.g. ECONNRESET), or "client-timeout". */
  readonly transportError?: string;
  readonly ms: number;
}

export interface SendOptions {
  readonly base: URL;
  readonly agent: http.Agent;
  readonly timeoutMs: number;
}

export function send(req: WireRequest, plan: AbortPlan, o: SendOptions): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let status: number | undefined;
    let requestId: string | undefined;
    let aborted = false;
    let text = "";
    let abortTimer: NodeJS.Timeout | undefined;
    let timeout: NodeJS.Timeout | undefined;
    const finish = (extra: Partial<Outcome> = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(abortTimer);
      const ok = status !== undefined && status >= 200 && status < 300;
      const complete = ok && !aborted && extra.transportError === undefined &&
        (req.stream ? streamComplete(req.protocol, text) : jsonComplete(req.protocol, text));
      resolve({
        status, requestId, complete, abortedByClient: aborted,
        errorCode: status !== undefined && !ok ? errorCodeOf(text) : undefined,
        streamError: ok && req.stream && streamHasError(req.protocol, text),
        truncated: ok && !aborted && !complete,
        ms: performance.now() - started,
        ...extra,
      });
    };
    const abort = () => {
      if (settled) return;
      aborted = true;
      request.destroy();
      finish();
    };
    const request = http.request(new URL(req.path, o.base), { method: "POST", headers: req.headers, agent: o.agent }, (res) => {
      status = res.statusCode;
      const id = res.headers["x-gateway-request-id"];
      requestId = typeof id === "string" ? id : undefined;
      clearTimeout(abortTimer);
      let chunks = 0;
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
        if (plan.kind === "mid-stream" && ++chunks >= plan.afterChunks) abort();
      });
      res.on("end", () => finish());
      res.on("error", (err: NodeJS.ErrnoException) => { if (!aborted) finish({ transportError: err.code ?? err.message }); });
      res.on("close", () => { if (!res.complete && !aborted) finish({ transportError: "answer cut off" }); });
    });
    request.on("error", (err: NodeJS.ErrnoException) => { if (!aborted) finish({ transportError: err.code ?? err.message }); });
    timeout = setTimeout(() => {
      if (settled) return;
      request.destroy();
      finish({ transportError: "client-timeout" });
    }, o.timeoutMs);
    if (plan.kind === "mid-body") {
      request.write(req.body.subarray(0, Math.floor(req.body.length / 2)));
      abortTimer = setTimeout(abort, 2);
    } else {
      request.end(req.body);
      if (plan.kind === "before-answer") abortTimer = setTimeout(abort, plan.afterMs);
    }
  });
}
