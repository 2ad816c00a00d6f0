// Usage in a chat-completions stream: the chunk with a `usage` object (the last one when
// include_usage is set). When the gateway asked for it on the client's behalf, that
// usage-only chunk (no choices) is stripped on the way back.

import { SseUsageTap, textChars, type StreamEnds, type UsageReader } from "../usage-tap.js";
import type { Usage } from "../usage.js";
import { chatAnswerUsage } from "./usage.js";

/** Generated text fields of a chunk or completion. */
const textField = /"(?:content|arguments|reasoning_content|refusal)"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/** Characters of generated text in a chat-completions body or chunk (JSON-escaped length). */
export function generatedChars(json: string): number {
  return textChars(json, textField);
}

/** A reader for one chat-completions stream: the usage chunk's usage, and the service tier
 * it names (every chunk names it; the usage chunk is the one parsed). */
export function chatUsageReader(): UsageReader {
  let usage: Usage | undefined;
  return {
    mark: /"usage"\s*:\s*\{/,
    textField,
    take(data) {
      const chunk = data as { usage?: unknown; choices?: unknown[] };
      const read = chatAnswerUsage(chunk);
      if (!read) return false;
      usage = read;
      return Array.isArray(chunk.choices) && chunk.choices.length === 0;
    },
    usage: () => usage,
  };
}

/** A chat-completions stream ends with `data: [DONE]`; an upstream error mid-stream is a
 * data line with an `error` object. */
export const chatStreamEnds: StreamEnds = Object.freeze({
  terminal: /^data: ?\[DONE\]/m,
  failure: /^data: ?\{\s*"error"\s*:/m,
  lastUsage: /"choices"\s*:\s*\[\s*\]/,
});

/** The chat-completions tap; `strip` removes the usage-only chunk. */
export class ChatStreamTap extends SseUsageTap {
  constructor(strip: boolean) {
    super(chatUsageReader(), chatStreamEnds, strip);
  }
}
