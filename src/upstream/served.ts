// What an upstream exchange learned, returned as one value: the stage that called it
// writes the request context, and settlement prices it. The answer's last bytes are
// withheld until its charge is committed; release() writes them.

import type { ServerResponse } from "node:http";
import type { FramedStamp } from "../protocols/stream-framing.js";
import type { Units, Usage } from "../protocols/usage.js";
import type { RelayEnd } from "./relay.js";

/** How an answer ended. */
export type Ending =
  /** The whole answer, with its protocol's terminal event. */
  | "complete"
  /** The client left before the end. */
  | "client-gone"
  /** The upstream connection broke mid-answer. */
  | "upstream-cut"
  /** The upstream went silent longer than server.stream_idle_timeout. */
  | "upstream-idle"
  /** The upstream ended a stream without its protocol's terminal event. */
  | "unterminated"
  /** The upstream sent a stream event that does not decode. */
  | "undecodable"
  /** The upstream sent a stream event longer than server.max_event_size. */
  | "oversized-event"
  /** The upstream reported an error in the stream. */
  | "upstream-error"
  /** The gateway failed while relaying (a bug: logged with its stack). */
  | "internal-error";

/** The Ending of a relay that stopped at `end` (anything but a stream's own terminal). */
export function endingOf(end: RelayEnd): Ending {
  switch (end) {
    case "client-gone": return "client-gone";
    case "upstream-idle": return "upstream-idle";
    case "broken": return "undecodable";
    case "internal-error": return "internal-error";
    case "upstream-cut": return "upstream-cut";
    default: return "complete";
  }
}

/** What the answer is charged for: its reported usage (an estimate, marked, when it
 * reported none), an estimate of what was delivered (marked), or nothing. */
export type Charge = "reported" | "estimate" | "none";

export interface Served {
  /** The status the client got (the upstream's). */
  readonly status: number;
  readonly ending: Ending;
  readonly charge: Charge;
  /** Usage the answer reported, if any. */
  readonly usage: Usage | undefined;
  /** Part of `usage` is the gateway's estimate (a realtime response cut before its usage
   * came): the entry is marked estimated. */
  readonly usageEstimated?: boolean;
  /** Units read from the answer; undefined keeps the request's own. */
  readonly units: Units | undefined;
  /** True when the units are the pre-deduction's guess (the answer did not report them). */
  readonly unitsEstimated: boolean;
  /** Characters of generated text delivered (for estimates). */
  readonly outputChars: number;
  /** For an answer the client left before its usage came: how long the upstream was read
   * (from its head until reading stopped), the least time it spent generating. */
  readonly readMs?: number;
  /** process.hrtime.bigint() when the answer's first byte was ready for the client. */
  readonly firstByteNs: bigint | undefined;
  /** The asynchronous job the answer created (video). */
  readonly jobId: string | undefined;
  /** The id the provider gave the answer (a responses object), for recording its creator. */
  readonly answerId?: string;
  /** Client fields a converted request left out (x-gateway-dropped-fields), for the usage log. */
  readonly droppedFields?: readonly string[];
  /** Writes the withheld last bytes and ends the answer (handed to the socket's buffer:
   * nothing after settlement waits for the client to read it). Call once the charge is
   * committed. `cost` (an exact decimal), when given, is shown to the client: in the
   * X-Gateway-Cost header of an answer whose head is still held, or in a stream's final
   * usage event. */
  release(cost?: string): void;
  /** Gives up the answer without its last bytes (its charge could not be committed): an
   * answer under way is cut off; one not started is left for an error answer. */
  abandon(): void;
}

/** The parts of a Served an exchange fills in; the rest have defaults. */
export interface ServedParts {
  readonly status: number;
  readonly ending: Ending;
  readonly charge: Charge;
  readonly usage?: Usage;
  readonly units?: Units;
  readonly unitsEstimated?: boolean;
  readonly outputChars?: number;
  readonly readMs?: number;
  readonly firstByteNs?: bigint;
  readonly jobId?: string;
  readonly answerId?: string;
  readonly droppedFields?: readonly string[];
}

/** The header that shows a non-stream answer's cost. */
export const COST_HEADER = "x-gateway-cost";

/**
 * A Served whose release() writes `tail` (and, when `head` is given, the status and headers
 * first) and ends the response; abandon() destroys it. `stamp` puts the cost into a
 * stream's tail (or takes an upstream's out of it when the cost is not shown).
 */
export function served(res: ServerResponse, parts: ServedParts, tail?: string | Buffer, head?: Head, stamp?: FramedStamp): Served {
  return {
    status: parts.status,
    ending: parts.ending,
    charge: parts.charge,
    usage: parts.usage,
    units: parts.units,
    unitsEstimated: parts.unitsEstimated ?? false,
    outputChars: parts.outputChars ?? 0,
    readMs: parts.readMs,
    firstByteNs: parts.firstByteNs,
    jobId: parts.jobId,
    answerId: parts.answerId,
    droppedFields: parts.droppedFields,
    release: (cost) => {
      if (head && !res.headersSent && !res.destroyed) {
        if (cost !== undefined) res.setHeader(COST_HEADER, cost);
        res.writeHead(head.status, head.headers);
      }
      endResponse(res, stamp && typeof tail === "string" && parts.ending === "complete" ? stamp(tail, cost) : tail);
    },
    // Nothing sent yet: the caller answers with an error instead. Once under way, cut off.
    abandon: () => { if (res.headersSent && !res.writableEnded) res.destroy(); },
  };
}

/** A Served for an answer that broke after its head was written: release() cuts the
 * connection, since the client must not take what it got for a whole answer. */
export function cutOff(res: ServerResponse, parts: ServedParts): Served {
  const answer = served(res, parts);
  const cut = () => {
    if (!res.writableEnded) res.destroy();
  };
  return Object.assign(answer, { release: cut, abandon: cut });
}

/** Status and headers written on release (answers held whole until then). */
export interface Head {
  readonly status: number;
  readonly headers: import("node:http").OutgoingHttpHeaders;
}

/** Ends the response with `tail`, unless it has ended or the connection closed. */
export function endResponse(res: ServerResponse, tail?: string | Buffer): void {
  if (res.writableEnded || res.destroyed) return;
  res.end(tail === undefined || tail.length === 0 ? undefined : tail);
}
