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
  /** The id the provider gave the answer, read from the events taken (responses). */
  answerId?(): string | undefined;
}

/** How a protocol's stream ends, tested on an event's raw text. */
export interface StreamEnds {
  /** The last event of a whole answer ([DONE], message_stop, a finishReason, …). */
  readonly terminal: RegExp;
  /** An error the upstream reports in the stream; it ends the stream too. */
  readonly failure: RegExp;
  /** The event with the final usage, just before the terminal one (chat-completions' usage
   * chunk, messages' message_delta): held back with the terminal event, so settlement can
   * show the cost in it. Tested only on events that carry usage. */
  readonly lastUsage?: RegExp;
}

/** How a tapped stream ended, as far as its events tell. */
export type TapEnding = "terminal" | "failure" | "undecodable" | "oversized" | undefined;

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

/** What an event carries: no data (a comment, a keep-alive, the [DONE] marker), data that
 * does not decode (UNDECODABLE), or its data: parsed when `parse`, else the raw text. */
const NO_DATA = Symbol("no data");
const UNDECODABLE = Symbol("undecodable");

function dataOf(raw: string, parse: boolean): unknown {
  const data = singleDataLine(raw) ?? parseEvent(raw)?.data;
  if (data === undefined) return NO_DATA;
  if (data === "[DONE]" || data.trim() === "[DONE]") return NO_DATA;
  if (!parse) return wellFormed(data) ? data : UNDECODABLE;
  try {
    return JSON.parse(data);
  } catch {
    return UNDECODABLE;
  }
}

/** The data of an event with exactly one `data:` line, its last line (the common shape
 * of every protocol here), read without splitting the event; undefined otherwise. */
function singleDataLine(raw: string): string | undefined {
  const at = raw.startsWith("data:") ? 0 : raw.indexOf("\ndata:") + 1;
  if (at === 0 && !raw.startsWith("data:")) return undefined;
  let start = at + 5;
  if (raw.charCodeAt(start) === 0x20) start++;
  const end = raw.indexOf("\n", start);
  // Only a line ending the event: "\n\n" (or "\r\n\r\n" / "\r\r": left to parseEvent).
  if (end === -1 || end + 2 !== raw.length || raw.charCodeAt(end + 1) !== 0x0a || raw.charCodeAt(end - 1) === 0x0d) return undefined;
  return raw.slice(start, end);
}

/** A bare JSON value: a literal or a number. */
const bareValue = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)$/;

/**
 * Whether `text` is a JSON object or array in structure: its brackets and braces pair up
 * outside strings, every bare value is a literal or a number, and nothing follows the last
 * bracket. A cut, garbled or interleaved event fails it; a misplaced comma or colon does
 * not. A scan, not a parse: most events of a stream passing through are never parsed.
 */
export function wellFormed(text: string): boolean {
  const closers: number[] = [];
  let i = 0;
  const n = text.length;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  const first = text.charCodeAt(i);
  if (first !== 0x7b && first !== 0x5b) return false;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (isBare(c)) {
      const start = i;
      while (i + 1 < n && isBare(text.charCodeAt(i + 1))) i++;
      if (!bareValue.test(text.slice(start, i + 1))) return false;
    } else if (c === 0x22) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      if (i >= n) return false; // an unterminated string
    } else if (c === 0x7b) closers.push(0x7d);
    else if (c === 0x5b) closers.push(0x5d);
    else if (c === 0x7d || c === 0x5d) {
      if (closers.pop() !== c) return false;
      if (closers.length === 0) {
        for (i++; i < n; i++) if (!isSpace(text.charCodeAt(i))) return false;
        return true;
      }
    } else if (c !== 0x3a && c !== 0x2c && !isSpace(c)) {
      return false; // anything else outside a string is no JSON
    }
  }
  return false;
}

/** Characters of a literal or a number: letters, digits, '.', '+', '-'. */
function isBare(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2b || c === 0x2d || c === 0x45;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export class SseUsageTap {
  readonly #reader: UsageReader;
  readonly #ends: StreamEnds;
  readonly #strip: boolean;
  #splitter = new SseSplitter();
  /** The terminal (or failure) event and anything after it, held for release. */
  #held: string | undefined;
  /** A final-usage event (StreamEnds.lastUsage) waiting to see what follows it: the
   * terminal event takes it into the held tail; any other event sends it on first. */
  #pending = "";
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

  /** Bounds one event (server.max_event_size): a longer one ends the stream ("oversized")
   * without being held. Call before the first push. */
  limitEventSize(maxChars: number): void {
    this.#splitter = new SseSplitter(maxChars);
  }

  /** The usage the stream reported, if any. */
  get usage(): Usage | undefined {
    return this.#reader.usage();
  }

  /** The id the provider gave the answer, when the protocol names one. */
  get answerId(): string | undefined {
    return this.#reader.answerId?.();
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
    if (this.#splitter.overflowed && this.#ending === undefined) this.#ending = "oversized";
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

  /** Whole events held back that no end took (the stream did not end whole): they go out
   * before the error event that ends it. */
  get unsent(): string {
    return this.#held === undefined ? this.#pending : "";
  }

  /** One event: what to relay of it now ("" when held, stripped or undecodable). */
  #take(event: string): string {
    // An event that does not decode ends the stream (the client is told, not handed it).
    // Events carrying usage are parsed (and read); the others only checked for shape.
    const usage = this.#reader.mark.test(event);
    const data = dataOf(event, usage);
    if (data === UNDECODABLE) {
      this.#ending = "undecodable";
      return "";
    }
    const strip = this.#inspect(event, usage ? data : NO_DATA) && this.#strip;
    if (this.#ends.terminal.test(event)) {
      this.#ending = "terminal";
      this.#held = this.#pending + (strip ? "" : event);
      return "";
    }
    if (this.#ends.failure.test(event)) {
      this.#ending = "failure";
      this.#held = this.#pending + event;
      return "";
    }
    if (strip) return "";
    this.relayed++;
    // The final usage waits for the terminal event; a comment or keep-alive waits with it.
    if ((usage && this.#ends.lastUsage?.test(event)) || (data === NO_DATA && this.#pending !== "")) {
      this.#pending += event;
      return "";
    }
    if (this.#pending === "") return event;
    const out = this.#pending + event;
    this.#pending = "";
    return out;
  }

  /** Reads one event; true when it is usage-only (strippable). */
  #inspect(event: string, data: unknown): boolean {
    // Text is counted in usage-bearing events too: every generate-content chunk carries its
    // running usageMetadata beside the text, and a stream cut short is billed by this count.
    this.outputChars += textChars(event, this.#reader.textField);
    if (data === NO_DATA || data === null || typeof data !== "object") return false;
    return this.#reader.take(data);
  }
}
