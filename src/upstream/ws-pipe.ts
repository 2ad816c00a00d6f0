// One direction of a WebSocket relay with backpressure: frames go to the other side as they
// come, and while it has more than HIGH_WATER bytes not yet taken by its socket, the side
// they come from is not read (its socket paused) until they drain below LOW_WATER. What a
// session holds is bounded by those marks plus the frames already read, whatever either
// peer does; a pipe that passes its hard bound anyway reports a breach.

import WebSocket from "ws";

/** Most bytes of one realtime frame, either way. OpenAI documents 15 MiB as the most one
 * input_audio_buffer.append may carry (its largest client event); server events are far
 * smaller. ws's own default (100 MiB) would let one frame hold that much per session. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Bytes queued toward a peer above which the other peer is no longer read. */
export const HIGH_WATER = 1024 * 1024;
/** Reading resumes once the queue is this small again. */
const LOW_WATER = 256 * 1024;
/** A pause takes effect after the frames already read: at most a frame and a socket read past
 * HIGH_WATER. Beyond this the pipe is broken, and the session ends. */
const HARD_BOUND = HIGH_WATER + MAX_FRAME_BYTES + 1024 * 1024;

/** Pauses a socket while any reason holds it (backpressure, a pending admission). */
export class ReadGate {
  readonly #ws: WebSocket;
  readonly #reasons = new Set<string>();

  constructor(ws: WebSocket) {
    this.#ws = ws;
  }

  hold(reason: string): void {
    if (this.#reasons.size === 0) this.#ws.pause();
    this.#reasons.add(reason);
  }

  free(reason: string): void {
    if (!this.#reasons.delete(reason) || this.#reasons.size > 0) return;
    this.#ws.resume();
  }

  /** Reads again whatever held it (the session is ending: its close must be read). */
  open(): void {
    if (this.#reasons.size === 0) return;
    this.#reasons.clear();
    this.#ws.resume();
  }

  /** Whether the socket is paused now. */
  get held(): boolean {
    return this.#reasons.size > 0;
  }
}

export class WsPipe {
  readonly #to: WebSocket;
  readonly #source: ReadGate;
  readonly #onBreach: () => void;
  #pending = 0;

  /** @param source the reading side's gate, held while `to` drains
   * @param onBreach called once the queue passes its hard bound (the session must end) */
  constructor(to: WebSocket, source: ReadGate, onBreach: () => void) {
    this.#to = to;
    this.#source = source;
    this.#onBreach = onBreach;
  }

  /** Sends a frame when the other side is open (frames to a closing side are dropped). */
  send(data: Buffer, isBinary: boolean): void {
    if (this.#to.readyState !== WebSocket.OPEN) return;
    const n = data.length;
    this.#pending += n;
    this.#to.send(data, { binary: isBinary }, () => {
      this.#pending -= n;
      if (this.#pending <= LOW_WATER) this.#source.free("backpressure");
    });
    if (this.#pending > HIGH_WATER) this.#source.hold("backpressure");
    if (this.#pending > HARD_BOUND) this.#onBreach();
  }

  /** Bytes sent and not yet taken by the socket. */
  get pending(): number {
    return this.#pending;
  }
}
