// Taps an SSE stream for usage as it passes, for any protocol: a reader says which events
// carry usage and how to read them. Bytes pass unchanged unless the tap strips events the
// gateway added (chat-completions' usage chunk the client did not ask for).

import { eventData, SseSplitter } from "./sse.js";
import type { Usage } from "./usage.js";

/** Protocol knowledge the tap needs. Stateful readers are created per stream. */
export interface UsageReader {
  /** Cheap test on an event's raw text: only matching events are parsed. */
  readonly mark: RegExp;
  /** Reads an event's parsed data; returns true when the event is usage-only (strippable). */
  take(data: unknown): boolean;
  /** The usage read so far, or undefined when the stream reported none. */
  usage(): Usage | undefined;
  /** Generated text fields (first capture group: the JSON-escaped text), for estimates. */
  readonly textField: RegExp;
}

/** A reader for protocols whose events carry running usage totals: the last one counts. */
export function lastUsageReader(mark: RegExp, textField: RegExp, read: (data: unknown) => Usage | undefined): UsageReader {
  let usage: Usage | undefined;
  return {
    mark,
    textField,
    take(data) {
      usage = read(data) ?? usage;
      return false;
    },
    usage: () => usage,
  };
}

/** Characters matched by a reader's text field regex in some JSON text. */
export function textChars(json: string, field: RegExp): number {
  let n = 0;
  for (const m of json.matchAll(field)) n += m[1].length;
  return n;
}

export class SseUsageTap {
  readonly #reader: UsageReader;
  readonly #strip: boolean;
  readonly #splitter = new SseSplitter();
  /** Characters of generated text seen (JSON-escaped length: close enough for an estimate). */
  outputChars = 0;

  /** @param strip remove usage-only events from what is relayed */
  constructor(reader: UsageReader, strip = false) {
    this.#reader = reader;
    this.#strip = strip;
  }

  /** The usage the stream reported, if any. */
  get usage(): Usage | undefined {
    return this.#reader.usage();
  }

  /** Returns what to relay for this upstream chunk: the chunk itself, or (stripping) whole events. */
  push(chunk: Buffer): Buffer | string {
    const events = this.#splitter.push(chunk);
    if (!this.#strip) {
      for (const event of events) this.#inspect(event);
      return chunk;
    }
    let out = "";
    for (const event of events) if (!this.#inspect(event)) out += event;
    return out;
  }

  /** Call at end of stream; returns any trailing bytes to relay (stripping mode only). */
  end(): string {
    const rest = this.#splitter.flush();
    if (rest) this.#inspect(rest);
    return this.#strip ? rest : "";
  }

  /** Reads one event; true when it is usage-only and should be stripped. */
  #inspect(event: string): boolean {
    if (!this.#reader.mark.test(event)) {
      this.outputChars += textChars(event, this.#reader.textField);
      return false;
    }
    const data = eventData(event);
    if (!data) return false;
    try {
      return this.#reader.take(JSON.parse(data));
    } catch {
      return false;
    }
  }
}
