// A stream's framing toward its client when it is not the SSE the gateway speaks and taps
// (generate-content's JSON array, speech's raw audio): applied to the events as they are
// relayed, and to the withheld tail after the cost is stamped into its SSE.

import type { CostStamp } from "./stream-cost.js";

/** Re-frames SSE events for a client that asked for another framing. */
export interface StreamFraming {
  /** The Content-Type of the re-framed stream. */
  readonly contentType: string;
  /** Whole SSE events, as they are relayed, in the client's framing. */
  events(sse: string): string | Buffer;
  /** The last events (the withheld tail, or an error event) and the framing's close. */
  end(sse: string): string | Buffer;
  /** The framing has no way to tell the client of an error (raw audio): a stream that does
   * not complete is cut off, so the client cannot take what it got for a whole answer. */
  readonly cutsOnError?: boolean;
}

/** A cost stamp whose result is in the client's framing. */
export type FramedStamp = (tail: string, cost: string | undefined) => string | Buffer;

/** A stream's tail and cost stamp in the client's framing: a whole stream's tail is framed at
 * release, after its cost is stamped into its SSE; any other end's at once. */
export function framedTail(
  framing: StreamFraming | undefined, complete: boolean, tail: string | undefined, stamp: CostStamp | undefined,
): { tail: string | Buffer | undefined; stamp: FramedStamp | undefined } {
  if (!framing) return { tail, stamp };
  if (complete) return { tail, stamp: (t, cost) => framing.end(stamp ? stamp(t, cost) : t) };
  return { tail: tail === undefined ? undefined : framing.end(tail), stamp: undefined };
}
