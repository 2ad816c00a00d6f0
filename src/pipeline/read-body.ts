// Reads a request body within its bounds: max_body for the request (413), the server's body
// memory budget shared by every request (503 + Retry-After), and body_timeout between bytes
// (408). A body takes from the budget the memory it holds as its bytes arrive, never what
// its Content-Length only promises, so a connection that declares max_body and trickles
// holds what it sent. What a body took is given back when its response closes.

import type { IncomingMessage } from "node:http";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { BodyBudget } from "./body-budget.js";
import type { Core } from "./context.js";

/** What a client refused for lack of body memory is told to wait, in seconds. */
const BUDGET_RETRY_AFTER = "1";

/**
 * Collects the body, taking from the budget what each chunk adds to the memory it holds;
 * `onChunk` sees each chunk as it arrives (multipart parsing streams along), and a throw
 * from it fails the request.
 */
export function readBody(ctx: Core, budget: BodyBudget, onChunk?: (chunk: Buffer) => void): Promise<Buffer> {
  const { req, res } = ctx;
  const limit = ctx.runtime.server.maxBodyBytes;
  const header = req.headers["content-length"];
  const declared = header === undefined ? -1 : Number(header);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  // After an Upgrade request node leaves the body on the raw socket: there is none to read here.
  if (ctx.upgrade) return Promise.reject(new GatewayError(errors.invalidParameter, "This endpoint does not take an Upgrade request."));
  if (req.destroyed || res.closed) return Promise.reject(new GatewayError(errors.clientClosed));
  // A declared length that could not fit now is refused before a byte is read; one that fits
  // is still only taken as it arrives.
  if (declared > 0 && !budget.fits(declared)) return Promise.reject(memoryExhausted());
  let held = 0;
  const take = (bytes: number): boolean => {
    if (bytes === 0) return true;
    if (!budget.take(bytes)) return false;
    if (held === 0) res.once("close", () => budget.give(held));
    held += bytes;
    return true;
  };
  return new Promise((resolve, reject) => {
    const parts = new BodyParts(declared);
    const fail = (err: unknown) => {
      cleanup();
      req.resume(); // discard the rest, so the answer can be written
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      idle?.refresh();
      if (parts.size + chunk.length > limit) return fail(tooLarge(limit));
      if (!take(parts.heldWith(chunk) - parts.held)) return fail(memoryExhausted());
      try {
        onChunk?.(chunk);
      } catch (err) {
        return fail(err);
      }
      parts.add(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(parts.body());
    };
    const onError = () => {
      cleanup();
      reject(new GatewayError(errors.clientClosed));
    };
    const cleanup = () => {
      if (idle) clearTimeout(idle);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    // A body already received whole (most JSON requests) needs no idle timer.
    const idleMs = ctx.runtime.server.bodyTimeoutMs;
    const idle = req.complete ? undefined : setTimeout(() => fail(stalled(idleMs)), idleMs);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/**
 * The chunks of one body, holding about what arrived. One chunk is kept as is (most JSON
 * requests). More are listed; a body of declared length switches, once half of it is here,
 * to one buffer of that length that the rest is copied into (no second whole copy at the
 * end, and a trickle never makes it allocate its declared length early); a body without a
 * declared length is joined at the end.
 */
class BodyParts {
  readonly #declared: number;
  #list: Buffer[] = [];
  #whole: Buffer | undefined;
  size = 0;

  constructor(declared: number) {
    this.#declared = declared;
  }

  /** Bytes of memory the parts hold now. */
  get held(): number {
    return this.#whole ? this.#whole.length : this.size;
  }

  /** Bytes they would hold with `chunk` added. */
  heldWith(chunk: Buffer): number {
    if (this.#whole) return this.#whole.length;
    const size = this.size + chunk.length;
    return this.#switches(size) ? this.#declared : size;
  }

  add(chunk: Buffer): void {
    const at = this.size;
    this.size += chunk.length;
    if (this.#whole) {
      chunk.copy(this.#whole, at); // node's parser never delivers more than Content-Length
    } else if (this.#switches(this.size)) {
      this.#whole = Buffer.allocUnsafe(this.#declared);
      let offset = 0;
      for (const part of this.#list) offset += part.copy(this.#whole, offset);
      chunk.copy(this.#whole, offset);
      this.#list = [];
    } else {
      this.#list.push(chunk);
    }
  }

  /** Whether a body of declared length that has reached `size` (and is not whole in one
   * chunk) moves into its one buffer. */
  #switches(size: number): boolean {
    return this.#declared > 0 && this.#list.length > 0 && size * 2 >= this.#declared;
  }

  body(): Buffer {
    if (this.#whole) return this.#whole.subarray(0, this.size);
    if (this.#list.length === 1) return this.#list[0];
    return Buffer.concat(this.#list, this.size);
  }
}

/**
 * A body answered before it was all received (a refusal): node reads and discards the rest
 * to keep the connection, so the client still sees the answer once it has sent its body.
 * This bounds that like a body being read: the connection is closed when the rest stalls
 * for body_timeout or runs past max_body.
 */
export function boundUnreadBody(req: IncomingMessage, limits: { readonly maxBodyBytes: number; readonly bodyTimeoutMs: number }): void {
  if (req.complete || req.destroyed) return;
  let left = limits.maxBodyBytes;
  const drop = () => {
    stop();
    req.socket.destroy();
  };
  const onData = (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) drop();
    else idle.refresh();
  };
  const stop = () => {
    clearTimeout(idle);
    req.off("data", onData);
    req.off("end", stop);
    req.off("close", stop);
  };
  const idle = setTimeout(drop, limits.bodyTimeoutMs);
  // A drain in progress ends the connection anyway: this timer must not hold the process.
  idle.unref();
  req.on("data", onData);
  req.on("end", stop);
  req.on("close", stop);
}

function tooLarge(limit: number): GatewayError {
  // connection: close — the rest of an oversized body is not worth reading.
  return new GatewayError(errors.bodyTooLarge, `The request body exceeds the limit of ${limit} bytes.`,
    { headers: { connection: "close" } });
}

function memoryExhausted(): GatewayError {
  return new GatewayError(errors.bodyMemoryExhausted, undefined,
    { headers: { "retry-after": BUDGET_RETRY_AFTER, connection: "close" } });
}

function stalled(idleMs: number): GatewayError {
  return new GatewayError(errors.requestTimeout, `The request body stalled: no bytes arrived for ${idleMs / 1000} s.`,
    { headers: { connection: "close" } });
}
