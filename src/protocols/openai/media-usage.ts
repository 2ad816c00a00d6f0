// Usage of the OpenAI media endpoints priced by tokens, read by the one OpenAI reader
// (usage.ts) under each endpoint's names, with what each endpoint's tokens are: a
// transcriber's input is audio (and its prompt text), a speech model's output is audio, an
// image model's output is image tokens.

import type { Usage } from "../usage.js";
import { responsesUsageFields } from "./responses-usage.js";
import { readOpenAIUsage, type UsageFields } from "./usage.js";

/** The names a transcription's token usage goes by (/v1/audio/transcriptions and realtime's
 * input transcription): details are singular, `input_token_details`. */
export const transcriptionUsageFields: UsageFields = Object.freeze({
  input: "input_tokens", output: "output_tokens",
  inputDetails: "input_token_details", outputDetails: "output_token_details",
});

/** A transcription's `usage` of type tokens: `input_token_details.audio_tokens` is audio
 * input, the rest (the prompt) text; the output is text. */
export function transcriptionUsage(raw: unknown): Usage | undefined {
  return readOpenAIUsage(raw, transcriptionUsageFields);
}

/** A speech model's usage (`speech.audio.done`): text in, audio out. Output details, when an
 * answer gives them, say which output is audio; without them all of it is. */
export function speechUsage(raw: unknown): Usage | undefined {
  const usage = readOpenAIUsage(raw, responsesUsageFields);
  if (usage && usage.audioOutput === undefined && !hasDetails(raw, responsesUsageFields.outputDetails) && usage.output > 0) {
    usage.audioOutput = usage.output;
  }
  return usage;
}

/** An image model's usage (gpt-image-1): `input_tokens_details` splits text and image
 * input; the output is image tokens, unless `output_tokens_details` says otherwise. */
export function imageUsage(raw: unknown): Usage | undefined {
  const usage = readOpenAIUsage(raw, responsesUsageFields);
  if (usage && usage.imageOutput === undefined && !hasDetails(raw, responsesUsageFields.outputDetails) && usage.output > 0) {
    usage.imageOutput = usage.output;
  }
  return usage;
}

/** Whether a usage object has a details object under `field`. */
function hasDetails(raw: unknown, field: string): boolean {
  const details = (raw as Record<string, unknown>)[field];
  return details !== null && typeof details === "object";
}
