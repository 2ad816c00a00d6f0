// Relays an upstream body to the client as it arrives, with backpressure and cancellation
// both ways (client gone: stop the upstream, or first read on for its usage, bounded). It
// never ends the client's response: which bytes are the answer's last, and when they may
// go, is for the exchange and settlement. Silence between chunks is bounded by the
// transport's body timeout (send.ts). A body the channel's kind decodes (another framing,
// providers/framing.ts) is read at its source, each chunk through the kind's decoder.

import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { BrokenFraming, decodingOf } from "../providers/framing.js";

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
  /** What the client gets now for an upstream chunk, decoded when the kind decodes it (""
   * for nothing yet). */
  readonly transform: (chunk: Buffer) => Buffer | string;
  /** Checked after each chunk; default "open". */
  readonly state?: () => RelayState;
  /** When the client leaves before the end: keep reading (through `transform`, relaying
   * nothing) until the answer finishes or ends, for at most `ms` and `bytes` more, so the
   * exchange learns the upstream's final usage. Absent or ms 0: stop at once. */
  readonly drain?: { readonly ms: number; readonly bytes: number };
}

export interface Relayed {
  readonly end: RelayEnd;
  /** process.hrtime.bigint() when the first byte went to the client. */
  readonly firstByteNs: bigint | undefined;
  /** The transform's exception, for `internal-error`. */
  readonly error?: unknown;
  /** The upstream body ended whole (also after the client left, while draining). */
  readonly bodyEnded: boolean;
}

/** After its terminal event an upstream normally ends at once; one that does not is not
 * waited for longer than this (its connection is then closed). */
const TERMINAL_GRACE_MS = 1000;

/** undici's error code for a body silent longer than its bodyTimeout. */
const BODY_TIMEOUT = "UND_ERR_BODY_TIMEOUT";

/** Pipes the upstream body to the client until it ends, breaks, or the client leaves. */
export function relay(o: RelayOptions): Promise<Relayed> {
  const { res, body } = o;
  // Read at the source when decoded: pause, resume, data and end are the source's; errors
  // and destroy stay the body's (it passes the source's errors on and destroys it).
  const decoding = decodingOf(body);
  const source = decoding?.source ?? body;
  const decoder = decoding?.decoder;
  if (o.head) {
    res.writeHead(o.head.status, o.head.headers);
    if (o.head.flush) res.flushHeaders();
  }
  return new Promise((resolve) => {
    let settled = false;
    let firstByteNs: bigint | undefined;
    let grace: NodeJS.Timeout | undefined;
    /** Set once the client left and the body is read on for its usage: bytes still allowed. */
    let draining: { left: number; timer: NodeJS.Timeout } | undefined;
    let bodyEnded = false;
    const finish = (end: RelayEnd, error?: unknown) => {
      if (settled) return;
      settled = true;
      res.off("close", onClientClose);
      res.off("drain", onDrain);
      source.off("data", onData);
      source.off("end", onEnd);
      if (grace) clearTimeout(grace);
      if (draining) clearTimeout(draining.timer);
      // Past this point the body is not read: close it (an error from the close is moot).
      if (!bodyEnded) body.destroy();
      resolve({ end: draining ? "client-gone" : end, firstByteNs, error, bodyEnded });
    };
    const onClientClose = () => {
      const drain = o.drain;
      if (!drain || drain.ms <= 0 || draining) return finish("client-gone");
      draining = { left: drain.bytes, timer: setTimeout(() => finish("client-gone"), drain.ms) };
      res.off("drain", onDrain);
      source.resume(); // paused for a client that will never drain
    };
    const onDrain = () => source.resume();
    const onData = (chunk: Buffer) => {
      let decoded = chunk;
      /** The framing broke in this chunk: what it completed before goes, then the end. */
      let cut = false;
      if (decoder) {
        try {
          decoded = decoder.push(chunk);
        } catch (err) {
          if (!(err instanceof BrokenFraming)) return finish("internal-error", err);
          decoded = err.before ?? EMPTY;
          cut = true;
        }
      }
      let out: Buffer | string;
      let state: RelayState;
      try {
        out = o.transform(decoded);
        state = o.state ? o.state() : "open";
      } catch (err) {
        finish("internal-error", err);
        return;
      }
      if (draining) {
        // Nothing goes out; the answer's end (or the byte bound) ends the read.
        draining.left -= chunk.length;
        if (cut || state !== "open" || draining.left <= 0) finish("client-gone");
        return;
      }
      if (out.length > 0 && !res.destroyed) {
        firstByteNs ??= process.hrtime.bigint();
        if (!res.write(out)) {
          source.pause();
          res.once("drain", onDrain);
        }
      }
      if (cut) finish("upstream-cut");
      else if (state === "broken") finish("broken");
      else if (state === "finished") grace ??= setTimeout(() => finish("finished"), TERMINAL_GRACE_MS);
    };
    const onEnd = () => {
      if (decoder) {
        try {
          decoder.end();
        } catch (err) {
          // Ended inside a frame: cut short, not whole.
          return err instanceof BrokenFraming ? finish("upstream-cut") : finish("internal-error", err);
        }
      }
      bodyEnded = true;
      finish("ended");
    };
    res.on("close", onClientClose);
    source.on("data", onData);
    source.on("end", onEnd);
    // Stays attached after finish: destroying the body may still emit an error.
    body.on("error", (err: NodeJS.ErrnoException) => finish(err.code === BODY_TIMEOUT ? "upstream-idle" : "upstream-cut"));
    // A client that left before the relay began: read on (or stop) as if it left now.
    if (res.destroyed) onClientClose();
  });
}

const EMPTY = Buffer.alloc(0);

/** Milliseconds since `start` (a process.hrtime.bigint()). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}
