// Incremental Server-Sent Events splitting: feed bytes as they arrive, get whole events
// back. Events end at a blank line (LF, CRLF or CR line endings, per the SSE spec).

import { StringDecoder } from "node:string_decoder";

const boundary = /\r\n\r\n|\n\n|\r\r/g;

/** Splits an SSE byte stream into raw events; holds the partial tail between chunks. */
export class SseSplitter {
  #decoder = new StringDecoder("utf8");
  #tail = "";

  /** Feeds a chunk; returns the events it completed, each with its blank-line terminator. */
  push(chunk: Buffer): string[] {
    const text = this.#tail + this.#decoder.write(chunk);
    const events: string[] = [];
    let start = 0;
    boundary.lastIndex = 0;
    for (let m = boundary.exec(text); m; m = boundary.exec(text)) {
      const end = m.index + m[0].length;
      events.push(text.slice(start, end));
      start = end;
    }
    this.#tail = text.slice(start);
    return events;
  }

  /** Whatever partial event is left at end of stream. */
  flush(): string {
    const rest = this.#tail + this.#decoder.end();
    this.#tail = "";
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
