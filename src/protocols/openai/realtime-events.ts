// Realtime events as the relay meters them: each frame's `type` read from its first bytes
// (the events of the OpenAI SDKs and of the API itself begin with it), so an audio frame of
// megabytes is never decoded; and the protocol's `error` event for the gateway's own errors.

import type { GatewayError } from "../../errors/gateway-error.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const TYPE_KEY = Buffer.from('"type"');

/**
 * The event's top-level `type`: read from the head when the frame starts with it (the
 * common case: no decoding), else from the decoded frame. Undefined for a frame that is not
 * a JSON object with a string `type`. A frame whose first key is not `type` is decoded
 * whatever its size: what it hides is read, never guessed.
 */
export function eventType(frame: Buffer): string | undefined {
  const head = typeFromHead(frame);
  if (head !== undefined) return head;
  try {
    const type = (JSON.parse(frame.toString("utf8")) as { type?: unknown } | null)?.type;
    return typeof type === "string" ? type : undefined;
  } catch {
    return undefined;
  }
}

/** `{ "type" : "<name>"` at the start of the frame (no escapes in the name), else undefined. */
function typeFromHead(frame: Buffer): string | undefined {
  let i = skipSpace(frame, 0);
  if (frame[i] !== 0x7b) return undefined; // {
  i = skipSpace(frame, i + 1);
  if (frame.compare(TYPE_KEY, 0, TYPE_KEY.length, i, i + TYPE_KEY.length) !== 0) return undefined;
  i = skipSpace(frame, i + TYPE_KEY.length);
  if (frame[i] !== 0x3a) return undefined; // :
  i = skipSpace(frame, i + 1);
  if (frame[i] !== QUOTE) return undefined;
  const start = i + 1;
  const end = frame.indexOf(QUOTE, start);
  if (end === -1 || end - start > 128) return undefined;
  if (frame.subarray(start, end).includes(BACKSLASH)) return undefined;
  return frame.toString("latin1", start, end);
}

function skipSpace(frame: Buffer, i: number): number {
  while (i < frame.length && (frame[i] === 0x20 || frame[i] === 0x0a || frame[i] === 0x0d || frame[i] === 0x09)) i++;
  return i;
}

/** The decoded event, or undefined when the frame is not a JSON object. */
export function decodeEvent(frame: Buffer): Record<string, unknown> | undefined {
  try {
    const event = JSON.parse(frame.toString("utf8")) as unknown;
    return event !== null && typeof event === "object" && !Array.isArray(event) ? event as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

/** The realtime API's `error` server event for a gateway error (the SDKs raise it as one). */
export function renderRealtimeError(err: GatewayError): string {
  return JSON.stringify({
    type: "error",
    event_id: `event_gw_${Date.now().toString(36)}`,
    error: { type: err.type, code: err.code, message: err.message, param: null, event_id: null },
  });
}

/** Upstream events that report usage the session is billed for. */
export const USAGE_EVENTS: ReadonlySet<string> = new Set([
  "response.done",
  "conversation.item.input_audio_transcription.completed",
]);

/** Upstream events whose delta is generated audio (GA and beta names): billed by length
 * when their response never reports usage. */
export const AUDIO_DELTAS: ReadonlySet<string> = new Set(["response.output_audio.delta", "response.audio.delta"]);

/** Upstream events whose delta is generated text (GA and beta names). */
export const TEXT_DELTAS: ReadonlySet<string> = new Set([
  "response.output_text.delta", "response.text.delta",
  "response.output_audio_transcript.delta", "response.audio_transcript.delta",
  "response.function_call_arguments.delta",
]);
