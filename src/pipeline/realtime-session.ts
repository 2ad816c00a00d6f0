// One realtime session between a client and its upstream: frames relayed both ways as they
// come (with backpressure: a side that does not read pauses the other), every usage-bearing
// event metered, every response admitted (the client's response.create waits, and the frames
// behind it with it, until it is; one the upstream starts by itself is admitted as it starts),
// every usage-bearing event's charge committed before that event is relayed (the upstream is
// not read meanwhile, and what it sent after it waits), and the session ended with the
// realtime API's error event when an admission is refused, when a transcription uses the
// money up, when a charge cannot be committed, or when it has lasted too long.

import WebSocket from "ws";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { log } from "../observability/log.js";
import { eventType, renderRealtimeError } from "../protocols/openai/realtime-events.js";
import type { Usage } from "../protocols/usage.js";
import { MAX_FRAME_BYTES, ReadGate, WsPipe } from "../upstream/ws-pipe.js";
import type { SessionAdmission } from "./realtime-admission.js";
import type { RealtimeMeter } from "./realtime-meter.js";

/** How long the upstream may take to end a response the client left (response.cancel), and
 * either side to answer a close, before its socket is cut. */
const CLOSE_GRACE_MS = 5_000;
/** Client frames queued behind a response.create being admitted: the client is paused, so
 * only what was already read can queue. */
const MAX_QUEUED_BYTES = 2 * MAX_FRAME_BYTES;

export interface RealtimeSessionOptions {
  readonly requestId: string;
  readonly client: WebSocket;
  readonly upstream: WebSocket;
  readonly meter: RealtimeMeter;
  readonly admission: SessionAdmission;
  /** A response's worst case, for its admission. */
  readonly worst: () => Usage;
  readonly maxSessionMs: number;
}

/** Why the gateway ended a session, for the log (undefined: a peer closed it). */
export type SessionEnd = { readonly code: string } | undefined;

export class RealtimeSession {
  readonly #o: RealtimeSessionOptions;
  readonly #clientGate: ReadGate;
  readonly #upstreamGate: ReadGate;
  readonly #toUpstream: WsPipe;
  readonly #toClient: WsPipe;
  /** Client frames waiting behind a response.create being admitted. */
  readonly #queued: [Buffer, boolean][] = [];
  #queuedBytes = 0;
  #admitting = false;
  /** Upstream frames waiting behind a usage event whose charge is being committed. */
  readonly #held: [Buffer, boolean][] = [];
  #heldBytes = 0;
  #settling = false;
  /** Called once nothing is being settled (the session's end waits for it). */
  #onSettled: (() => void) | undefined;
  #ended: SessionEnd;
  #clientGone = false;
  #leaving = false;
  readonly #timers: NodeJS.Timeout[] = [];

  constructor(opts: RealtimeSessionOptions) {
    this.#o = opts;
    const { client, upstream } = opts;
    this.#clientGate = new ReadGate(client);
    this.#upstreamGate = new ReadGate(upstream);
    const breach = () => this.end(new GatewayError(errors.realtimePeerStalled));
    this.#toUpstream = new WsPipe(upstream, this.#clientGate, breach);
    this.#toClient = new WsPipe(client, this.#upstreamGate, breach);
  }

  /** Relays until both sockets are closed; `early` are upstream frames that came before the
   * client was connected. Resolves with why the gateway ended it, if it did. */
  run(early: readonly [Buffer, boolean][]): Promise<SessionEnd> {
    const { client, upstream } = this.#o;
    return new Promise((resolve) => {
      let open = 2;
      /** The upstream's close, passed on to the client once what came before it is relayed. */
      let closeClient: (() => void) | undefined;
      // Both sockets closed and every usage event read settled: the session is over.
      const over = () => {
        if (this.#settling) return;
        closeClient?.();
        closeClient = undefined;
        if (open > 0) return;
        this.#onSettled = undefined;
        for (const t of this.#timers) clearTimeout(t);
        resolve(this.#ended);
      };
      this.#onSettled = over;
      for (const [data, isBinary] of early) this.#fromUpstream(data, isBinary);
      upstream.on("message", (data, isBinary) => this.#fromUpstream(data as Buffer, isBinary));
      client.on("message", (data, isBinary) => this.#fromClient(data as Buffer, isBinary));
      client.on("close", () => { this.#clientGone = true; this.#leaveUpstream(); open--; over(); });
      upstream.on("close", (code, reason) => {
        closeClient = () => closeSoon(client, sendable(code), reason, this.#timers);
        open--;
        over();
      });
      // ws answers an over-size client frame with close code 1009 itself.
      client.on("error", () => this.#leaveUpstream());
      upstream.on("error", (err: Error & { code?: string }) => this.end(new GatewayError(errors.upstreamError,
        err.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" ? `The upstream sent a realtime event larger than ${MAX_FRAME_BYTES} bytes.` : undefined)));
      this.#timers.push(setTimeout(() => this.end(new GatewayError(errors.realtimeSessionTooLong,
        `The realtime session reached ${Math.round(this.#o.maxSessionMs / 1000)} seconds, the longest a session may last; open a new one.`)),
      this.#o.maxSessionMs));
    });
  }

  /** Ends the session: the client gets the error event, then a close code for it. */
  end(err: GatewayError): void {
    if (this.#ended) return;
    this.#ended = { code: err.code };
    log.info("realtime session ended by the gateway", { requestId: this.#o.requestId, code: err.code });
    const { client } = this.#o;
    this.#clientGate.open();
    this.#upstreamGate.open();
    if (client.readyState === WebSocket.OPEN) {
      client.send(renderRealtimeError(err));
      closeSoon(client, closeCodeFor(err), err.code, this.#timers);
    }
    this.#leaveUpstream();
  }

  #fromClient(data: Buffer, isBinary: boolean): void {
    if (this.#ended) return;
    if (this.#admitting) {
      this.#queued.push([data, isBinary]);
      this.#queuedBytes += data.length;
      if (this.#queuedBytes > MAX_QUEUED_BYTES) this.end(new GatewayError(errors.realtimePeerStalled));
      return;
    }
    const type = isBinary ? undefined : eventType(data);
    this.#o.meter.client(type, data);
    if (type !== "response.create") {
      this.#toUpstream.send(data, isBinary);
      return;
    }
    this.#admitting = true;
    this.#clientGate.hold("admission");
    void this.#o.admission.admitCreate(this.#o.worst()).then((refusal) => {
      if (refusal) return this.end(refusal);
      if (this.#ended || this.#clientGone) return; // no response for a client that left
      this.#toUpstream.send(data, isBinary);
      this.#admitting = false;
      this.#clientGate.free("admission");
      this.#replayQueued();
    });
  }

  /** Relays the frames that waited behind an admission, stopping at the next response.create. */
  #replayQueued(): void {
    while (!this.#admitting && !this.#ended && this.#queued.length > 0) {
      const [data, isBinary] = this.#queued.shift()!;
      this.#queuedBytes -= data.length;
      this.#fromClient(data, isBinary);
    }
  }

  #fromUpstream(data: Buffer, isBinary: boolean): void {
    if (this.#settling) {
      this.#held.push([data, isBinary]);
      this.#heldBytes += data.length;
      // The upstream is paused: only what was already read can wait (or an upstream read on
      // because the session is ending). Past the bound it is cut; what waits is still billed.
      if (this.#heldBytes > MAX_QUEUED_BYTES) {
        this.end(new GatewayError(errors.realtimePeerStalled));
        this.#o.upstream.terminate();
      }
      return;
    }
    const { meter, admission } = this.#o;
    const metered = meter.upstream(isBinary ? undefined : eventType(data), data);
    // A client that left while a response ran: its usage has come, the upstream may close.
    if (this.#clientGone && metered?.kind === "done" && !meter.responding) closeSoon(this.#o.upstream, 1000, "", this.#timers);
    if (metered === undefined || metered.kind === "started") {
      this.#relay(data, isBinary);
      if (metered) void admission.started(this.#o.worst()).then((refusal) => { if (refusal) this.end(refusal); });
      return;
    }
    // A usage event: its charge is committed before the client sees it.
    this.#settling = true;
    this.#upstreamGate.hold("settle");
    const committed = metered.kind === "done" ? admission.responseDone(metered.used) : admission.transcribed(metered.used);
    void committed.then(() => {
      this.#relay(data, isBinary);
      this.#settling = false;
      // Nothing is admitted after a transcription: whether money is left is asked now.
      if (metered.kind === "transcribed") void admission.stillFunded().then((refusal) => { if (refusal) this.end(refusal); });
      this.#replayHeld();
    }, (err: unknown) => {
      // Not committed: the event is withheld, and the session ends with the state failure.
      log.error("realtime charge not recorded; the event is withheld", {
        requestId: this.#o.requestId, error: String((err as { cause?: unknown }).cause ?? err),
      });
      this.#settling = false;
      this.end(err instanceof GatewayError ? err : new GatewayError(errors.internal));
      this.#replayHeld();
    });
  }

  #relay(data: Buffer, isBinary: boolean): void {
    if (!this.#clientGone) this.#toClient.send(data, isBinary);
  }

  /** Relays (and meters) the upstream frames that waited behind a charge, stopping at the
   * next usage event; once none wait, the upstream is read again, and a session whose
   * sockets have closed is over. */
  #replayHeld(): void {
    while (!this.#settling && this.#held.length > 0) {
      const [data, isBinary] = this.#held.shift()!;
      this.#heldBytes -= data.length;
      this.#fromUpstream(data, isBinary);
    }
    if (this.#settling) return;
    this.#upstreamGate.free("settle");
    this.#onSettled?.();
  }

  /** The client is gone or the session is ending: a response still running is cancelled
   * and its response.done (which carries its usage) awaited a moment; then the upstream is closed. */
  #leaveUpstream(): void {
    const { upstream, meter } = this.#o;
    this.#upstreamGate.open(); // nothing to relay toward a client that left: read on
    if (this.#leaving || upstream.readyState !== WebSocket.OPEN) return;
    this.#leaving = true;
    if (!meter.responding) {
      closeSoon(upstream, 1000, "", this.#timers);
      return;
    }
    upstream.send(JSON.stringify({ type: "response.cancel" }));
    this.#timers.push(setTimeout(() => closeSoon(upstream, 1000, "", this.#timers), CLOSE_GRACE_MS));
  }
}

/** Closes a socket, and cuts it if its peer does not answer the close in time. */
function closeSoon(ws: WebSocket, code: number, reason: string | Buffer, timers: NodeJS.Timeout[]): void {
  if (ws.readyState === WebSocket.CLOSED) return;
  if (ws.readyState !== WebSocket.CLOSING) ws.close(code, reason);
  timers.push(setTimeout(() => ws.terminate(), CLOSE_GRACE_MS));
}

/** A close code one side reported, as one the other side may be sent (1005, 1006 and 1015
 * only describe what happened locally). */
function sendable(code: number): number {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999) ? code : 1000;
}

/** The close code after the gateway's error event: 1008 for what the client's account or
 * session allows, 1013 (try again later) for limits and state outages, 1014 for the upstream. */
function closeCodeFor(err: GatewayError): number {
  if (err.status === 429 || err.status === 503) return 1013;
  if (err.status === 502 || err.status === 504) return 1014;
  return err.status < 500 ? 1008 : 1011;
}
