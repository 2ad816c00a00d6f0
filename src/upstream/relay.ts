// Relays an upstream response to the client as it arrives, with backpressure and
// cancellation both ways (client gone: stop the upstream, and vice versa). The idle bound
// between chunks is the transport's body timeout (send.ts).

import type { OutgoingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import type { RequestContext } from "../pipeline/context.js";

export type RelayOutcome = "complete" | "client-closed" | "upstream-failed";

export interface RelayOptions {
  readonly ctx: RequestContext;
  readonly body: Readable;
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  /** Turns an upstream chunk into what the client gets (default: the chunk itself). */
  readonly transform?: (chunk: Buffer) => Buffer | string;
  /** Trailing output at end of stream. */
  readonly finish?: () => string;
  /** Send headers before the first body byte (streams: the client waits on them). */
  readonly flushHeaders: boolean;
}

/** Pipes the upstream body to the client; resolves when either side is done. */
export function relay(o: RelayOptions): Promise<RelayOutcome> {
  const { ctx, body } = o;
  const res = ctx.res;
  res.writeHead(o.status, o.headers);
  if (o.flushHeaders) res.flushHeaders();
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: RelayOutcome) => {
      if (done) return;
      done = true;
      res.off("close", onClientClose);
      if (outcome !== "complete") {
        body.destroy();
        if (!res.writableEnded) res.destroy();
      }
      resolve(outcome);
    };
    const onClientClose = () => finish("client-closed");
    res.on("close", onClientClose);
    body.on("data", (chunk: Buffer) => {
      const out = o.transform ? o.transform(chunk) : chunk;
      if (out.length === 0) return;
      ctx.firstByteNs ??= process.hrtime.bigint();
      if (!res.write(out)) {
        body.pause();
        res.once("drain", () => body.resume());
      }
    });
    body.on("end", () => {
      const tail = o.finish?.();
      ctx.firstByteNs ??= process.hrtime.bigint();
      res.end(tail || undefined, () => finish("complete"));
    });
    body.on("error", () => finish("upstream-failed"));
  });
}
