// Value tables between generate-content and the hub: finish reasons, usage counts, the
// thinking budget ↔ effort scale, and OpenAPI-style schemas → JSON Schema.

import type { StopReason } from "../canonical.js";
import type { Usage } from "../usage.js";
import { isObject, type JsonObject } from "./wire.js";

const FILTERED = new Set([
  "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION",
]);

/** A Gemini `finishReason` as a canonical stop reason; STOP after a function call is tool_use. */
export function stopReasonOf(finishReason: unknown, calledTool: boolean): StopReason {
  if (finishReason === "STOP") return calledTool ? "tool_use" : "end_turn";
  if (finishReason === "MAX_TOKENS") return "max_tokens";
  if (finishReason === "MALFORMED_FUNCTION_CALL") return "error";
  if (typeof finishReason === "string" && FILTERED.has(finishReason)) return "content_filter";
  return "end_turn";
}

/** A canonical stop reason as a Gemini `finishReason`. */
export function finishReasonOf(stop: StopReason): string {
  switch (stop) {
    case "max_tokens":
      return "MAX_TOKENS";
    case "content_filter":
    case "refusal":
      return "SAFETY";
    case "error":
      return "OTHER";
    default:
      return "STOP";
  }
}

/** Wire `usageMetadata` for a canonical usage (zero cache and thought counts are left out;
 * the details by modality only when the usage has audio or image parts). */
export function usageMetadataOf(u: Usage): JsonObject {
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  const candidates = u.output - u.reasoning;
  const meta: JsonObject = {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + u.output,
    ...(u.cacheRead > 0 && { cachedContentTokenCount: u.cacheRead }),
    ...(u.reasoning > 0 && { thoughtsTokenCount: u.reasoning }),
  };
  const cachedAudio = u.audioCacheRead ?? 0;
  if (u.audioInput || u.imageInput || cachedAudio) {
    meta.promptTokensDetails = modalityDetails(prompt, (u.audioInput ?? 0) + cachedAudio, u.imageInput ?? 0);
  }
  if (cachedAudio) meta.cacheTokensDetails = modalityDetails(u.cacheRead, cachedAudio, 0);
  if (u.audioOutput || u.imageOutput) meta.candidatesTokensDetails = modalityDetails(candidates, u.audioOutput ?? 0, u.imageOutput ?? 0);
  return meta;
}

/** A `*TokensDetails` list of `total` tokens: its audio and image tokens, the rest text. */
function modalityDetails(total: number, audio: number, image: number): JsonObject[] {
  const list: JsonObject[] = [];
  const text = total - audio - image;
  if (text > 0) list.push({ modality: "TEXT", tokenCount: text });
  if (audio > 0) list.push({ modality: "AUDIO", tokenCount: audio });
  if (image > 0) list.push({ modality: "IMAGE", tokenCount: image });
  return list;
}

/**
 * A Gemini `Schema` (OpenAPI 3.0 subset: upper-case `type`, `nullable`, `propertyOrdering`)
 * as JSON Schema, which the other protocols take. Unknown keywords pass through.
 */
export function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "nullable" || key === "propertyOrdering") continue;
    if (key === "type" && typeof value === "string") {
      if (value !== "TYPE_UNSPECIFIED") out.type = value.toLowerCase();
    } else if (key === "properties" && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSchemaOf(v)]));
    } else if (key === "items" || key === "anyOf") {
      out[key] = jsonSchemaOf(value);
    } else {
      out[key] = value;
    }
  }
  if (schema.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}
