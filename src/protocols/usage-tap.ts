// Taps an SSE stream passing through untouched, for any protocol: it reads usage as events
// go by, relays whole events only (so an error event the gateway adds can never land inside
// a half-sent one), holds back the protocol's terminal event until the charge is committed,
// and stops at an event whose data does not decode. A reader supplies the protocol's
// knowledge.

import { parseEvent, SseSplitter } from "./sse.js";
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

/** How a protocol's stream ends, tested on an event's raw text. */
export interface StreamEnds {
  /** The last event of a whole answer ([DONE], message_stop, a finishReason, …). */
  readonly terminal: RegExp;
  /** An error the upstream reports in the stream; it ends the stream too. */
  readonly failure: RegExp;
}

/** How a tapped stream ended, as far as its events tell. */
export type TapEnding = "terminal" | "failure" | "undecodable" | undefined;

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

/** What an event carries: no data (a comment, a keep-alive), the [DONE] marker, its data
 * parsed, or data that does not decode (UNDECODABLE). */
const NO_DATA = Symbol("no data");
const UNDECODABLE = Symbol("undecodable");

function dataOf(raw: string): unknown {
  const event = parseEvent(raw);
  if (event === undefined) return NO_DATA;
  if (event.data === "[DONE]" || event.data.trim() === "[DONE]") return NO_DATA;
  try {
    return JSON.parse(event.data);
  } catch {
    return UNDECODABLE;
  }
}

export class SseUsageTap {
  readonly #reader: UsageReader;
  readonly #ends: StreamEnds;
  readonly #strip: boolean;
  readonly #splitter = new SseSplitter();
  /** The terminal (or failure) event and anything after it, held for release. */
  #held: string | undefined;
  #ending: TapEnding;
  /** Characters of generated text seen (JSON-escaped length: close enough for an estimate). */
  outputChars = 0;
  /** Events relayed so far (the responses protocol numbers its events). */
  relayed = 0;

  /** @param strip remove usage-only events from what is relayed */
  constructor(reader: UsageReader, ends: StreamEnds, strip = false) {
    this.#reader = reader;
    this.#ends = ends;
    this.#strip = strip;
  }

  /** The usage the stream reported, if any. */
  get usage(): Usage | undefined {
    return this.#reader.usage();
  }

  /** How the stream has ended so far: undefined while it is still open. */
  get ending(): TapEnding {
    return this.#ending;
  }

  /** Returns the whole events of this chunk to relay now (not the terminal one, nor what
   * follows it, nor anything once an event failed to decode). */
  push(chunk: Buffer): string {
    let out = "";
    for (const event of this.#splitter.push(chunk)) {
      if (this.#ending !== undefined) {
        if (this.#held !== undefined) this.#held += event;
        continue;
      }
      out += this.#take(event);
    }
    return out;
  }

  /** Call at end of stream: the held tail (the terminal event and after), with a partial
   * last event kept only when it completes the answer. */
  end(): string {
    const rest = this.#splitter.flush();
    if (rest.trim() !== "") {
      const event = /\n\n$|\r\n\r\n$|\r\r$/.test(rest) ? rest : rest.replace(/(\r\n|\r|\n)?$/, "\n\n");
      // A last event without its blank line counts only if it ends the answer (#take holds it).
      if (this.#ending === undefined) this.#take(event);
      else if (this.#held !== undefined) this.#held += event;
    }
    return this.#held ?? "";
  }

  /** One event: what to relay of it now ("" when held, stripped or undecodable). */
  #take(event: string): string {
    // Every event is parsed once: one that does not decode ends the stream (the client is
    // told, not handed it), and usage is read from the same parse.
    const data = dataOf(event);
    if (data === UNDECODABLE) {
      this.#ending = "undecodable";
      return "";
    }
    const strip = this.#inspect(event, data) && this.#strip;
    if (this.#ends.terminal.test(event)) {
      this.#ending = "terminal";
      this.#held = strip ? "" : event;
      return "";
    }
    if (this.#ends.failure.test(event)) {
      this.#ending = "failure";
      this.#held = event;
      return "";
    }
    if (strip) return "";
    this.relayed++;
    return event;
  }

  /** Reads one event; true when it is usage-only (strippable). */
  #inspect(event: string, data: unknown): boolean {
    // Text is counted in usage-bearing events too: every generate-content chunk carries its
    // running usageMetadata beside the text, and a stream cut short is billed by this count.
    this.outputChars += textChars(event, this.#reader.textField);
    if (data === NO_DATA || data === null || typeof data !== "object" || !this.#reader.mark.test(event)) return false;
    return this.#reader.take(data);
  }
}
