// Usage in a generate-content stream: every chunk may carry `usageMetadata`, each a
// running total; the last one counts.

import { textChars, type StreamEnds, type UsageReader } from "../usage-tap.js";
import type { Usage } from "../usage.js";
import { GroundingCount, normalizeGeminiUsage, withGrounding } from "./usage.js";

/** Generated text fields of a generate-content body or chunk. */
export const geminiTextField = /"text"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/** Characters of generated text in a generate-content body (JSON-escaped length). */
export function geminiGeneratedChars(json: string): number {
  return textChars(json, geminiTextField);
}

/** A reader for one generate-content stream: the last usageMetadata, and the grounding
 * searches of every chunk. */
export function geminiUsageReader(): UsageReader {
  let usage: Usage | undefined;
  const grounding = new GroundingCount();
  return {
    mark: /"(?:usageMetadata|groundingMetadata)"\s*:\s*\{/,
    textField: geminiTextField,
    take(data) {
      usage = normalizeGeminiUsage((data as { usageMetadata?: unknown }).usageMetadata) ?? usage;
      grounding.take(data);
      return false;
    },
    usage: () => withGrounding(usage, grounding),
  };
}

/** A generate-content stream has no end event: its last chunk carries a finishReason. An
 * upstream failure mid-stream is a chunk with an `error` object. */
export const geminiStreamEnds: StreamEnds = Object.freeze({
  terminal: /"finishReason"\s*:\s*"/,
  failure: /^data: ?\{\s*"error"\s*:/m,
});
