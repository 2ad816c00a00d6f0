// Usage in a messages stream arrives in two parts: message_start carries the input and
// cache counts, message_delta the (cumulative) output count and sometimes updated inputs.

import { textChars, type StreamEnds, type UsageReader } from "../usage-tap.js";
import { mergeReportedUsage, normalizeAnthropicUsage } from "./usage.js";

/** Generated text fields of a messages body or stream event. */
export const anthropicTextField = /"(?:text|partial_json|thinking)"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/** Characters of generated text in a messages body (JSON-escaped length). */
export function anthropicGeneratedChars(json: string): number {
  return textChars(json, anthropicTextField);
}

/** A reader for one messages stream. */
export function anthropicUsageReader(): UsageReader {
  const merged: Record<string, unknown> = {};
  let seen = false;
  return {
    mark: /"usage"\s*:\s*\{/,
    textField: anthropicTextField,
    take(data) {
      const event = data as { message?: { usage?: Record<string, unknown> }; usage?: Record<string, unknown> };
      const usage = event.message?.usage ?? event.usage;
      if (!usage) return false;
      mergeReportedUsage(merged, usage);
      seen = true;
      return false;
    },
    usage: () => (seen ? normalizeAnthropicUsage(merged) : undefined),
  };
}

/** A messages stream ends with message_stop; an `error` event is the upstream's failure. */
export const anthropicStreamEnds: StreamEnds = Object.freeze({
  terminal: /^event: ?message_stop\s*$|^data: ?\{\s*"type"\s*:\s*"message_stop"/m,
  failure: /^event: ?error\s*$|^data: ?\{\s*"type"\s*:\s*"error"/m,
  lastUsage: /^event: ?message_delta\s*$|^data: ?\{\s*"type"\s*:\s*"message_delta"/m,
});
