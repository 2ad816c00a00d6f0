// Bedrock's stream answer (application/vnd.amazon.eventstream: binary frames, each with a
// CRC32 over its prelude and one over the whole) read into Anthropic's SSE. A `chunk`
// event carries `{"bytes": "<base64 of one Anthropic stream event>"}`, relayed as that
// event (ConverseStream's events are read by converse-stream.ts, handed to the same
// decoder); an exception frame becomes Anthropic's `error` event. A frame whose checksum does
// not match, that claims an impossible length, or that the answer ends in the middle of,
// errors the stream: the gateway then ends the client's with its own error event, and
// nothing of that frame is passed on.

import { Readable } from "node:stream";
import { EventStreamCodec, type Message, type MessageHeaders } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { anthropicErrorType } from "./errors.js";

/** A frame's fixed bytes: total and headers length, prelude CRC, message CRC. */
const FRAME_OVERHEAD = 16;
/** The longest frame held: a Claude stream event is small; a longer claimed length is a
 * corrupt prelude, not a frame to wait for. */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** A frame that cannot be read: the stream errors with it. */
export class CorruptFrame extends Error {
  /** The SSE text of the whole frames before it in the same chunk. */
  before?: string;

  constructor(message: string) {
    super(message);
    this.name = "CorruptFrame";
  }
}

/** The SSE text of one decoded frame ("" for one that carries no event); throws
 * CorruptFrame for a frame that is not what the operation sends. */
export type FrameReader = (message: Message) => string;

/** Decodes frames as they arrive (split across chunks or many to a chunk) into SSE text:
 * InvokeModel's chunks by default, or another operation's events (`read`: Converse's). */
export class FrameDecoder {
  readonly #codec = new EventStreamCodec(toUtf8, fromUtf8);
  readonly #read: FrameReader;
  /** Bytes of a frame not yet whole (at most MAX_FRAME_BYTES + one chunk). */
  #pending: Buffer = Buffer.alloc(0);

  constructor(read: FrameReader = sseOf) {
    this.#read = read;
  }

  /** The SSE text of the frames `chunk` completes; a frame that cannot be read throws
   * CorruptFrame carrying the text of the whole frames before it (`before`). */
  push(chunk: Buffer): string {
    let pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    let out = "";
    try {
      while (pending.length >= 4) {
        const length = pending.readUInt32BE(0);
        if (length < FRAME_OVERHEAD || length > MAX_FRAME_BYTES) throw new CorruptFrame(`event-stream frame of ${length} bytes`);
        if (pending.length < length) break;
        out += this.#read(this.#codec.decode(pending.subarray(0, length)));
        pending = pending.subarray(length);
      }
    } catch (err) {
      const corrupt = err instanceof CorruptFrame ? err : new CorruptFrame(`event-stream frame not readable: ${(err as Error).message}`);
      corrupt.before = out;
      throw corrupt;
    }
    this.#pending = pending;
    return out;
  }

  /** Throws when the answer ended inside a frame. */
  end(): void {
    if (this.#pending.length > 0) throw new CorruptFrame(`the answer ended inside an event-stream frame (${this.#pending.length} bytes)`);
  }
}

/**
 * The SSE of an event-stream body, as a Readable fed straight from the body's 'data'
 * events: no writable side and no pipe between them (each is a cost per chunk, bench/kinds.ts).
 * Back-pressure holds: the body pauses while the reader does not take more. A corrupt frame
 * errors the stream after the whole frames before it; the body is destroyed when the
 * reader is done early.
 */
export function sseOfEventStream(body: Readable, decoder = new FrameDecoder()): Readable {
  const sse = new Readable({
    read() {
      if (body.isPaused()) body.resume();
    },
    destroy(error, done) {
      if (!body.readableEnded) body.destroy();
      done(error);
    },
  });
  const fail = (error: Error, before: string) => {
    if (before !== "") sse.push(before);
    // After what came before it: as a read of the data above, then the error.
    process.nextTick(() => sse.destroy(error));
  };
  body.on("data", (chunk: Buffer) => {
    let text: string;
    try {
      text = decoder.push(chunk);
    } catch (error) {
      body.pause();
      return fail(error as Error, (error as CorruptFrame).before ?? "");
    }
    if (text !== "" && !sse.push(text)) body.pause();
  });
  body.on("end", () => {
    try {
      decoder.end();
      sse.push(null);
    } catch (error) {
      fail(error as Error, "");
    }
  });
  body.on("error", (error) => sse.destroy(error));
  return sse;
}

/** Anthropic's error event for an exception or error frame (any operation's); undefined
 * for another frame. */
export function exceptionSse(message: Message): string | undefined {
  const type = frameHeader(message.headers, ":message-type");
  if (type !== "exception" && type !== "error") return undefined;
  const name = frameHeader(message.headers, type === "exception" ? ":exception-type" : ":error-code");
  return errorEvent(name, messageText(message.body, frameHeader(message.headers, ":error-message")));
}

/** The SSE text of one InvokeModel frame ("" for one that carries no event). */
function sseOf(message: Message): string {
  const failure = exceptionSse(message);
  if (failure !== undefined) return failure;
  const type = frameHeader(message.headers, ":message-type");
  if (type !== "event" || frameHeader(message.headers, ":event-type") !== "chunk") return "";
  const payload = JSON.parse(toUtf8(message.body)) as { bytes?: unknown };
  if (typeof payload.bytes !== "string") throw new CorruptFrame("a chunk event without bytes");
  const text = Buffer.from(payload.bytes, "base64").toString("utf8");
  // Bedrock writes each event with its type first: read from there, the event is not
  // parsed twice (the usage tap parses what it needs); any other shape is parsed.
  const eventType = LEADING_TYPE.exec(text)?.[1] ?? typeOfParsed(text);
  // One SSE data line: the event as Bedrock wrote it, unless it spans lines.
  const data = /[\r\n]/.test(text) ? JSON.stringify(JSON.parse(text)) : text;
  return `event: ${eventType}\ndata: ${data}\n\n`;
}

/** `{"type":"content_block_delta",…`: the event's type, as Bedrock writes events. */
const LEADING_TYPE = /^\{"type":"([a-z_]+)"[,}]/;

/** The type of an event written otherwise; a frame that is not an Anthropic stream event
 * (not JSON, no type) is corrupt. */
function typeOfParsed(text: string): string {
  let event: { type?: unknown };
  try {
    event = JSON.parse(text) as { type?: unknown };
  } catch {
    throw new CorruptFrame("a chunk event that is not JSON");
  }
  if (typeof event?.type !== "string" || !/^[a-z_]+$/.test(event.type)) throw new CorruptFrame("a chunk event that is not an Anthropic stream event");
  return event.type;
}

/** Anthropic's error event for an exception Bedrock named: as the Anthropic API says it
 * mid-stream, overloaded_error for throttling and capacity, api_error for the rest. */
function errorEvent(name: string | undefined, message: string): string {
  const named = anthropicErrorType(name, 500);
  const type = named === "rate_limit_error" || named === "overloaded_error" ? "overloaded_error" : "api_error";
  return `event: error\ndata: ${JSON.stringify({ type: "error", error: { type, message } })}\n\n`;
}

/** An exception frame's message: its JSON body's, its header's, or a default. */
function messageText(body: Uint8Array, fromHeader: string | undefined): string {
  try {
    const parsed = JSON.parse(toUtf8(body)) as { message?: unknown; Message?: unknown };
    const text = parsed.message ?? parsed.Message;
    if (typeof text === "string") return text;
  } catch {
    // not JSON: the header's, or the default
  }
  return fromHeader ?? "Bedrock ended the stream with an error.";
}

/** A string header of a frame. */
export function frameHeader(headers: MessageHeaders, name: string): string | undefined {
  const value = headers[name];
  return value?.type === "string" ? value.value : undefined;
}
