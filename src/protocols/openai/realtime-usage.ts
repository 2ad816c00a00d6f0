// Usage of a realtime session, from the two server events that report it: `response.done`
// (the usage of every OpenAI API under realtime's names: input_tokens include cached ones,
// details are singular, input_token_details) and
// `conversation.item.input_audio_transcription.completed` (a transcription model's tokens,
// or for a duration-billed one the seconds of audio).

import { emptyUsage, type Usage } from "../usage.js";
import { readOpenAIUsage, type UsageFields } from "./usage.js";

/** The names realtime events report usage under. */
export const realtimeUsageFields: UsageFields = Object.freeze({
  input: "input_tokens", output: "output_tokens",
  inputDetails: "input_token_details", outputDetails: "output_token_details",
});

type TranscriptionUsage =
  | { type?: "tokens"; input_tokens?: number; output_tokens?: number }
  | { type: "duration"; seconds?: number };

/** What one event reported: tokens, and seconds of audio for duration-billed transcription. */
export interface ReportedUsage {
  readonly usage: Usage;
  readonly seconds: number;
}

/** The usage a usage-bearing event reports, or undefined when it carries none. */
export function reportedUsage(type: string, event: Record<string, unknown>): ReportedUsage | undefined {
  if (type === "response.done") return reportedTokens((event.response as { usage?: unknown } | null | undefined)?.usage);
  const u = event.usage as TranscriptionUsage | null | undefined;
  if (u?.type === "duration") {
    const seconds = typeof u.seconds === "number" && Number.isFinite(u.seconds) && u.seconds > 0 ? u.seconds : 0;
    return { usage: emptyUsage(), seconds };
  }
  return reportedTokens(u);
}

/** A usage object's tokens (no seconds), or undefined when there is none. */
function reportedTokens(raw: unknown): ReportedUsage | undefined {
  const usage = readOpenAIUsage(raw, realtimeUsageFields);
  return usage && { usage, seconds: 0 };
}
