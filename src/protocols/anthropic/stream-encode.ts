// Writes the canonical stream as a messages-protocol SSE stream, event for event in the
// order the official SDK's MessageStream accumulates: message_start, content blocks,
// message_delta (stop reason and final usage), message_stop.

import type { StreamEncoder } from "../adapter.js";
import type { CanonicalEvent, StreamBlockStart } from "../canonical.js";
import { emptyUsage } from "../usage.js";
import { streamEventError } from "../render-error.js";
import { renderAnthropicStreamError } from "./errors.js";
import type { Json } from "./fields.js";
import { imageBlockOut, newMessageId, stopReasonOut, wireUsage } from "./response.js";

function sse(event: string, data: Json): string {
  return `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
}

function contentBlock(b: StreamBlockStart): Json {
  switch (b.type) {
    case "text":
      return { type: "text", text: "" };
    case "thinking":
      return { type: "thinking", thinking: "", signature: "" };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: b.data };
    case "tool_use":
      return { type: "tool_use", id: b.id, name: b.name, input: {} };
    case "image":
      return imageBlockOut(b.source);
  }
}

function delta(index: number, d: Json): string {
  return sse("content_block_delta", { index, delta: d });
}

/** Encodes one response's canonical events as messages-protocol SSE. */
export class MessagesStreamEncoder implements StreamEncoder {
  encode(e: CanonicalEvent): string {
    switch (e.type) {
      case "message_start":
        return sse("message_start", {
          message: {
            id: e.id || newMessageId(), type: "message", role: "assistant", model: e.model, content: [],
            stop_reason: null, stop_sequence: null, usage: wireUsage(e.usage ?? emptyUsage()),
          },
        });
      case "block_start":
        return sse("content_block_start", { index: e.index, content_block: contentBlock(e.block) });
      case "text_delta":
        return delta(e.index, { type: "text_delta", text: e.text });
      case "thinking_delta":
        return delta(e.index, { type: "thinking_delta", thinking: e.text });
      case "signature_delta":
        return delta(e.index, { type: "signature_delta", signature: e.signature });
      case "tool_input_delta":
        return delta(e.index, { type: "input_json_delta", partial_json: e.partialJson });
      case "block_stop":
        return sse("content_block_stop", { index: e.index });
      case "message_stop":
        return sse("message_delta", {
          delta: { stop_reason: stopReasonOut(e.stopReason), stop_sequence: e.stopSequence ?? null },
          usage: wireUsage(e.usage),
        }) + sse("message_stop", {});
      case "error":
        return renderAnthropicStreamError(streamEventError(e));
    }
  }
}
