// Reads a whole upstream answer before any of it goes to the client, so it can be checked
// (and converted) first; bounded in size, in silence (the transport's body timeout) and by
// the client's patience (a client that leaves stops the read).

import type { ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import { msSince, relay, type RelayEnd, type RelayOptions } from "../relay.js";

/** Largest answer held whole; a larger one is not checked or converted but refused. */
export const MAX_WHOLE_ANSWER = 64 * 1024 * 1024;

export interface WholeAnswer {
  /** "ended" when the whole body arrived; "too-large" past MAX_WHOLE_ANSWER. */
  readonly end: RelayEnd | "too-large";
  /** What arrived. */
  readonly bytes: Buffer;
  /** The whole body arrived (also when the client left and it was read on for its usage). */
  readonly whole: boolean;
  /** Milliseconds the body was read. */
  readonly readMs: number;
}

/** Reads `body` whole without writing to `res` (it only watches for the client leaving:
 * then it reads on as `drain` allows, for the answer's usage). */
export async function readWhole(res: ServerResponse, body: Readable, drain?: RelayOptions["drain"]): Promise<WholeAnswer> {
  const began = process.hrtime.bigint();
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  const r = await relay({
    res, body,
    transform: (chunk) => {
      size += chunk.length;
      if (size > MAX_WHOLE_ANSWER) tooLarge = true;
      else chunks.push(chunk);
      return "";
    },
    state: () => (tooLarge ? "broken" : "open"),
    drain,
  });
  const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  return { end: tooLarge ? "too-large" : r.end, bytes, whole: r.bodyEnded && !tooLarge, readMs: msSince(began) };
}
