// Estimates for billing when exact usage is not known: the pre-deduction before a request
// (deliberately high: it must cover the worst case) and the fallback charge when an
// upstream reports no usage (documented, and marked `estimated` in the usage log).

import type { Usage } from "../protocols/usage.js";

/**
 * Bytes per token assumed for input. Real text averages about 4 bytes per token in English
 * and 3 or fewer for CJK, so 3 over-estimates nearly everything, as a pre-deduction must.
 */
const RESERVE_BYTES_PER_TOKEN = 3;
/** Characters per token assumed when billing without reported usage (the common average). */
const BILL_CHARS_PER_TOKEN = 4;

/** The output-token cap a request asked for, under any protocol's field name. */
export function requestedMaxTokens(json: Record<string, unknown> | undefined): number | undefined {
  if (!json) return undefined;
  const config = json.generationConfig as Record<string, unknown> | undefined;
  for (const v of [json.max_completion_tokens, json.max_tokens, json.max_output_tokens, config?.maxOutputTokens]) {
    if (typeof v === "number" && Number.isFinite(v) && v > 0) return Math.floor(v);
  }
  return undefined;
}

/** Worst-case usage of a request: its whole body as uncached input, plus its output cap. */
export function reserveUsage(bodyBytes: number, maxOutputTokens: number): Usage {
  return {
    input: Math.ceil(bodyBytes / RESERVE_BYTES_PER_TOKEN),
    cacheRead: 0,
    cacheWrite: 0,
    output: maxOutputTokens,
    reasoning: 0,
  };
}

/** Usage billed when the upstream reported none: input from the request size, output from
 * the characters of generated text the gateway saw. */
export function fallbackUsage(bodyBytes: number, outputChars: number): Usage {
  return {
    input: Math.ceil(bodyBytes / BILL_CHARS_PER_TOKEN),
    cacheRead: 0,
    cacheWrite: 0,
    output: Math.ceil(outputChars / BILL_CHARS_PER_TOKEN),
    reasoning: 0,
  };
}
