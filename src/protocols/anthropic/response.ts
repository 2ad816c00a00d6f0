// A complete messages-protocol answer, both ways: the channel's Message into the hub, and
// the hub's response out as the Message a client's SDK expects. Stop reasons and usage
// mappings live here and are shared with the stream code.

import { randomBytes } from "node:crypto";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Block, CanonicalResponse, ImageBlock, ImageSource, StopReason } from "../canonical.js";
import { emptyUsage, type Usage } from "../usage.js";
import { isObject, type Json } from "./fields.js";
import { normalizeAnthropicUsage } from "./usage.js";

const WIRE_STOPS: ReadonlySet<string> = new Set(["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"]);

/** A wire stop_reason as canonical. The context-window stop is a length stop; an unknown or
 * missing reason counts as a normal end. */
export function stopReasonIn(v: unknown): StopReason {
  if (typeof v !== "string") return "end_turn";
  if (v === "model_context_window_exceeded") return "max_tokens";
  return WIRE_STOPS.has(v) ? (v as StopReason) : "end_turn";
}

/** A canonical stop reason as a wire stop_reason (content_filter → refusal, error → end_turn). */
export function stopReasonOut(s: StopReason): string {
  if (s === "content_filter") return "refusal";
  return s === "error" ? "end_turn" : s;
}

/** Canonical usage as a wire `usage` object (cache writes by lifetime when some were for an
 * hour). The service tier is not shown: another provider's tier names are not this wire's. */
export function wireUsage(u: Usage): Json {
  const o: Json = {
    input_tokens: u.input,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    output_tokens: u.output,
  };
  // The writes by lifetime, when some were for an hour (the rest are 5-minute writes).
  const oneHour = Math.min(u.cacheWrite1h ?? 0, u.cacheWrite);
  if (oneHour > 0) o.cache_creation = { ephemeral_5m_input_tokens: u.cacheWrite - oneHour, ephemeral_1h_input_tokens: oneHour };
  if (u.reasoning > 0) o.output_tokens_details = { thinking_tokens: u.reasoning };
  return o;
}

/** A message id in the protocol's style, for answers that arrived without one. */
export function newMessageId(): string {
  return `msg_${randomBytes(12).toString("hex")}`;
}

/** One content block of an upstream Message. Citations on text are dropped: they point
 * into documents or search results, which requests through the hub never carry. Server-tool
 * blocks are skipped for the same reason: the encoder never sends server tools. */
function blockIn(v: unknown): Block | undefined {
  if (!isObject(v)) return undefined;
  switch (v.type) {
    case "text":
      return { type: "text", text: String(v.text ?? "") };
    case "thinking":
      // "" is how this gateway writes "no signature" (see blockOut): unsigned, not signed empty.
      return { type: "thinking", text: String(v.thinking ?? ""), ...(typeof v.signature === "string" && v.signature !== "" && { signature: v.signature }) };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: String(v.data ?? "") };
    case "tool_use":
      return { type: "tool_use", id: String(v.id ?? ""), name: String(v.name ?? ""), input: isObject(v.input) ? v.input : {} };
    case "image":
      return imageBlockIn(v.source);
    default:
      return undefined;
  }
}

/** An answer's image block (a messages-protocol upstream serving an image model), or
 * undefined when its source is not one the hub carries. */
export function imageBlockIn(v: unknown): ImageBlock | undefined {
  if (!isObject(v)) return undefined;
  if (v.type === "base64" && typeof v.media_type === "string" && typeof v.data === "string") {
    return { type: "image", source: { kind: "base64", mediaType: v.media_type, data: v.data } };
  }
  if (v.type === "url" && typeof v.url === "string") return { type: "image", source: { kind: "url", url: v.url } };
  return undefined;
}

/**
 * An image the model made, as the messages protocol's image content block. The API itself
 * never answers with images, so the SDK's answer types lack this block, but its MessageStream
 * keeps any content_block_start as given, and an image block is the one form every messages
 * client already renders and can send back as is; a text placeholder would lose the image.
 */
export function imageBlockOut(s: ImageSource): Json {
  const source = s.kind === "base64" ? { type: "base64", media_type: s.mediaType, data: s.data } : { type: "url", url: s.url };
  return { type: "image", source };
}

/** Reads an upstream Message (a 2xx messages body) into the canonical response. */
export function decodeMessagesResponse(json: unknown): CanonicalResponse {
  const m = isObject(json) ? json : {};
  const content = Array.isArray(m.content) ? m.content.map(blockIn).filter((b): b is Block => b !== undefined) : [];
  return {
    id: typeof m.id === "string" ? m.id : newMessageId(),
    model: typeof m.model === "string" ? m.model : "",
    content,
    stopReason: stopReasonIn(m.stop_reason),
    ...(typeof m.stop_sequence === "string" && { stopSequence: m.stop_sequence }),
    usage: normalizeAnthropicUsage(m.usage) ?? emptyUsage(),
  };
}

/** One canonical answer block as a wire content block. */
export function blockOut(b: Block): Json {
  switch (b.type) {
    case "text":
      return { type: "text", text: b.text };
    case "thinking":
      // Reasoning from another vendor's model has no signature. The SDK types `signature` as a
      // required string and Claude Code sends the block back as it came, so it gets "", which
      // the request decoder reads as unsigned (and leaves out toward an anthropic channel,
      // which would refuse it), rather than a missing field or an invented signature.
      return { type: "thinking", thinking: b.text, signature: b.signature ?? "" };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: b.data };
    case "tool_use":
      return { type: "tool_use", id: b.id, name: b.name, input: b.input };
    case "image":
      return imageBlockOut(b.source);
    default:
      throw new GatewayError(errors.upstreamError, `The model answered with a ${b.type} block, which the messages protocol cannot carry.`);
  }
}

/** The client's Message for a canonical response. */
export function encodeMessagesResponse(r: CanonicalResponse): Json {
  return {
    id: r.id || newMessageId(),
    type: "message",
    role: "assistant",
    model: r.model,
    content: r.content.map(blockOut),
    stop_reason: stopReasonOut(r.stopReason),
    stop_sequence: r.stopSequence ?? null,
    usage: wireUsage(r.usage),
  };
}
