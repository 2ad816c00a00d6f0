// Taps a chat-completions SSE stream for usage as it passes. When the gateway added
// `stream_options.include_usage` on the client's behalf, it also removes the usage-only
// chunk the client did not ask for.

import { eventData, SseSplitter } from "../sse.js";
import type { Usage } from "../usage.js";
import { normalizeOpenAIUsage } from "./usage.js";

const usageObject = /"usage"\s*:\s*\{/;
/** Generated text fields of a chunk; their length feeds the estimate when usage is missing. */
const textField = /"(?:content|arguments|reasoning_content|refusal)"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/** Characters of generated text in a chat-completions body or chunk (JSON-escaped length). */
export function generatedChars(json: string): number {
  let n = 0;
  for (const m of json.matchAll(textField)) n += m[1].length;
  return n;
}

export class ChatStreamTap {
  readonly #strip: boolean;
  readonly #splitter = new SseSplitter();
  /** The last usage the stream reported. */
  usage?: Usage;
  /** Characters of generated text seen (JSON-escaped length: close enough for an estimate). */
  outputChars = 0;

  /** @param strip remove usage-only chunks from what is relayed */
  constructor(strip: boolean) {
    this.#strip = strip;
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

  /** Reads usage from an event; true when it is a usage-only chunk (no choices). */
  #inspect(event: string): boolean {
    if (!usageObject.test(event)) {
      this.outputChars += generatedChars(event);
      return false;
    }
    const data = eventData(event);
    if (!data) return false;
    try {
      const chunk = JSON.parse(data) as { usage?: unknown; choices?: unknown[] };
      const usage = normalizeOpenAIUsage(chunk.usage);
      if (!usage) return false;
      this.usage = usage;
      return Array.isArray(chunk.choices) && chunk.choices.length === 0;
    } catch {
      return false;
    }
  }
}
