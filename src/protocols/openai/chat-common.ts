// Mappings the chat-completions request, response and stream converters share: finish
// reasons, usage in wire shape, reasoning effort ↔ budget, and small field readers.

import { dropUnknownKeys } from "../field-policy.js";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Reasoning, StopReason } from "../canonical.js";
import type { Usage } from "../usage.js";

/** A chat-completions finish reason. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "function_call";

/** Wire finish_reason → canonical stop reason (unknown or null → end_turn). */
export function stopReasonOf(finish: unknown): StopReason {
  switch (finish) {
    case "length": return "max_tokens";
    case "tool_calls":
    case "function_call": return "tool_use";
    case "content_filter": return "content_filter";
    default: return "end_turn";
  }
}

/** Canonical stop reason → wire finish_reason. */
export function finishReasonOf(stop: StopReason): FinishReason {
  switch (stop) {
    case "max_tokens": return "length";
    case "tool_use": return "tool_calls";
    case "content_filter":
    case "refusal": return "content_filter";
    default: return "stop"; // end_turn, stop_sequence, pause_turn, error
  }
}

/** The wire `usage` object: prompt_tokens counts cached and cache-written input too. */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number; audio_tokens?: number; image_tokens?: number };
  completion_tokens_details: { reasoning_tokens: number; audio_tokens?: number; image_tokens?: number };
}

/** Canonical usage → wire usage (cache_write_tokens only when something was written; audio
 * and image tokens only when the usage has some: audio input counts the cached audio too). */
export function wireUsage(u: Usage): WireUsage {
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  const details: WireUsage["prompt_tokens_details"] = { cached_tokens: u.cacheRead };
  if (u.cacheWrite > 0) details.cache_write_tokens = u.cacheWrite;
  const audioIn = (u.audioInput ?? 0) + (u.audioCacheRead ?? 0);
  if (audioIn > 0) details.audio_tokens = audioIn;
  if (u.imageInput) details.image_tokens = u.imageInput;
  const outDetails: WireUsage["completion_tokens_details"] = { reasoning_tokens: u.reasoning };
  if (u.audioOutput) outDetails.audio_tokens = u.audioOutput;
  if (u.imageOutput) outDetails.image_tokens = u.imageOutput;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: details,
    completion_tokens_details: outDetails,
  };
}

/** A 400 naming the offending field. */
export function invalid(message: string): GatewayError {
  return new GatewayError(errors.invalidParameter, message);
}

/** A plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every key of `obj` outside `known` is dropped and named in `dropped` as `where.key`
 * (field-policy.ts: unknown fields are dropped, and refused under conversion: strict). */
export function onlyKnown(obj: Record<string, unknown>, known: ReadonlySet<string>, where: string, dropped: string[]): void {
  dropUnknownKeys(obj, known, where, dropped);
}

/** A finite number field, or undefined when absent/null; 400 when another type. */
export function optNumber(obj: Record<string, unknown>, key: string, where: string): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw invalid(`${where}${key} must be a number.`);
  return v;
}

/** A non-negative integer field, or undefined when absent/null; 400 otherwise. */
export function optInt(obj: Record<string, unknown>, key: string, where: string): number | undefined {
  const v = optNumber(obj, key, where);
  if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw invalid(`${where}${key} must be a non-negative integer.`);
  return v;
}

/** A string field, or undefined when absent/null; 400 when another type. */
export function optString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalid(`${where}${key} must be a string.`);
  return v;
}

/** Parses tool-call arguments (a JSON object text; "" means no arguments). */
export function parseArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A protocol-style id when the canonical one is missing. */
export function chatId(id: string | undefined): string {
  return id && id.length > 0 ? id : `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`;
}

/** A reasoning effort as OpenAI's APIs name it (chat's `reasoning_effort`, responses'
 * `reasoning.effort`): none is no reasoning; xhigh and max are the highest level every
 * protocol knows. `field` names it in the 400. */
export function reasoningEffort(v: unknown, field: string): Reasoning | undefined {
  if (v === undefined || v === null || v === "none") return undefined;
  if (v === "minimal" || v === "low" || v === "medium" || v === "high") return { effort: v };
  if (v === "xhigh" || v === "max") return { effort: "high" };
  throw invalid(`${field} must be one of none, minimal, low, medium, high, xhigh, max.`);
}
