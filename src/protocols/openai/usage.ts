// Reads OpenAI usage, once for every OpenAI API: chat-completions, responses, realtime and the
// media routes report the same counts under their own names. The input count includes cached
// (and cache-write) tokens and the output count includes reasoning; both are split out here.

import { tokenCount, type Usage } from "../usage.js";

/** Where one OpenAI API puts its usage counts: the names differ, the meaning does not. */
export interface UsageFields {
  /** All input tokens, cache reads and writes included. */
  readonly input: string;
  /** All output tokens, reasoning included. */
  readonly output: string;
  /** The object holding `cached_tokens` and `cache_write_tokens`. */
  readonly inputDetails: string;
  /** The object holding `reasoning_tokens`. */
  readonly outputDetails: string;
}

interface InputDetails {
  cached_tokens?: unknown;
  cache_write_tokens?: unknown;
}

interface OutputDetails {
  reasoning_tokens?: unknown;
}

/** The names chat-completions reports usage under. */
export const chatUsageFields: UsageFields = Object.freeze({
  input: "prompt_tokens", output: "completion_tokens",
  inputDetails: "prompt_tokens_details", outputDetails: "completion_tokens_details",
});

/** Normalises an OpenAI `usage` object whose counts go by `fields`; undefined when there is none. */
export function readOpenAIUsage(raw: unknown, fields: UsageFields): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as Readonly<Record<string, unknown>>;
  const inputDetails = u[fields.inputDetails] as InputDetails | null | undefined;
  const input = tokenCount(u[fields.input]);
  const cached = Math.min(tokenCount(inputDetails?.cached_tokens), input);
  // Cache writes (reported by newer models) are part of the input count too.
  const written = Math.min(tokenCount(inputDetails?.cache_write_tokens), input - cached);
  const output = tokenCount(u[fields.output]);
  const outputDetails = u[fields.outputDetails] as OutputDetails | null | undefined;
  return {
    input: input - cached - written,
    cacheRead: cached,
    cacheWrite: written,
    output,
    reasoning: Math.min(tokenCount(outputDetails?.reasoning_tokens), output),
  };
}

/** Normalises a chat-completions `usage` object; undefined when there is none. */
export function normalizeOpenAIUsage(raw: unknown): Usage | undefined {
  return readOpenAIUsage(raw, chatUsageFields);
}
