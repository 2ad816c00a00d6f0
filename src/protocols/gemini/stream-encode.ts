// Canonical events → the SSE a Gemini client reads from `:streamGenerateContent?alt=sse`:
// `data:` lines, each a whole GenerateContentResponse with the next parts. Function calls
// are whole parts, so tool input is buffered until its block stops; an image is one
// inlineData part, written when its block starts; the last chunk carries finishReason and
// usageMetadata.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { StreamEncoder } from "../adapter.js";
import type { CanonicalEvent } from "../canonical.js";
import { streamEventError } from "../render-error.js";
import { renderGeminiStreamError } from "./errors.js";
import { finishReasonOf, usageMetadataOf } from "./mapping.js";
import { mediaPart } from "./parts-encode.js";
import { isObject, newResponseId, type GeminiPart, type JsonObject } from "./wire.js";

interface OpenBlock {
  readonly type: string;
  readonly id?: string;
  readonly name?: string;
  json: string;
  hadText: boolean;
}

class GeminiStreamEncoder implements StreamEncoder {
  #id = "";
  #model = "";
  readonly #blocks = new Map<number, OpenBlock>();
  /** A signature Gemini would put on the next part (from an empty signed thinking block). */
  #signature: string | undefined;

  encode(event: CanonicalEvent): string {
    switch (event.type) {
      case "message_start":
        this.#id = event.id || newResponseId();
        this.#model = event.model;
        return "";
      case "block_start": {
        const b = event.block;
        if (b.type === "image") return this.#chunk([mediaPart(b.source)]);
        this.#blocks.set(event.index, { type: b.type, json: "", hadText: false, ...(b.type === "tool_use" && { id: b.id, name: b.name }) });
        return "";
      }
      case "text_delta":
        return this.#chunk([{ text: event.text }]);
      case "thinking_delta": {
        const block = this.#blocks.get(event.index);
        if (block) block.hadText = true;
        const flush: GeminiPart[] = this.#signature === undefined ? [] : [{ text: "" }];
        return this.#chunk([...flush, { text: event.text, thought: true }]);
      }
      case "signature_delta":
        if (this.#blocks.get(event.index)?.hadText) {
          return this.#chunk([{ text: "", thought: true, thoughtSignature: event.signature }], false);
        }
        this.#signature = event.signature;
        return "";
      case "tool_input_delta": {
        const block = this.#blocks.get(event.index);
        if (block) block.json += event.partialJson;
        return "";
      }
      case "block_stop":
        return this.#stopBlock(event.index);
      case "message_stop":
        return this.#chunk([{ text: "" }], true, {
          finishReason: finishReasonOf(event.stopReason),
          usageMetadata: usageMetadataOf(event.usage),
        });
      case "error":
        return renderGeminiStreamError(streamEventError(event));
    }
  }

  #stopBlock(index: number): string {
    const block = this.#blocks.get(index);
    this.#blocks.delete(index);
    if (block?.type !== "tool_use") return "";
    let args: unknown;
    try {
      args = JSON.parse(block.json === "" ? "{}" : block.json);
    } catch {
      args = undefined;
    }
    if (!isObject(args)) {
      const err = new GatewayError(errors.upstreamError, `The upstream sent arguments for ${block.name} that are not a JSON object.`);
      return renderGeminiStreamError(err);
    }
    return this.#chunk([{ functionCall: { id: block.id, name: block.name ?? "", args } }]);
  }

  /** One chunk; a pending signature goes onto its first part when `takeSignature`. */
  #chunk(parts: GeminiPart[], takeSignature = true, end?: { finishReason: string; usageMetadata: JsonObject }): string {
    if (takeSignature && this.#signature !== undefined) {
      parts[0] = { ...parts[0], thoughtSignature: this.#signature };
      this.#signature = undefined;
    }
    const candidate = { content: { role: "model", parts }, ...(end && { finishReason: end.finishReason }), index: 0 };
    return sse(JSON.stringify({
      candidates: [candidate],
      ...(end && { usageMetadata: end.usageMetadata }),
      modelVersion: this.#model,
      responseId: this.#id,
    }));
  }
}

function sse(data: string): string {
  return `data: ${data}\r\n\r\n`;
}

/** An encoder for one streamed answer to a Gemini client. */
export function geminiStreamEncoder(): StreamEncoder {
  return new GeminiStreamEncoder();
}
