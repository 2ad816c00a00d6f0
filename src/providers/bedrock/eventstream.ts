// Bedrock's stream answer (application/vnd.amazon.eventstream: binary frames, each with a
// CRC32 over its prelude and one over the whole) read into Anthropic's SSE. A `chunk`
// event carries `{"bytes": "<base64 of one Anthropic stream event>"}`, relayed as that
// event; an exception frame becomes Anthropic's `error` event. A frame whose checksum does
// not match, that claims an impossible length, or that the answer ends in the middle of,
// errors the stream: the gateway then ends the client's with its own error event, and
// nothing of that frame is passed on.

import type { Readable } from "node:stream";
import { EventStreamCodec, type Message, type MessageHeaders } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { chunkPayloadAt, NOT_A_CHUNK } from "./chunk-frame.js";
import { CorruptFrame } from "./corrupt-frame.js";
import { DecodedBody, type ChunkDecoder } from "../framing.js";

export { CorruptFrame } from "./corrupt-frame.js";
import { anthropicErrorType } from "./errors.js";

/** A frame's fixed bytes: total and headers length, prelude CRC, message CRC. */
const FRAME_OVERHEAD = 16;
/** The longest frame held: a Claude stream event is small; a longer claimed length is a
 * corrupt prelude, not a frame to wait for. */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** The SSE of one decoded frame (empty for one that carries no event); throws
 * CorruptFrame for a frame that is not what the operation sends. */
export type FrameReader = (message: Message) => Buffer | string;

/** Decodes frames as they arrive (split across chunks or many to a chunk) into SSE bytes:
 * InvokeModel's chunks by default, or another operation's events (`read`: Converse's). */
export class FrameDecoder implements ChunkDecoder {
  #codec: EventStreamCodec | undefined;
  readonly #read: FrameReader | undefined;
  /** Bytes of a frame not yet whole (at most MAX_FRAME_BYTES + one chunk). */
  #pending: Buffer = EMPTY;

  constructor(read?: FrameReader) {
    this.#read = read;
  }

  /** The SSE bytes of the frames `chunk` completes (EMPTY when none); a frame that cannot
   * be read throws CorruptFrame carrying the bytes of the whole frames before it. */
  push(chunk: Buffer): Buffer {
    let pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    let out: Buffer[] | Buffer = EMPTY;
    try {
      while (pending.length >= 4) {
        const length = pending.readUInt32BE(0);
        if (length < FRAME_OVERHEAD || length > MAX_FRAME_BYTES) throw new CorruptFrame(`event-stream frame of ${length} bytes`);
        if (pending.length < length) break;
        const sse = this.#sseOf(pending, length);
        // One frame a chunk is the common case: its bytes, not a list of them.
        if (sse.length > 0) out = out.length === 0 ? sse : Array.isArray(out) ? (out.push(sse), out) : [out, sse];
        // A chunk of whole frames (the common case) leaves nothing: no view of nothing.
        pending = length === pending.length ? EMPTY : pending.subarray(length);
      }
    } catch (err) {
      const corrupt = err instanceof CorruptFrame ? err : new CorruptFrame(`event-stream frame not readable: ${(err as Error).message}`);
      corrupt.before = Array.isArray(out) ? Buffer.concat(out) : out;
      throw corrupt;
    }
    this.#pending = pending;
    return Array.isArray(out) ? Buffer.concat(out) : out;
  }

  /** Throws when the answer ended inside a frame. */
  end(): void {
    if (this.#pending.length > 0) throw new CorruptFrame(`the answer ended inside an event-stream frame (${this.#pending.length} bytes)`);
  }

  /** The SSE of the frame of `length` bytes at the start of `bytes`: an InvokeModel chunk
   * read in place (chunk-frame.ts), any other frame decoded whole by the AWS SDK's codec. */
  #sseOf(bytes: Buffer, length: number): Buffer {
    if (this.#read === undefined) {
      const payloadAt = chunkPayloadAt(bytes, length);
      if (payloadAt !== NOT_A_CHUNK) return chunkSse(bytes, payloadAt, length - 4);
    }
    this.#codec ??= new EventStreamCodec(toUtf8, fromUtf8);
    const message = this.#codec.decode(bytes.subarray(0, length));
    const read = (this.#read ?? sseOf)(message);
    return typeof read === "string" ? Buffer.from(read) : read;
  }
}

/** The SSE of an event-stream body: the relay reads the body through the decoder itself,
 * any other reader reads this Readable (providers/framing.ts). A corrupt frame errors it
 * after the whole frames before it; destroying it destroys the body. */
export function sseOfEventStream(body: Readable, decoder = new FrameDecoder()): Readable {
  return new DecodedBody(body, decoder);
}

/** Anthropic's error event for an exception or error frame (any operation's); undefined
 * for another frame. */
export function exceptionSse(message: Message): string | undefined {
  const type = frameHeader(message.headers, ":message-type");
  if (type !== "exception" && type !== "error") return undefined;
  const name = frameHeader(message.headers, type === "exception" ? ":exception-type" : ":error-code");
  return errorEvent(name, messageText(message.body, frameHeader(message.headers, ":error-message")));
}

/** The SSE bytes of one InvokeModel frame the codec decoded (EMPTY for one that carries
 * no event). */
function sseOf(message: Message): Buffer {
  const failure = exceptionSse(message);
  if (failure !== undefined) return Buffer.from(failure);
  const type = frameHeader(message.headers, ":message-type");
  if (type !== "event" || frameHeader(message.headers, ":event-type") !== "chunk") return EMPTY;
  const payload = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength);
  return chunkSse(payload, 0, payload.length);
}

/** The SSE bytes of a chunk event's payload `{"bytes":"<base64 of one Anthropic event>"}`
 * (bytes[from, to)). The common case, bytes to bytes: Bedrock writes each event on one line
 * with its type first, so it is decoded into one buffer behind room for its `event:` line
 * and relayed as written, not parsed here (the usage tap parses what it needs). Any other
 * shape is parsed, checked and written on one line. */
function chunkSse(payload: Buffer, from: number, to: number): Buffer {
  let out: Buffer | undefined;
  let eventEnd = -1;
  // Plain base64 (Bedrock's writing) is decoded here, from the bytes into the buffer; any
  // other writing of the field (escapes, another alphabet) by node's decoder.
  const start = base64Start(payload, from, to);
  const end = start === -1 ? -1 : payload.indexOf(QUOTE, start);
  if (end !== -1 && end < to) {
    out = Buffer.allocUnsafe(MAX_HEAD_BYTES + (((end - start) + 3) >> 2) * 3 + 2);
    eventEnd = decodedBase64(payload, start, end, out, MAX_HEAD_BYTES);
  }
  if (out === undefined || eventEnd === -1) {
    const base64 = base64Field(payload, from, to);
    out = Buffer.allocUnsafe(MAX_HEAD_BYTES + ((base64.length + 3) >> 2) * 3 + 2);
    eventEnd = MAX_HEAD_BYTES + out.write(base64, MAX_HEAD_BYTES, "base64");
  }
  const typeEnd = leadingTypeEnd(out, MAX_HEAD_BYTES, eventEnd);
  if (typeEnd !== -1 && !hasLineBreak(out, MAX_HEAD_BYTES, eventEnd)) {
    const head = sseHead(out, MAX_HEAD_BYTES + TYPE_PREFIX.length, typeEnd);
    const start = MAX_HEAD_BYTES - head.length;
    out.set(head, start);
    out[eventEnd] = LF;
    out[eventEnd + 1] = LF;
    return out.subarray(start, eventEnd + 2);
  }
  const parsed = parsedEvent(out.toString("utf8", MAX_HEAD_BYTES, eventEnd));
  return Buffer.from(`event: ${parsed.type}\ndata: ${JSON.stringify(parsed)}\n\n`);
}

/** Each byte's value as a standard base64 digit; -1 for a byte that is none. */
const BASE64_DIGITS = Int8Array.from({ length: 256 }, (_, byte) =>
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".indexOf(String.fromCharCode(byte)));
const PAD = 0x3d;

/** Decodes the standard, padded base64 in src[from, to) into out at `at`; where the decoded
 * bytes end, or -1 when the text is not that (a byte outside the alphabet, padding that is
 * not at the end, a length not a multiple of 4), for node's decoder to read instead. */
function decodedBase64(src: Buffer, from: number, to: number, out: Buffer, at: number): number {
  if ((to - from) % 4 !== 0) return -1;
  const pads = to > from && src[to - 1] === PAD ? (src[to - 2] === PAD ? 2 : 1) : 0;
  const whole = to - (pads === 0 ? 0 : 4);
  let o = at;
  for (let i = from; i < whole; i += 4) {
    // A byte outside the alphabet (-1) makes the group negative.
    const group = (BASE64_DIGITS[src[i]] << 18) | (BASE64_DIGITS[src[i + 1]] << 12) | (BASE64_DIGITS[src[i + 2]] << 6) | BASE64_DIGITS[src[i + 3]];
    if (group < 0) return -1;
    out[o] = group >> 16;
    out[o + 1] = group >> 8;
    out[o + 2] = group;
    o += 3;
  }
  if (pads === 0) return o;
  // The last group: two digits and "==" (one byte), or three and "=" (two bytes).
  const a = BASE64_DIGITS[src[whole]];
  const b = BASE64_DIGITS[src[whole + 1]];
  const c = pads === 1 ? BASE64_DIGITS[src[whole + 2]] : 0;
  if ((a | b | c) < 0) return -1;
  const group = (a << 18) | (b << 12) | (c << 6);
  out[o++] = group >> 16;
  if (pads === 1) out[o++] = group >> 8;
  return o;
}

const EMPTY = Buffer.alloc(0);
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BYTES_KEY = Buffer.from('"bytes":"');
const TYPE_PREFIX = Buffer.from('{"type":"');

/** Anthropic's stream event types, the most frequent first, each with its
 * `event: <type>\ndata: ` made once; another type's is made when met. */
const SSE_HEADS: readonly (readonly [type: Buffer, head: Buffer])[] = [
  "content_block_delta", "ping", "message_start", "content_block_start", "content_block_stop", "message_delta", "message_stop", "error",
].map((type) => [Buffer.from(type), Buffer.from(`event: ${type}\ndata: `)] as const);

/** The `event:` line and `data: ` for the type in bytes[from, to): matched byte by byte
 * (no string made for a known type). */
function sseHead(bytes: Buffer, from: number, to: number): Buffer {
  for (const [type, head] of SSE_HEADS) if (to - from === type.length && startsWith(bytes, from, type)) return head;
  return Buffer.from(`event: ${bytes.toString("latin1", from, to)}\ndata: `);
}

/** Room kept before a decoded event for its `event:` line: the longest type leadingType
 * takes is MAX_TYPE_CHARS. */
const MAX_TYPE_CHARS = 64;
const MAX_HEAD_BYTES = "event: \ndata: ".length + MAX_TYPE_CHARS;

/** A raw line break in bytes[from, to). */
function hasLineBreak(bytes: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] === LF || bytes[i] === CR) return true;
  return false;
}

/** Where the base64 text of a chunk payload `{"bytes":"…"}` in bytes[from, to) starts, by
 * its key (base64 has no quote, so the text ends at the next); -1 when the key is not there. */
function base64Start(bytes: Buffer, from: number, to: number): number {
  // Bedrock writes the key first: `{"bytes":"`, checked in place before it is searched for.
  const key = startsWith(bytes, from + 1, BYTES_KEY) ? from + 1 : bytes.indexOf(BYTES_KEY, from);
  return key !== -1 && key < to ? key + BYTES_KEY.length : -1;
}

/** The base64 text of a chunk payload `{"bytes":"…"}` in bytes[from, to) written otherwise
 * than plainly (escapes, another alphabet, another layout): from the parsed JSON. */
function base64Field(bytes: Buffer, from: number, to: number): string {
  let parsed: { bytes?: unknown };
  try {
    parsed = JSON.parse(bytes.toString("utf8", from, to)) as { bytes?: unknown };
  } catch {
    throw new CorruptFrame("a chunk event that is not JSON");
  }
  if (typeof parsed?.bytes !== "string") throw new CorruptFrame("a chunk event without bytes");
  return parsed.bytes;
}

/** Where the type of the event in bytes[from, to) ends (its closing quote) when the event
 * starts `{"type":"<a-z_>"` followed by `,` or `}` (at most MAX_TYPE_CHARS of them); -1
 * otherwise. */
function leadingTypeEnd(bytes: Buffer, from: number, to: number): number {
  if (to - from < TYPE_PREFIX.length + 3 || !startsWith(bytes, from, TYPE_PREFIX)) return -1;
  const typeAt = from + TYPE_PREFIX.length;
  let i = typeAt;
  while (i < to && ((bytes[i] >= 0x61 && bytes[i] <= 0x7a) || bytes[i] === 0x5f)) i++;
  if (i === typeAt || i - typeAt > MAX_TYPE_CHARS || i + 1 >= to || bytes[i] !== QUOTE || (bytes[i + 1] !== 0x2c && bytes[i + 1] !== 0x7d)) return -1;
  return i;
}

/** bytes hold `prefix` at `at` (compared in a loop: a few bytes). */
function startsWith(bytes: Buffer, at: number, prefix: Buffer): boolean {
  if (bytes.length - at < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** An event written otherwise, parsed; one that is not an Anthropic stream event (not
 * JSON, no type) is corrupt. */
function parsedEvent(text: string): { type: string } {
  let event: { type?: unknown };
  try {
    event = JSON.parse(text) as { type?: unknown };
  } catch {
    throw new CorruptFrame("a chunk event that is not JSON");
  }
  if (typeof event?.type !== "string" || !/^[a-z_]+$/.test(event.type)) throw new CorruptFrame("a chunk event that is not an Anthropic stream event");
  return event as { type: string };
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

export function frameHeader(headers: MessageHeaders, name: string): string | undefined {
  const value = headers[name];
  return value?.type === "string" ? value.value : undefined;
}
