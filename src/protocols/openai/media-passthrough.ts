// OpenAI-protocol media endpoints passed through: image generation (one image per call,
// billed per image and/or by the token usage image models report) and text to speech
// (audio bytes back, billed per 1k characters of input).

import type { Units } from "../../billing/cost.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { replaceField, type MultipartFile } from "../../media/multipart.js";
import { lastObjectField } from "../json-tail.js";
import { renamedBody, type PassRequest, type PassthroughSpec } from "../passthrough.js";
import { emptyUsage } from "../usage.js";
import { ChatStreamTap } from "./chat-stream-tap.js";
import { normalizeResponsesUsage } from "./responses-usage.js";

/** The body as sent, JSON or a multipart upload, with only a model_map rename applied. */
function uploadBody(req: PassRequest, upstreamModel: string): Buffer {
  if (req.json.model === upstreamModel) return req.raw;
  return /^multipart\//i.test(req.contentType ?? "")
    ? replaceField(req.raw, req.contentType!, "model", upstreamModel)
    : renamedBody(req, upstreamModel);
}

function requireText(json: Record<string, unknown>, field: string): string {
  const value = json[field];
  if (typeof value !== "string" || value === "") {
    throw new GatewayError(errors.missingParameter, `The '${field}' parameter is required.`);
  }
  return value;
}

/** Image generation makes exactly one image per request (SPEC: `n` must not be sent). */
export function imageRules(json: Record<string, unknown>): Units {
  requireText(json, "prompt");
  if (json.n !== undefined) {
    throw new GatewayError(errors.invalidParameter, "'n' must not be sent: one image is produced per request; make one call per image.");
  }
  if (json.size !== undefined && (typeof json.size !== "string" || !/^(\d+x\d+|auto)$/.test(json.size))) {
    throw new GatewayError(errors.invalidParameter, "'size' must be <width>x<height>, e.g. 1024x1024.");
  }
  return { images: 1 };
}

/** Image edits: the same one-image rule, and an `image` file is required. */
export function imageEditRules(json: Record<string, unknown>, files: readonly MultipartFile[] = []): Units {
  if (!files.some((f) => f.field === "image" || f.field === "image[]")) {
    throw new GatewayError(errors.missingParameter, "The 'image' file is required.");
  }
  return imageRules(json);
}

/** Speech is billed by the characters it reads out. */
export function speechRules(json: Record<string, unknown>): Units {
  const input = requireText(json, "input");
  requireText(json, "voice");
  return { characters: [...input].length };
}

export const imagesPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "openai",
  isStream: () => false,
  path: () => "/v1/images/generations",
  body: (req, upstreamModel) => ({ body: renamedBody(req, upstreamModel), stripUsage: false }),
  streamTap: () => new ChatStreamTap(false), // never streamed; present for the interface
  // Token-priced image models (gpt-image-1) report responses-style usage; others none.
  bodyUsage: (body) => normalizeResponsesUsage(lastObjectField(body, "usage")) ?? emptyUsage(),
  bodyChars: () => 0,
});

export const imageEditsPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  ...imagesPassthrough,
  path: () => "/v1/images/edits",
  body: (req, upstreamModel) => ({ body: uploadBody(req, upstreamModel), stripUsage: false }),
});

/** Transcription needs an audio `file`. Until the answer says how long the audio was, its
 * length is guessed high for the pre-deduction: one second per 2,000 bytes (16 kbit/s, less
 * than any common speech encoding). */
export function transcriptionRules(_json: Record<string, unknown>, files: readonly MultipartFile[] = []): Units {
  const file = files.find((f) => f.field === "file");
  if (!file) throw new GatewayError(errors.missingParameter, "The 'file' (audio) is required.");
  return { milliseconds: Math.ceil(file.size / 2000) * 1000 };
}

interface TranscriptionUsage {
  type?: string;
  seconds?: number;
  input_tokens?: number;
  output_tokens?: number;
}

export const transcriptionsPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "openai",
  isStream: () => false,
  path: () => "/v1/audio/transcriptions",
  body: (req, upstreamModel) => ({ body: uploadBody(req, upstreamModel), stripUsage: false }),
  streamTap: () => new ChatStreamTap(false),
  // usage {type: "tokens"} for token-priced models; {type: "duration"} is read as units.
  bodyUsage: (body) => {
    const u = lastObjectField(body, "usage") as TranscriptionUsage | undefined;
    return u?.type === "tokens" ? normalizeResponsesUsage(u) ?? emptyUsage() : emptyUsage();
  },
  bodyUnits: (body) => {
    const u = lastObjectField(body, "usage") as TranscriptionUsage | undefined;
    const seconds = u?.type === "duration" ? u.seconds : undefined;
    // No duration reported: undefined keeps the pre-deduction's estimate, marked as such.
    return typeof seconds === "number" && seconds >= 0 ? { milliseconds: Math.round(seconds * 1000) } : undefined;
  },
  bodyChars: () => 0,
});

export const speechPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "openai",
  isStream: () => false,
  path: () => "/v1/audio/speech",
  body: (req, upstreamModel) => ({ body: renamedBody(req, upstreamModel), stripUsage: false }),
  streamTap: () => new ChatStreamTap(false),
  bodyUsage: () => emptyUsage(), // audio bytes: billed by characters (units), not tokens
  bodyChars: () => 0,
  keepsBody: false,
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

/** Video generation: billed per second of the video (the request's, corrected by the job's). */
export function videoRules(json: Record<string, unknown>): Units {
  requireText(json, "prompt");
  return { milliseconds: (requestedSeconds(json) ?? DEFAULT_VIDEO_SECONDS) * 1000 };
}

export const videosPassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "openai",
  isStream: () => false,
  path: () => "/v1/videos",
  body: (req, upstreamModel) => ({ body: uploadBody(req, upstreamModel), stripUsage: false }),
  streamTap: () => new ChatStreamTap(false),
  // Token-priced (-ref) models may report usage; per-second models are billed by units.
  bodyUsage: (body) => normalizeResponsesUsage(lastObjectField(body, "usage")) ?? emptyUsage(),
  bodyUnits: (body) => {
    const seconds = /"seconds"\s*:\s*"?(\d+(?:\.\d+)?)"?/.exec(body.toString("utf8"))?.[1];
    return seconds === undefined ? undefined : { milliseconds: Math.round(Number(seconds) * 1000) };
  },
  bodyJobId: (body) => /"id"\s*:\s*"([^"]{1,200})"/.exec(body.toString("utf8"))?.[1],
  bodyChars: () => 0,
});
