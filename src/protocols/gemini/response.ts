// Complete (non-stream) generate-content answers both ways: a gemini channel's response →
// canonical, and canonical → the GenerateContentResponse a Gemini client reads.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Block, CanonicalResponse } from "../canonical.js";
import { emptyUsage } from "../usage.js";
import { geminiAnswerUsage } from "./usage.js";
import { finishReasonOf, stopReasonOf, usageMetadataOf } from "./mapping.js";
import { decodeParts } from "./parts-decode.js";
import { encodeParts } from "./parts-encode.js";
import { CallIds, isObject, newResponseId, type JsonObject } from "./wire.js";

/**
 * Reads an upstream GenerateContentResponse: the first candidate's parts, its finish
 * reason, and usage. A prompt blocked before any candidate (promptFeedback.blockReason) is
 * an empty answer stopped by the content filter.
 */
export function decodeGeminiResponse(json: unknown): CanonicalResponse {
  if (!isObject(json)) throw new GatewayError(errors.upstreamError, "The gemini channel answered with a body that is not a JSON object.");
  const candidate = Array.isArray(json.candidates) && isObject(json.candidates[0]) ? json.candidates[0] : undefined;
  const usage = geminiAnswerUsage(json) ?? emptyUsage();
  const id = typeof json.responseId === "string" && json.responseId !== "" ? json.responseId : newResponseId();
  const model = typeof json.modelVersion === "string" ? json.modelVersion : "";
  if (candidate === undefined) {
    const blocked = isObject(json.promptFeedback) && json.promptFeedback.blockReason != null;
    return { id, model, content: [], stopReason: blocked ? "content_filter" : "end_turn", usage };
  }
  const content = isObject(candidate.content) ? upstreamBlocks(candidate.content.parts) : [];
  const calledTool = content.some((b) => b.type === "tool_use");
  return { id, model, content, stopReason: stopReasonOf(candidate.finishReason, calledTool), usage };
}

function upstreamBlocks(parts: unknown): Block[] {
  try {
    return decodeParts(parts, { strict: false, role: "assistant", field: "candidates[0].content", ids: new CallIds() });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new GatewayError(errors.upstreamError, `The gemini channel sent a malformed part: ${why}`);
  }
}

/** The message of a Gemini error body (`{"error":{"code","message","status"}}`). */
export function geminiErrorMessage(json: unknown): string | undefined {
  if (!isObject(json) || !isObject(json.error)) return undefined;
  return typeof json.error.message === "string" ? json.error.message : undefined;
}

/**
 * The client's GenerateContentResponse: one candidate (index 0, role "model"). Redacted
 * reasoning has no Gemini form and nothing readable, so it is left out. A turn with no parts
 * still gets one empty text part: the SDK's chat history drops turns without parts.
 */
export function encodeGeminiResponse(response: CanonicalResponse): JsonObject {
  const blocks = response.content.filter((b) => b.type !== "redacted_thinking");
  const parts = encodeParts(blocks, "content", () => undefined);
  return {
    candidates: [{
      content: { role: "model", parts: parts.length > 0 ? parts : [{ text: "" }] },
      finishReason: finishReasonOf(response.stopReason),
      index: 0,
    }],
    usageMetadata: usageMetadataOf(response.usage),
    modelVersion: response.model,
    responseId: response.id || newResponseId(),
  };
}
