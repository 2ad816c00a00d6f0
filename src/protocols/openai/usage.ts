// Reads OpenAI usage, once for every OpenAI API: chat-completions, responses, realtime and the
// media routes report the same counts under their own names. The input count includes cached
// (and cache-write) tokens and the output count includes reasoning; both are split out here,
// and so are the audio and image tokens of each (priced apart), where the answer details them.

import { tokenCount, type Usage } from "../usage.js";

/** Where one OpenAI API puts its usage counts: the names differ, the meaning does not. */
export interface UsageFields {
  /** All input tokens, cache reads and writes included. */
  readonly input: string;
  /** All output tokens, reasoning included. */
  readonly output: string;
  /** The object holding `cached_tokens`, `cache_write_tokens`, `audio_tokens`,
   * `image_tokens` and `cached_tokens_details`. */
  readonly inputDetails: string;
  /** The object holding `reasoning_tokens`, `audio_tokens` and `image_tokens`. */
  readonly outputDetails: string;
}

/** Audio and image tokens of a total (text is the rest, never read). */
interface ModalityDetails {
  audio_tokens?: unknown;
  image_tokens?: unknown;
}

interface InputDetails extends ModalityDetails {
  cached_tokens?: unknown;
  cache_write_tokens?: unknown;
  /** Of `cached_tokens`, by modality (realtime). */
  cached_tokens_details?: ModalityDetails | null;
}

interface OutputDetails extends ModalityDetails {
  reasoning_tokens?: unknown;
}

/** The names chat-completions reports usage under. */
export const chatUsageFields: UsageFields = Object.freeze({
  input: "prompt_tokens", output: "completion_tokens",
  inputDetails: "prompt_tokens_details", outputDetails: "completion_tokens_details",
});

/**
 * Normalises an OpenAI `usage` object whose counts go by `fields`; undefined when there is
 * none. Audio and image input are the uncached ones (the cached ones a detail names come off:
 * cached audio is its own part, cached image tokens stay cache reads); audio and image output
 * are parts of output. A part is set only when the answer reports some.
 */
export function readOpenAIUsage(raw: unknown, fields: UsageFields): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as Readonly<Record<string, unknown>>;
  const inputDetails = u[fields.inputDetails] as InputDetails | null | undefined;
  const input = tokenCount(u[fields.input]);
  // DeepSeek reports its cache hits beside the input count (prompt_cache_hit_tokens, part
  // of prompt_tokens) rather than in the details: read where the details say nothing.
  const cached = Math.min(tokenCount(inputDetails?.cached_tokens ?? u.prompt_cache_hit_tokens), input);
  // Cache writes (reported by newer models) are part of the input count too.
  const written = Math.min(tokenCount(inputDetails?.cache_write_tokens), input - cached);
  const output = tokenCount(u[fields.output]);
  const outputDetails = u[fields.outputDetails] as OutputDetails | null | undefined;
  const usage: Usage = {
    input: input - cached - written,
    cacheRead: cached,
    cacheWrite: written,
    output,
    reasoning: Math.min(tokenCount(outputDetails?.reasoning_tokens), output),
  };
  if (inputDetails && typeof inputDetails === "object") inputParts(usage, inputDetails);
  if (outputDetails && typeof outputDetails === "object") outputParts(usage, outputDetails);
  return usage;
}

/** The audio and image parts of the input a details object names. */
function inputParts(usage: Usage, details: InputDetails): void {
  const cachedDetails = details.cached_tokens_details;
  const cachedAudio = Math.min(tokenCount(cachedDetails?.audio_tokens), usage.cacheRead);
  const cachedImage = tokenCount(cachedDetails?.image_tokens);
  const audio = tokenCount(details.audio_tokens) - cachedAudio;
  const image = tokenCount(details.image_tokens) - cachedImage;
  if (audio > 0) usage.audioInput = audio;
  if (image > 0) usage.imageInput = image;
  if (cachedAudio > 0) usage.audioCacheRead = cachedAudio;
}

/** The audio and image parts of the output a details object names. */
function outputParts(usage: Usage, details: OutputDetails): void {
  const audio = tokenCount(details.audio_tokens);
  const image = tokenCount(details.image_tokens);
  if (audio > 0) usage.audioOutput = audio;
  if (image > 0) usage.imageOutput = image;
}

/** `usage` with the service tier an answer names (`service_tier`: what served it), when it
 * names one; the same object. */
export function withServiceTier(usage: Usage | undefined, tier: unknown): Usage | undefined {
  if (usage && typeof tier === "string" && tier !== "") usage.serviceTier = tier;
  return usage;
}

/** Normalises a chat-completions `usage` object; undefined when there is none. */
export function normalizeOpenAIUsage(raw: unknown): Usage | undefined {
  return readOpenAIUsage(raw, chatUsageFields);
}

/** Usage of a whole ChatCompletion (or a stream chunk): its `usage` and the `service_tier`
 * that served it. */
export function chatAnswerUsage(json: unknown): Usage | undefined {
  if (!json || typeof json !== "object") return undefined;
  const answer = json as { usage?: unknown; service_tier?: unknown };
  return withServiceTier(normalizeOpenAIUsage(answer.usage), answer.service_tier);
}
