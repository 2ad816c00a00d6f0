// Speech on a model priced by tokens (gpt-4o-mini-tts): only its SSE answer carries usage
// (`speech.audio.done`), so the gateway asks upstream for SSE whatever the client asked,
// reads the usage there, and renders raw audio back to a client that asked for audio:
// each `speech.audio.delta`'s base64 decoded as it passes, one delta held back as the
// withheld tail, so memory stays one event whatever the audio's length.

import { costStamp, STREAM_COST_FIELD } from "../stream-cost.js";
import type { StreamFraming } from "../stream-framing.js";
import { parseEvent } from "../sse.js";
import { lastUsageReader, type StreamEnds, type UsageReader } from "../usage-tap.js";
import { speechUsage } from "./media-usage.js";

/** The stream format the client asked for: raw audio (OpenAI's default) or SSE. */
export const asksSpeechSse = (json: Record<string, unknown>): boolean => json.stream_format === "sse";

/** The Content-Type OpenAI answers each `response_format` with (mp3 by default). */
const audioTypes: Readonly<Record<string, string>> = Object.freeze({
  mp3: "audio/mpeg", opus: "audio/opus", aac: "audio/aac", flac: "audio/flac", wav: "audio/wav", pcm: "audio/pcm",
});

/** The Content-Type of the audio a request asks for. */
export function speechContentType(json: Record<string, unknown>): string {
  const format = typeof json.response_format === "string" ? json.response_format : "mp3";
  return audioTypes[format] ?? "application/octet-stream";
}

const isDone = (data: unknown): data is { type: string; usage?: unknown } =>
  data !== null && typeof data === "object" && (data as { type?: unknown }).type === "speech.audio.done";

/** Reads the usage of `speech.audio.done` (its output is audio). The audio deltas carry no text to estimate
 * from: the text field never matches (a raw NUL is never in JSON text). */
export function speechUsageReader(): UsageReader {
  return lastUsageReader(/"usage"\s*:\s*\{/, /\u0000()/g, (data) => (isDone(data) ? speechUsage(data.usage) : undefined));
}

export const speechStreamEnds: StreamEnds = Object.freeze({
  terminal: /^data: ?\{\s*"type"\s*:\s*"speech\.audio\.done"/m,
  failure: /^event: ?error\s*$|^data: ?\{\s*"(?:type"\s*:\s*"error"|error")/m,
});

/** Shows the cost in the done event's usage. */
export const speechStreamCost = costStamp({
  mark: /"usage"\s*:\s*\{/, usageOf: (d) => (isDone(d) ? d.usage : undefined), field: STREAM_COST_FIELD,
});

const EMPTY = Buffer.alloc(0);
const eventEnd = /\r\n\r\n|\n\n|\r\r/g;

/** The audio framing of one speech stream, in `contentType`. */
export function audioFraming(contentType: string): StreamFraming {
  /** The last delta's bytes: the withheld tail until the next delta (or the end). */
  let held: Buffer = EMPTY;
  const events = (sse: string): Buffer => {
    let out: Buffer = EMPTY;
    let start = 0;
    eventEnd.lastIndex = 0;
    for (let m = eventEnd.exec(sse); m; m = eventEnd.exec(sse)) {
      const end = m.index + m[0].length;
      const audio = deltaAudio(sse.slice(start, end));
      start = end;
      if (audio === undefined) continue;
      out = out.length === 0 ? held : Buffer.concat([out, held]);
      held = audio;
    }
    return out;
  };
  return {
    contentType,
    events,
    end: (sse) => {
      const out = events(sse);
      const last = held;
      held = EMPTY;
      return out.length === 0 ? last : Buffer.concat([out, last]);
    },
    cutsOnError: true,
  };
}

/** A `speech.audio.delta` event's audio bytes; undefined for any other event. The tap has
 * checked the event's data is well formed. */
function deltaAudio(event: string): Buffer | undefined {
  const data = parseEvent(event)?.data;
  if (data === undefined || !data.includes('"speech.audio.delta"')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  const delta = parsed as { type?: unknown; audio?: unknown };
  return delta.type === "speech.audio.delta" && typeof delta.audio === "string" ? Buffer.from(delta.audio, "base64") : undefined;
}
