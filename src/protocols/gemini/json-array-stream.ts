// Google's other stream framing: `:streamGenerateContent` without `alt=sse` answers one JSON
// array whose elements arrive as they are generated (`[{…}` then `\n,\r\n{…}` per chunk, then
// `]`). The gateway always asks upstream for SSE (its tap reads usage there) and, for a client
// that asked for the array, renders each whole event's data as the next element as it goes.

import type { StreamFraming } from "../stream-framing.js";
import { parseEvent } from "../sse.js";
import { clientWantsSse } from "./query.js";

const eventEnd = /\r\n\r\n|\n\n|\r\r/g;

/** A JSON-array framing for one stream. */
export function jsonArrayFraming(): StreamFraming {
  let opened = false;
  const elements = (sse: string): string => {
    let out = "";
    let start = 0;
    eventEnd.lastIndex = 0;
    for (let m = eventEnd.exec(sse); m; m = eventEnd.exec(sse)) {
      const end = m.index + m[0].length;
      out += element(sse.slice(start, end));
      start = end;
    }
    if (start < sse.length) out += element(sse.slice(start));
    return out;
  };
  const element = (event: string): string => {
    const data = parseEvent(event)?.data;
    if (data === undefined || data.trim() === "") return ""; // a comment or keep-alive
    const sep = opened ? "\n,\r\n" : "[";
    opened = true;
    return sep + data;
  };
  return {
    contentType: "application/json; charset=UTF-8",
    events: elements,
    end: (sse) => {
      const last = elements(sse);
      return (opened ? last : "[") + "]";
    },
  };
}

/** A generate-content stream's framing for a client's query: none (SSE) with `alt=sse`, the
 * JSON array without it. */
export function generateStreamFraming(query: string): StreamFraming | undefined {
  return clientWantsSse(query) ? undefined : jsonArrayFraming();
}
