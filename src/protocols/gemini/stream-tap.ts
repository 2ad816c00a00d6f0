// Usage in a generate-content stream: every chunk may carry `usageMetadata`, each a
// running total; the last one counts.

import { lastUsageReader, textChars, type StreamEnds, type UsageReader } from "../usage-tap.js";
import { normalizeGeminiUsage } from "./usage.js";

/** Generated text fields of a generate-content body or chunk. */
export const geminiTextField = /"text"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/** Characters of generated text in a generate-content body (JSON-escaped length). */
export function geminiGeneratedChars(json: string): number {
  return textChars(json, geminiTextField);
}

/** A reader for one generate-content stream. */
export function geminiUsageReader(): UsageReader {
  return lastUsageReader(/"usageMetadata"\s*:\s*\{/, geminiTextField,
    (data) => normalizeGeminiUsage((data as { usageMetadata?: unknown }).usageMetadata));
}

/** A generate-content stream has no end event: its last chunk carries a finishReason. An
 * upstream failure mid-stream is a chunk with an `error` object. */
export const geminiStreamEnds: StreamEnds = Object.freeze({
  terminal: /"finishReason"\s*:\s*"/,
  failure: /^data: ?\{\s*"error"\s*:/m,
});
