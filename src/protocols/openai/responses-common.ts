// Small pure pieces both sides of the responses protocol share: wire usage, how a stop
// reason shows as a Response's status, item ids, and how a reasoning item carries a
// canonical thinking block's signature (or a redacted block's data) for the client to send back.

import type { RedactedThinkingBlock, StopReason, ThinkingBlock } from "../canonical.js";
import type { Usage } from "../usage.js";

/** The wire `usage` of a Response: input_tokens counts cached (and cache-written) input,
 * output_tokens counts reasoning. Read back by normalizeResponsesUsage (responses-usage.ts). */
export interface ResponsesWireUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number; audio_tokens?: number; image_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number; audio_tokens?: number; image_tokens?: number };
  total_tokens: number;
}

/** Canonical usage → a Response's usage (audio and image tokens only when there are some;
 * audio input counts the cached audio too). */
export function responsesWireUsage(u: Usage): ResponsesWireUsage {
  const input = u.input + u.cacheRead + u.cacheWrite;
  const details: ResponsesWireUsage["input_tokens_details"] = u.cacheWrite > 0
    ? { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite } : { cached_tokens: u.cacheRead };
  const audioIn = (u.audioInput ?? 0) + (u.audioCacheRead ?? 0);
  if (audioIn > 0) details.audio_tokens = audioIn;
  if (u.imageInput) details.image_tokens = u.imageInput;
  const outDetails: ResponsesWireUsage["output_tokens_details"] = { reasoning_tokens: u.reasoning };
  if (u.audioOutput) outDetails.audio_tokens = u.audioOutput;
  if (u.imageOutput) outDetails.image_tokens = u.imageOutput;
  return {
    input_tokens: input,
    input_tokens_details: details,
    output_tokens: u.output,
    output_tokens_details: outDetails,
    total_tokens: input + u.output,
  };
}

/** How a Response ends: completed, or incomplete with the reason the API gives. */
export type ResponsesEnd =
  | { readonly status: "completed"; readonly incompleteDetails: null }
  | { readonly status: "incomplete"; readonly incompleteDetails: { reason: "max_output_tokens" | "content_filter" } };

/** A canonical stop reason as a Response's status (a refusal is a completed answer whose
 * message holds a refusal part). */
export function responsesEndOf(stop: StopReason): ResponsesEnd {
  if (stop === "max_tokens") return { status: "incomplete", incompleteDetails: { reason: "max_output_tokens" } };
  if (stop === "content_filter") return { status: "incomplete", incompleteDetails: { reason: "content_filter" } };
  return { status: "completed", incompleteDetails: null };
}

/** Ids for one Response and its output items, in the API's prefixes (resp_, msg_, rs_, fc_, ig_). */
export class ResponsesIds {
  readonly #base = crypto.randomUUID().replaceAll("-", "");

  /** The response id: the upstream's when it already is a responses id. */
  response(upstreamId?: string): string {
    return upstreamId?.startsWith("resp_") ? upstreamId : `resp_${this.#base}`;
  }

  /** The id of output item `index` of a kind. */
  item(prefix: "msg" | "rs" | "fc" | "ig", index: number): string {
    return `${prefix}_${this.#base}${index.toString(16).padStart(4, "0")}`;
  }
}

/**
 * A reasoning item's encrypted_content is the gateway's to fill on converted routes: it
 * carries a thinking block's signature (Anthropic, Gemini), or a redacted block's data
 * under this prefix, so a client sending the item back gives the channel what it needs.
 * Signatures and redacted data are base64, which never contains ':'.
 */
export const REDACTED_PREFIX = "redacted_thinking:";
const REDACTED = REDACTED_PREFIX;

/** The encrypted_content for a thinking or redacted-thinking block (null: nothing to carry). */
export function encryptedContentOf(block: ThinkingBlock | RedactedThinkingBlock): string | null {
  if (block.type === "redacted_thinking") return REDACTED + block.data;
  return block.signature ?? null;
}

/** The canonical block(s) a passed-back reasoning item stands for: redacted data, or the
 * summary text with the signature it came with. */
export function reasoningBlockOf(summary: string, encrypted: string | undefined): ThinkingBlock | RedactedThinkingBlock | undefined {
  if (encrypted?.startsWith(REDACTED)) return { type: "redacted_thinking", data: encrypted.slice(REDACTED.length) };
  if (encrypted !== undefined && encrypted !== "") return { type: "thinking", text: summary, signature: encrypted };
  return summary === "" ? undefined : { type: "thinking", text: summary };
}
