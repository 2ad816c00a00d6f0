// What a realtime session uses, read as its frames pass: the usage each usage-bearing event
// reports, one response or transcription at a time, and for what never reported (a response
// that ended without usage, or one still running when the session ended) an estimate from
// the frames seen, marked.
// Audio deltas are measured by their length, never decoded.

import { AUDIO_DELTAS, TEXT_DELTAS, USAGE_EVENTS, decodeEvent } from "../protocols/openai/realtime-events.js";
import { reportedUsage } from "../protocols/openai/realtime-usage.js";
import { emptyUsage, type Units, type Usage } from "../protocols/usage.js";
import type { Price } from "../runtime/types.js";

/**
 * Base64 characters per audio token. OpenAI counts user audio at 1 token per 100 ms and
 * assistant audio at 1 token per 50 ms; pcm16 at 24 kHz (the default) is 64,000 base64
 * characters a second, G.711 at 8 kHz is 10,667.
 */
const AUDIO_CHARS_PER_TOKEN = {
  pcm: { input: 6_400, output: 3_200 },
  g711: { input: 1_067, output: 533 },
} as const;
/** Characters of text per token (the gateway's usual estimate). */
const TEXT_CHARS_PER_TOKEN = 4;

/** What one response or transcription used: reported, or (`estimated`) the gateway's guess. */
export interface Used {
  readonly usage: Usage;
  /** Seconds of duration-billed transcription audio. */
  readonly seconds: number;
  readonly estimated: boolean;
}

/** What an upstream frame meant for the session's money. */
export type Metered =
  /** A response started (one created by the client's response.create, or by server VAD). */
  | { readonly kind: "started" }
  /** A response ended: its reported usage, or (it reported none) its estimate. */
  | { readonly kind: "done"; readonly used: Used }
  /** Usage outside a response (input transcription). */
  | { readonly kind: "transcribed"; readonly used: Used };

export class RealtimeMeter {
  /** Tokens of the last response's input and output: the next response reads them again. */
  #context = 0;
  /** Of #context, the audio tokens (audio in and out of the last response). */
  #contextAudio = 0;
  /** Client input since the last response ended (base64 audio, other frames' bytes). */
  #inAudio = 0;
  #inText = 0;
  /** Output deltas since the last response ended (base64 audio, text characters). */
  #outAudio = 0;
  #outText = 0;
  /** Responses started and not done. */
  #open = 0;
  #audio: { input: number; output: number } = AUDIO_CHARS_PER_TOKEN.pcm;

  /** Counts a client frame toward the input the next response reads. */
  client(type: string | undefined, frame: Buffer): void {
    if (type === "input_audio_buffer.append") this.#inAudio += frame.length;
    else this.#inText += frame.length;
  }

  /** Reads an upstream frame; returns what it means for the bill, if anything. */
  upstream(type: string | undefined, frame: Buffer): Metered | undefined {
    if (type === undefined) return undefined;
    if (AUDIO_DELTAS.has(type)) {
      this.#outAudio += frame.length;
      return undefined;
    }
    if (TEXT_DELTAS.has(type)) {
      const delta = decodeEvent(frame)?.delta;
      this.#outText += typeof delta === "string" ? delta.length : 0;
      return undefined;
    }
    if (type === "response.created") {
      this.#open++;
      return { kind: "started" };
    }
    if (type === "session.created" || type === "session.updated") {
      this.#audioFormat(decodeEvent(frame));
      return undefined;
    }
    if (!USAGE_EVENTS.has(type)) return undefined;
    const event = decodeEvent(frame);
    const reported = event ? reportedUsage(type, event) : undefined;
    if (type !== "response.done") return reported ? { kind: "transcribed", used: { ...reported, estimated: false } } : undefined;
    if (this.#open > 0) this.#open--;
    const used: Used = reported ? { ...reported, estimated: false } : this.#estimate();
    const u = used.usage;
    this.#context = u.input + u.cacheRead + u.cacheWrite + u.output;
    this.#contextAudio = Math.min((u.audioInput ?? 0) + (u.audioCacheRead ?? 0) + (u.audioOutput ?? 0), this.#context);
    this.#inAudio = this.#inText = this.#outAudio = this.#outText = 0;
    return { kind: "done", used };
  }

  /** Input tokens the next response reads at most as far as the gateway can tell: the
   * conversation so far and what the client added since, counted high (a reservation). */
  nextInputTokens(): number {
    return this.#context + Math.ceil(this.#inAudio / this.#audio.input) + Math.ceil(this.#inText / 3);
  }

  /** The estimate for what ran and never reported usage (a response still running as the
   * session ended, or output without a response): undefined when nothing did. Never zero. */
  unreported(): Used | undefined {
    return this.#open > 0 || this.#outAudio > 0 || this.#outText > 0 ? this.#estimate() : undefined;
  }

  /** A response's usage as the frames seen since the last one ended tell it, marked: the
   * conversation so far and the client's input as input, the deltas as output (at least 1);
   * the audio among them (measured, or the conversation's audio) as audio. */
  #estimate(): Used {
    const usage = emptyUsage();
    const clientAudio = Math.ceil(this.#inAudio / this.#audio.input);
    const audioIn = this.#contextAudio + clientAudio;
    const audioOut = Math.ceil(this.#outAudio / this.#audio.output);
    usage.input = this.#context + clientAudio + Math.ceil(this.#inText / TEXT_CHARS_PER_TOKEN);
    usage.output = Math.max(1, audioOut + Math.ceil(this.#outText / TEXT_CHARS_PER_TOKEN));
    if (audioIn > 0) usage.audioInput = audioIn;
    if (audioOut > 0) usage.audioOutput = audioOut;
    return { usage, seconds: 0, estimated: true };
  }

  /** Whether a response is running now (its usage is still to come). */
  get responding(): boolean {
    return this.#open > 0;
  }

  /** The session's audio format (GA: session.audio.output.format.type; beta:
   * output_audio_format): G.711 carries fewer bytes per token. */
  #audioFormat(event: Record<string, unknown> | undefined): void {
    const session = event?.session as { audio?: { output?: { format?: { type?: unknown } } }; output_audio_format?: unknown } | undefined;
    const format = session?.audio?.output?.format?.type ?? session?.output_audio_format;
    if (typeof format !== "string") return;
    this.#audio = /pcm[ua]|g711/.test(format) ? AUDIO_CHARS_PER_TOKEN.g711 : AUDIO_CHARS_PER_TOKEN.pcm;
  }
}

/** Tokens per second of user audio (1 per 100 ms), for a duration-billed transcription on a
 * model priced in tokens only. */
const INPUT_AUDIO_TOKENS_PER_SECOND = 10;

/**
 * What `usage` plus `seconds` of duration-billed transcription cost under `price`: the
 * seconds as billed time when the model has a per-second price, else as the audio input
 * tokens they are (then `estimated`). The usage's parts are kept (a copy of every field).
 */
export function billable(usage: Usage, seconds: number, price: Price): { usage: Usage; units: Units | undefined; estimated: boolean } {
  if (seconds <= 0) return { usage, units: undefined, estimated: false };
  if (price.perSecond !== undefined) return { usage, units: { milliseconds: Math.round(seconds * 1000) }, estimated: false };
  const audio = Math.ceil(seconds * INPUT_AUDIO_TOKENS_PER_SECOND);
  const withAudio: Usage = { ...usage, input: usage.input + audio, audioInput: (usage.audioInput ?? 0) + audio };
  return { usage: withAudio, units: undefined, estimated: true };
}
