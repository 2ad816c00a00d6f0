// Relays an upstream response to the client as it arrives, with backpressure, an idle
// timeout, and cancellation both ways (client gone: stop the upstream, and vice versa).

import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import type { RequestContext } from "../pipeline/context.js";

export type RelayOutcome = "complete" | "client-closed" | "upstream-failed" | "idle-timeout";

export interface RelayOptions {
  readonly ctx: RequestContext;
  readonly upstream: IncomingMessage;
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  /** Turns an upstream chunk into what the client gets (default: the chunk itself). */
  readonly transform?: (chunk: Buffer) => Buffer | string;
  /** Trailing output at end of stream. */
  readonly finish?: () => string;
  /** Send headers before the first body byte (streams: the client waits on them). */
  readonly flushHeaders: boolean;
  readonly idleTimeoutMs: number;
}

/** Pipes the upstream body to the client; resolves when either side is done. */
export function relay(o: RelayOptions): Promise<RelayOutcome> {
  const { ctx, upstream } = o;
  const res = ctx.res;
  res.writeHead(o.status, o.headers);
  if (o.flushHeaders) res.flushHeaders();
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: RelayOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(idle);
      res.off("close", onClientClose);
      if (outcome !== "complete") {
        upstream.destroy();
        if (!res.writableEnded) res.destroy();
      }
      resolve(outcome);
    };
    let idle = setTimeout(() => finish("idle-timeout"), o.idleTimeoutMs);
    const onClientClose = () => finish("client-closed");
    res.on("close", onClientClose);
    upstream.on("data", (chunk: Buffer) => {
      idle.refresh();
      const out = o.transform ? o.transform(chunk) : chunk;
      if (out.length === 0) return;
      ctx.firstByteNs ??= process.hrtime.bigint();
      if (!res.write(out)) {
        upstream.pause();
        res.once("drain", () => upstream.resume());
      }
    });
    upstream.on("end", () => {
      const tail = o.finish?.();
      ctx.firstByteNs ??= process.hrtime.bigint();
      res.end(tail || undefined, () => finish("complete"));
    });
    upstream.on("error", () => finish("upstream-failed"));
    upstream.on("aborted", () => finish("upstream-failed"));
  });
}
