// The common frame of an InvokeModel stream, read without building a message: a frame of
// :message-type "event" and :event-type "chunk" whose payload is `{"bytes":"<base64>"}`.
// Both CRC32s are checked: the prelude's 8 bytes by a table here (a native call and a view
// cost more than the sum), the message by node:zlib's crc32 (the function the AWS SDK's
// codec uses on Node); then the header block is walked for those two names, skipping the
// others by their encoded sizes. Any other frame (an exception, an error, another event)
// is left to the AWS SDK's codec, which builds the whole message. This path exists for
// cost: the codec makes a view, an object and two strings per header, and a Claude stream
// is a few dozen small frames (bench/kinds.ts). test/unit/bedrock-chunk-frame.test.ts
// holds it to the codec on frames the codec encodes, corrupt ones included.

import zlib from "node:zlib";
import { CorruptFrame } from "./corrupt-frame.js";

/** node:zlib's crc32 (Node 20.15 and later); without it every frame goes to the codec. */
const crc32 = (zlib as unknown as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** CRC-32 (IEEE, reflected, as zlib's) by byte: the table for 8 bytes of prelude. */
const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

/** The CRC-32 of the prelude's first 8 bytes (the lengths), unsigned. */
function preludeCrc(bytes: Buffer): number {
  let c = -1;
  for (let i = 0; i < 8; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** The prelude: total length, headers length, prelude CRC. */
const PRELUDE_BYTES = 12;

/** Header value types (the event-stream encoding) and the bytes of the fixed-size ones. */
const TYPE_BYTE_ARRAY = 6;
const TYPE_STRING = 7;
const FIXED_VALUE_BYTES: readonly number[] = [0, 0, 1, 2, 4, 8, -1, -1, 8, 16];

const MESSAGE_TYPE = Buffer.from(":message-type");
const EVENT_TYPE = Buffer.from(":event-type");
const EVENT = Buffer.from("event");
const CHUNK = Buffer.from("chunk");

/** chunkPayloadAt's answer for a frame that is not a chunk event. */
export const NOT_A_CHUNK = -1;

/** Where the payload of the frame of `length` bytes at the start of `bytes` begins (it ends
 * 4 bytes before the frame does) when the frame is a chunk event; NOT_A_CHUNK for another
 * frame, for the codec. Throws CorruptFrame when a checksum does not match or the headers
 * overrun the frame. The caller checked that `bytes` hold the frame and that its length is
 * in bounds. An offset, not a view or an object: nothing is allocated for the answer. */
export function chunkPayloadAt(bytes: Buffer, length: number): number {
  if (crc32 === undefined) return NOT_A_CHUNK;
  // The prelude's checksum first: it vouches for the lengths.
  if (preludeCrc(bytes) !== bytes.readUInt32BE(8)) throw new CorruptFrame("event-stream prelude checksum does not match");
  const headersEnd = PRELUDE_BYTES + bytes.readUInt32BE(4);
  if (headersEnd > length - 4) throw new CorruptFrame(`event-stream frame of ${length} bytes with ${headersEnd - PRELUDE_BYTES} bytes of headers`);
  if (crc32(bytes.subarray(0, length - 4)) !== bytes.readUInt32BE(length - 4)) throw new CorruptFrame("event-stream message checksum does not match");
  let isEvent = false;
  let isChunk = false;
  let at = PRELUDE_BYTES;
  while (at < headersEnd) {
    const nameAt = at + 1;
    const nameEnd = nameAt + bytes[at];
    if (nameEnd >= headersEnd) return NOT_A_CHUNK; // the codec says what is wrong with it
    const type = bytes[nameEnd];
    at = nameEnd + 1;
    if (type === TYPE_STRING || type === TYPE_BYTE_ARRAY) {
      if (at + 2 > headersEnd) return NOT_A_CHUNK;
      const valueAt = at + 2;
      at = valueAt + bytes.readUInt16BE(at);
      if (type !== TYPE_STRING) continue;
      if (named(bytes, nameAt, nameEnd, MESSAGE_TYPE)) isEvent = named(bytes, valueAt, at, EVENT);
      else if (named(bytes, nameAt, nameEnd, EVENT_TYPE)) isChunk = named(bytes, valueAt, at, CHUNK);
    } else {
      const size = FIXED_VALUE_BYTES[type];
      if (size === undefined || size < 0) return NOT_A_CHUNK;
      at += size;
    }
  }
  return at === headersEnd && isEvent && isChunk ? headersEnd : NOT_A_CHUNK;
}

/** bytes[from, to) are `name`'s: compared in a loop, which for a few bytes costs less
 * than Buffer.compare's checks and call. */
function named(bytes: Buffer, from: number, to: number, name: Buffer): boolean {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (bytes[from + i] !== name[i]) return false;
  return true;
}
