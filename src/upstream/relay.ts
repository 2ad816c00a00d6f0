// Relays an upstream body to the client as it arrives, with backpressure and cancellation
// both ways (client gone: stop the upstream). It never ends the client's response: which
// bytes are the answer's last, and when they may go, is for the exchange and settlement.
// Silence between chunks is bounded by the transport's body timeout (send.ts).

import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Readable } from "node:stream";

/** Why reading stopped. */
export type RelayEnd =
  /** The upstream body ended. */
  | "ended"
  /** The transform said the answer is complete (its terminal event came), and the upstream
   * did not end within a grace period after it. */
  | "finished"
  /** The transform said the answer is broken (an event that does not decode). */
  | "broken"
  | "client-gone"
  | "upstream-cut"
  | "upstream-idle"
  /** The transform threw: a gateway bug, reported with the error. */
  | "internal-error";

/** What the transform reports after each chunk. */
export type RelayState = "open" | "finished" | "broken";

export interface RelayOptions {
  readonly res: ServerResponse;
  readonly body: Readable;
  /** Written before the first body byte; absent when the answer is held whole. */
  readonly head?: { readonly status: number; readonly headers: OutgoingHttpHeaders; readonly flush: boolean };
  /** What the client gets now for an upstream chunk ("" for nothing yet). */
  readonly transform: (chunk: Buffer) => Buffer | string;
  /** Checked after each chunk; default "open". */
  readonly state?: () => RelayState;
}

export interface Relayed {
  readonly end: RelayEnd;
  /** process.hrtime.bigint() when the first byte went to the client. */
  readonly firstByteNs: bigint | undefined;
  /** The transform's exception, for `internal-error`. */
  readonly error?: unknown;
}

/** After its terminal event an upstream normally ends at once; one that does not is not
 * waited for longer than this (its connection is then closed). */
const TERMINAL_GRACE_MS = 1000;

/** undici's error code for a body silent longer than its bodyTimeout. */
const BODY_TIMEOUT = "UND_ERR_BODY_TIMEOUT";

/** Pipes the upstream body to the client until it ends, breaks, or the client leaves. */
export function relay(o: RelayOptions): Promise<Relayed> {
  const { res, body } = o;
  if (o.head) {
    res.writeHead(o.head.status, o.head.headers);
    if (o.head.flush) res.flushHeaders();
  }
  return new Promise((resolve) => {
    let settled = false;
    let firstByteNs: bigint | undefined;
    let grace: NodeJS.Timeout | undefined;
    const finish = (end: RelayEnd, error?: unknown) => {
      if (settled) return;
      settled = true;
      res.off("close", onClientClose);
      res.off("drain", onDrain);
      body.off("data", onData);
      body.off("end", onEnd);
      if (grace) clearTimeout(grace);
      // Past this point the body is not read: close it (an error from the close is moot).
      if (end !== "ended") body.destroy();
      resolve({ end, firstByteNs, error });
    };
    const onClientClose = () => finish("client-gone");
    const onDrain = () => body.resume();
    const onData = (chunk: Buffer) => {
      let out: Buffer | string;
      let state: RelayState;
      try {
        out = o.transform(chunk);
        state = o.state ? o.state() : "open";
      } catch (err) {
        finish("internal-error", err);
        return;
      }
      if (out.length > 0 && !res.destroyed) {
        firstByteNs ??= process.hrtime.bigint();
        if (!res.write(out)) {
          body.pause();
          res.once("drain", onDrain);
        }
      }
      if (state === "broken") finish("broken");
      else if (state === "finished") grace ??= setTimeout(() => finish("finished"), TERMINAL_GRACE_MS);
    };
    const onEnd = () => finish("ended");
    res.on("close", onClientClose);
    body.on("data", onData);
    body.on("end", onEnd);
    // Stays attached after finish: destroying the body may still emit an error.
    body.on("error", (err: NodeJS.ErrnoException) => finish(err.code === BODY_TIMEOUT ? "upstream-idle" : "upstream-cut"));
  });
}
