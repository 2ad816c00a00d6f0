// Usage of a realtime session, from the two server events that report it: `response.done`
// (input_tokens include cached ones; details are singular: input_token_details) and
// `conversation.item.input_audio_transcription.completed` (a transcription model's tokens,
// or for a duration-billed one the seconds of audio).

import { emptyUsage, tokenCount, type Usage } from "../usage.js";

interface ResponseUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_token_details?: { cached_tokens?: number } | null;
}

type TranscriptionUsage =
  | { type?: "tokens"; input_tokens?: number; output_tokens?: number }
  | { type: "duration"; seconds?: number };

/** What one event reported: tokens, and seconds of audio for duration-billed transcription. */
export interface ReportedUsage {
  readonly usage: Usage;
  readonly seconds: number;
}

/** Adds one `response.done` event's usage to `total`; false when the event has none. */
export function addRealtimeUsage(total: Usage, event: unknown): boolean {
  const u = (event as { response?: { usage?: ResponseUsage } } | null)?.response?.usage;
  if (!u || typeof u !== "object") return false;
  const input = tokenCount(u.input_tokens);
  const cached = Math.min(tokenCount(u.input_token_details?.cached_tokens), input);
  total.input += input - cached;
  total.cacheRead += cached;
  total.output += tokenCount(u.output_tokens);
  return true;
}

/** The usage a usage-bearing event reports, or undefined when it carries none. */
export function reportedUsage(type: string, event: Record<string, unknown>): ReportedUsage | undefined {
  if (type === "response.done") {
    const usage = emptyUsage();
    return addRealtimeUsage(usage, event) ? { usage, seconds: 0 } : undefined;
  }
  const u = event.usage as TranscriptionUsage | undefined;
  if (!u || typeof u !== "object") return undefined;
  if (u.type === "duration") {
    const seconds = typeof u.seconds === "number" && Number.isFinite(u.seconds) && u.seconds > 0 ? u.seconds : 0;
    return { usage: emptyUsage(), seconds };
  }
  const usage = emptyUsage();
  usage.input = tokenCount(u.input_tokens);
  usage.output = tokenCount(u.output_tokens);
  return { usage, seconds: 0 };
}
