// Estimates for billing when exact usage is not known: the pre-deduction before a request
// (deliberately high: it must cover the worst case), the fallback charge when an
// upstream reports no usage (documented, and marked `estimated` in the usage log), and the
// input count the token-counting routes answer when no channel can count exactly.

import type { Block, CanonicalRequest } from "../protocols/canonical.js";
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

/** Tokens counted per image, whatever its size: about what Anthropic charges for a
 * full-size image (~1.15 megapixels); OpenAI and Gemini charge less, so counts err high. */
export const IMAGE_TOKENS = 1600;
/** Tokens added per message for its role and turn framing. */
export const MESSAGE_OVERHEAD_TOKENS = 3;

/** A local estimate of a request's input tokens, by modality. */
export interface InputEstimate {
  /** Text: system, messages, thinking, tool calls and results, tool definitions. */
  readonly text: number;
  /** Images, at IMAGE_TOKENS each. */
  readonly image: number;
}

/**
 * Input tokens of a canonical request, estimated without a tokenizer: its characters of
 * text (system, message text and thinking, tool calls as name and JSON arguments, tool
 * results, tool names, descriptions and JSON schemas) at BILL_CHARS_PER_TOKEN characters
 * a token, plus MESSAGE_OVERHEAD_TOKENS per message, plus IMAGE_TOKENS per image.
 */
export function estimateInputTokens(request: CanonicalRequest): InputEstimate {
  let chars = 0;
  let images = 0;
  const add = (blocks: readonly Block[]) => {
    for (const b of blocks) {
      switch (b.type) {
        case "text": chars += b.text.length; break;
        case "thinking": chars += b.text.length; break;
        case "image": images++; break;
        case "tool_use": chars += b.name.length + JSON.stringify(b.input).length; break;
        case "tool_result": add(b.content); break;
        case "redacted_thinking": break; // encrypted: its length says nothing of its tokens
      }
    }
  };
  add(request.system);
  for (const m of request.messages) add(m.content);
  for (const t of request.tools ?? []) chars += t.name.length + (t.description?.length ?? 0) + JSON.stringify(t.parameters).length;
  return {
    text: Math.ceil(chars / BILL_CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS * request.messages.length,
    image: IMAGE_TOKENS * images,
  };
}
