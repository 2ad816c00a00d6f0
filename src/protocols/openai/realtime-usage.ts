// Usage of a realtime session, from the two server events that report it: `response.done`
// (OpenAI usage under realtime's names: details are singular, input_token_details) and
// `conversation.item.input_audio_transcription.completed` (a transcription model's tokens, in
// the usage object /v1/audio/transcriptions answers with, or for a duration-billed one the
// seconds of audio).

import { emptyUsage, type Usage } from "../usage.js";
import { transcriptionUsage } from "./media-usage.js";
import { readOpenAIUsage, type UsageFields } from "./usage.js";

/** The names realtime events report usage under: `input_token_details` splits text, audio
 * and image input and its `cached_tokens_details` the cached ones; `output_token_details`
 * text and audio output. */
export const realtimeUsageFields: UsageFields = Object.freeze({
  input: "input_tokens", output: "output_tokens",
  inputDetails: "input_token_details", outputDetails: "output_token_details",
});

type TranscriptionUsage =
  | { type?: "tokens"; input_tokens?: number; output_tokens?: number; input_token_details?: unknown }
  | { type: "duration"; seconds?: number };

/** What one event reported: tokens, and seconds of audio for duration-billed transcription. */
export interface ReportedUsage {
  readonly usage: Usage;
  readonly seconds: number;
}

/** The usage a usage-bearing event reports, or undefined when it carries none. */
export function reportedUsage(type: string, event: Record<string, unknown>): ReportedUsage | undefined {
  if (type === "response.done") {
    return tokensOnly(readOpenAIUsage((event.response as { usage?: unknown } | null | undefined)?.usage, realtimeUsageFields));
  }
  const u = event.usage as TranscriptionUsage | null | undefined;
  if (u?.type === "duration") {
    const seconds = typeof u.seconds === "number" && Number.isFinite(u.seconds) && u.seconds > 0 ? u.seconds : 0;
    return { usage: emptyUsage(), seconds };
  }
  // The same reader as the transcription route's (media-passthrough.ts).
  return tokensOnly(transcriptionUsage(u));
}

/** Token usage without seconds of audio; undefined when there is none. */
function tokensOnly(usage: Usage | undefined): ReportedUsage | undefined {
  return usage && { usage, seconds: 0 };
}
