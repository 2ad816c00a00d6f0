// OpenAI-protocol media endpoints passed through, with their request rules and the units
// they are billed by: images (one per call), speech (per 1k characters, or by the tokens
// its SSE answer reports), transcription and video (per second).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { MultipartFile } from "../../media/multipart.js";
import { rewriteMultipart } from "../../media/multipart-rewrite.js";
import { answerField, editedBody, renamedBody, wholeBody, type PassRequest } from "../passthrough.js";
import { SseUsageTap } from "../usage-tap.js";
import { emptyUsage, type Units } from "../usage.js";
import { withVariant } from "../variants.js";
import { renderOpenAIStreamError } from "./errors.js";
import { imageUsage, transcriptionUsage } from "./media-usage.js";
import { normalizeResponsesUsage } from "./responses-usage.js";
import { asksSpeechSse, audioFraming, speechContentType, speechStreamCost, speechStreamEnds, speechUsageReader } from "./speech-stream.js";

function requireText(json: Record<string, unknown>, field: string): string {
  const value = json[field];
  if (typeof value !== "string" || value === "") {
    throw new GatewayError(errors.missingParameter, `The '${field}' parameter is required.`);
  }
  return value;
}

/** A streamed answer (SSE) is refused where the route bills a JSON answer's usage: served,
 * it could not be billed. `stream` is a boolean in JSON, a string in a multipart form. */
function refuseStream(json: Record<string, unknown>, what: string): void {
  const stream = json.stream;
  if (stream === undefined || stream === null || stream === false || String(stream).toLowerCase() === "false") return;
  throw new GatewayError(errors.invalidParameter, `'stream' is not supported for ${what} here: send the request without it.`);
}

/** What an image request asks that its price may vary by. */
const IMAGE_VARIANT = ["size", "quality"] as const;
const ONE_IMAGE: Units = Object.freeze({ images: 1 });

/** Image generation makes exactly one image per request (SPEC: `n` must not be sent). A
 * streamed image (SSE partial images) is refused: this route bills the JSON answer's usage.
 * Its size and quality select a price variant. */
export function imageRules(json: Record<string, unknown>): Units {
  requireText(json, "prompt");
  refuseStream(json, "images");
  if (json.n !== undefined) {
    throw new GatewayError(errors.invalidParameter, "'n' must not be sent: one image is produced per request; make one call per image.");
  }
  if (json.size !== undefined && (typeof json.size !== "string" || !/^(\d+x\d+|auto)$/.test(json.size))) {
    throw new GatewayError(errors.invalidParameter, "'size' must be <width>x<height>, e.g. 1024x1024.");
  }
  return withVariant(ONE_IMAGE, json, IMAGE_VARIANT);
}

/** Image edits: the same one-image rule, and an `image` file is required. */
export function imageEditRules(json: Record<string, unknown>, files: readonly MultipartFile[] = []): Units {
  if (!files.some((f) => f.field === "image" || f.field === "image[]")) {
    throw new GatewayError(errors.missingParameter, "The 'image' file is required.");
  }
  return imageRules(json);
}

/** Speech is billed by the characters it reads out, or, on a model priced by tokens, by
 * the usage of the SSE answer the gateway asks for: its `stream_format` must then be one
 * the gateway can render (it is no longer the upstream that checks it). */
export function speechRules(json: Record<string, unknown>, _files?: readonly MultipartFile[], tokenPriced = false): Units {
  const input = requireText(json, "input");
  requireText(json, "voice");
  const format = json.stream_format;
  if (tokenPriced && format !== undefined && format !== "audio" && format !== "sse") {
    throw new GatewayError(errors.invalidParameter, "'stream_format' must be 'audio' or 'sse'.");
  }
  return { characters: [...input].length };
}

/** Token-priced models (gpt-image-1, -ref video) report responses-style usage; the rest
 * none, and are billed by their units alone. */
const responsesStyleUsage = (json: unknown) => normalizeResponsesUsage(answerField(json, "usage")) ?? emptyUsage();
/** An image model's: text and image input, image output (media-usage.ts). */
const imageAnswerUsage = (json: unknown) => imageUsage(answerField(json, "usage")) ?? emptyUsage();

export const imagesPassthrough = wholeBody("/v1/images/generations", { bodyUsage: imageAnswerUsage });
export const imageEditsPassthrough = wholeBody("/v1/images/edits", { bodyUsage: imageAnswerUsage });

/** Transcription needs an audio `file`. Until the answer says how long the audio was, its
 * length is guessed high for the pre-deduction: one second per 2,000 bytes (16 kbit/s, less
 * than any common speech encoding). A model priced by tokens is billed by the usage only a
 * JSON transcript carries: subtitles (srt, vtt), which cannot be rendered from it, are
 * refused for it (OpenAI's token-priced transcribers do not make them either). A streamed
 * transcript (SSE events, not the JSON this route reads its usage from) is refused for
 * every model: served, it could not be billed. */
export function transcriptionRules(json: Record<string, unknown>, files: readonly MultipartFile[] = [], tokenPriced = false): Units {
  const file = files.find((f) => f.field === "file");
  if (!file) throw new GatewayError(errors.missingParameter, "The 'file' (audio) is required.");
  refuseStream(json, "transcriptions");
  const format = transcriptFormat(json);
  if (tokenPriced && subtitles.has(format)) {
    throw new GatewayError(errors.invalidParameter,
      `'response_format' '${format}' is not available for this model: it is billed by tokens, which only a JSON transcript reports. Use json, verbose_json or text.`);
  }
  return { milliseconds: Math.ceil(file.size / 2000) * 1000 };
}

interface TranscriptionUsage {
  type?: string;
  seconds?: number;
  input_tokens?: number;
  output_tokens?: number;
}

/** Subtitle formats: plain text with timings, no usage, relayed as they come. */
const subtitles = new Set(["srt", "vtt"]);

/** The transcript format the client asked for (OpenAI's default: json). */
function transcriptFormat(json: Record<string, unknown>): string {
  return typeof json.response_format === "string" ? json.response_format : "json";
}

/** A transcript asked for as text is asked upstream as JSON (which carries its usage) and
 * rendered as the text body OpenAI sends: the transcript and a newline. */
const asksText = (req: PassRequest) => transcriptFormat(req.json) === "text";

export const transcriptionsPassthrough = wholeBody("/v1/audio/transcriptions", {
  body: (req, upstreamModel) => {
    if (!asksText(req)) return { body: renamedBody(req, upstreamModel), stripUsage: false };
    const fields: Record<string, string> = { response_format: "json" };
    if (req.json.model !== upstreamModel) fields.model = upstreamModel;
    const rewritten = req.parts && req.contentType ? rewriteMultipart(req.raw, req.contentType, req.parts, fields) : undefined;
    if (!rewritten) throw new GatewayError(errors.invalidParameter, "The multipart body is malformed: its parts cannot be read unambiguously.");
    return { body: rewritten.body, stripUsage: false, contentType: rewritten.contentType };
  },
  answersJson: (req) => !subtitles.has(transcriptFormat(req.json)),
  renderAnswer: (req, json) => {
    const text = answerField(json, "text");
    return asksText(req) && typeof text === "string"
      ? { body: Buffer.from(text + "\n"), contentType: "text/plain; charset=utf-8" } : undefined;
  },
  // usage {type: "tokens"} for token-priced models; {type: "duration"} is read as units;
  // none at all is undefined (a billing fault for a token-priced model).
  bodyUsage: (json) => {
    const u = answerField(json, "usage") as TranscriptionUsage | undefined;
    if (u === undefined || u === null || typeof u !== "object") return undefined;
    return u.type === "duration" ? emptyUsage() : transcriptionUsage(u);
  },
  bodyUnits: (json) => {
    const u = answerField(json, "usage") as TranscriptionUsage | undefined;
    const seconds = u?.type === "duration" ? u.seconds : undefined;
    // No duration reported: undefined keeps the pre-deduction's estimate, marked as such.
    return typeof seconds === "number" && seconds >= 0 ? { milliseconds: Math.round(seconds * 1000) } : undefined;
  },
});

/** What a token-priced speech request is sent with: its usage comes only in SSE. */
const SSE_FORMAT: Readonly<Record<string, unknown>> = Object.freeze({ stream_format: "sse" });

/** Speech passes through as sent on a model priced per 1k characters: its audio bytes are
 * billed by the request's characters. A model priced by tokens reports its usage only in
 * SSE: it is asked for SSE (the body edited as little as the rename allows) and rendered
 * back as audio unless the client asked for SSE itself. */
export const speechPassthrough = wholeBody("/v1/audio/speech", {
  isStream: (req) => req.tokenPriced === true,
  body: (req, upstreamModel) => ({
    body: req.tokenPriced && !asksSpeechSse(req.json) ? editedBody(req, upstreamModel, SSE_FORMAT) : renamedBody(req, upstreamModel),
    stripUsage: false,
  }),
  streamTap: () => new SseUsageTap(speechUsageReader(), speechStreamEnds),
  streamError: (err) => renderOpenAIStreamError(err),
  streamCost: speechStreamCost,
  streamFraming: (req) => (asksSpeechSse(req.json) ? undefined : audioFraming(speechContentType(req.json))),
  bodyUsage: () => emptyUsage(), // audio bytes: billed by characters (units), not tokens
  answersJson: () => false,
});

/** The video's length in seconds, from `seconds` or family A's `metadata.duration`. */
function requestedSeconds(json: Record<string, unknown>): number | undefined {
  const metadata = json.metadata as Record<string, unknown> | undefined;
  for (const v of [json.seconds, metadata?.duration]) {
    const n = typeof v === "string" ? Number(v) : v;
    if (typeof n === "number" && Number.isFinite(n) && n > 0) return n;
  }
  return undefined;
}

/** Until the job says how long the video is, the pre-deduction assumes 10 seconds unless the
 * request says. */
const DEFAULT_VIDEO_SECONDS = 10;

/** What a video request asks that its price may vary by: OpenAI's `size`, family C's
 * `resolution`. */
const VIDEO_VARIANT = ["size", "resolution"] as const;

/** Video generation: billed per second of the video (the request's, corrected by the job's),
 * its size or resolution selecting a price variant. */
export function videoRules(json: Record<string, unknown>): Units {
  requireText(json, "prompt");
  return withVariant({ milliseconds: (requestedSeconds(json) ?? DEFAULT_VIDEO_SECONDS) * 1000 }, json, VIDEO_VARIANT);
}

export const videosPassthrough = wholeBody("/v1/videos", {
  bodyUsage: responsesStyleUsage,
  bodyUnits: (json) => {
    // The Video object's `seconds` is a string ("8"); a number is taken too.
    const raw = answerField(json, "seconds");
    const seconds = typeof raw === "string" ? Number(raw) : raw;
    return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0
      ? { milliseconds: Math.round(seconds * 1000) } : undefined;
  },
  bodyJobId: (json) => {
    const id = answerField(json, "id");
    return typeof id === "string" && id !== "" && id.length <= 200 ? id : undefined;
  },
});
