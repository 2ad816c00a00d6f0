// Incremental Server-Sent Events splitting: feed bytes as they arrive, get whole events
// back. Events end at a blank line (LF, CRLF or CR line endings, per the SSE spec).

import { StringDecoder } from "node:string_decoder";

const boundary = /\r\n\r\n|\n\n|\r\r/g;

/**
 * Splits an SSE byte stream into raw events; holds the partial event between chunks. A
 * partial event is kept as the pieces that arrived, and only each new piece is scanned (with
 * the 3 characters before it, where a boundary may start), so an event of many megabytes
 * (an image) costs one pass, not a rescan of all of it per chunk. An event longer than
 * `maxEventChars` is not held: the splitter drops it, stops, and reports `overflowed`.
 */
export class SseSplitter {
  readonly maxEventChars: number;
  #decoder = new StringDecoder("utf8");
  /** Characters held in #pending. */
  #pendingChars = 0;
  #overflowed = false;
  /** The partial event's pieces, in order. */
  #pending: string[] = [];
  /** The last (up to) 3 characters of the partial event. */
  #seam = "";

  constructor(maxEventChars = Infinity) {
    this.maxEventChars = maxEventChars;
  }

  /** Whether an event passed maxEventChars: nothing more is split from then on. */
  get overflowed(): boolean {
    return this.#overflowed;
  }

  /** Feeds a chunk; returns the events it completed, each with its blank-line terminator
   * (none once an event was too long). */
  push(chunk: Buffer): string[] {
    if (this.#overflowed) return [];
    const piece = this.#decoder.write(chunk);
    const events: string[] = [];
    let start = 0;
    if (this.#pending.length > 0) {
      // Find the end of the pending event: a boundary in the new piece, or across the seam.
      const scan = this.#seam + piece;
      boundary.lastIndex = 0;
      const m = boundary.exec(scan);
      if (!m) return this.#hold(piece) ? events : this.#overflow(events);
      start = m.index + m[0].length - this.#seam.length;
      if (this.#pendingChars + start > this.maxEventChars) return this.#overflow(events);
      events.push(this.#pending.join("") + piece.slice(0, start));
      this.#pending = [];
      this.#pendingChars = 0;
      this.#seam = "";
    }
    boundary.lastIndex = start;
    for (let m = boundary.exec(piece); m; m = boundary.exec(piece)) {
      const end = m.index + m[0].length;
      if (end - start > this.maxEventChars) return this.#overflow(events);
      events.push(piece.slice(start, end));
      start = end;
    }
    if (start < piece.length && !this.#hold(start === 0 ? piece : piece.slice(start))) return this.#overflow(events);
    return events;
  }

  /** Holds a piece of the partial event; false when that makes it too long. */
  #hold(piece: string): boolean {
    this.#pendingChars += piece.length;
    if (this.#pendingChars > this.maxEventChars) return false;
    this.#pending.push(piece);
    this.#seam = (this.#seam + piece).slice(-3);
    return true;
  }

  /** Drops the partial event for good; returns the events completed before it. */
  #overflow(events: string[]): string[] {
    this.#overflowed = true;
    this.#pending = [];
    this.#pendingChars = 0;
    this.#seam = "";
    return events;
  }

  /** Whatever partial event is left at end of stream. */
  flush(): string {
    if (this.#overflowed) return "";
    const rest = this.#pending.join("") + this.#decoder.end();
    this.#pending = [];
    this.#pendingChars = 0;
    this.#seam = "";
    return rest;
  }
}

/** The joined `data:` lines of one raw event, or undefined when it has none. */
export function eventData(raw: string): string | undefined {
  let data: string | undefined;
  for (const line of raw.split(/\r\n|\n|\r/)) {
    if (!line.startsWith("data:")) continue;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    data = data === undefined ? value : data + "\n" + value;
  }
  return data;
}

/** An event's `event:` name and joined `data:`, or undefined when it has no data. Scans
 * with indexOf: this runs once per streamed event on converted streams. */
export function parseEvent(raw: string): { event?: string; data: string } | undefined {
  let event: string | undefined;
  let data: string | undefined;
  let start = 0;
  const newline = raw.includes("\n") ? "\n" : "\r"; // CR-only line endings are legal SSE too
  while (start < raw.length) {
    let end = raw.indexOf(newline, start);
    if (end === -1) end = raw.length;
    let line = raw.slice(start, end);
    start = end + 1;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.startsWith("data:")) {
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      data = data === undefined ? value : data + "\n" + value;
    } else if (line.startsWith("event:")) {
      event = line.slice(line.charCodeAt(6) === 32 ? 7 : 6);
    }
  }
  return data === undefined ? undefined : { event, data };
}
