// A gemini channel's SSE stream → canonical events. Each `data:` is a whole
// GenerateContentResponse holding the next parts; Gemini has no block events, so this opens
// and closes blocks itself: text parts continue one text block, thought parts one thinking
// block, each functionCall is a whole tool_use (start, one input delta, stop), and each
// inlineData image a whole image block.

import type { SseEvent, StreamDecoder } from "../adapter.js";
import type { CanonicalEvent, ImageSource, StopReason, StreamBlockStart } from "../canonical.js";
import { emptyUsage, type Usage } from "../usage.js";
import { stopReasonOf } from "./mapping.js";
import { GroundingCount, normalizeGeminiUsage, withGrounding } from "./usage.js";
import { CallIds, isObject, newResponseId, type JsonObject } from "./wire.js";

type Open = { readonly kind: StreamBlockStart["type"]; readonly index: number; signed: boolean };

class GeminiStreamDecoder implements StreamDecoder {
  #started = false;
  #done = false;
  #next = 0;
  #open: Open | undefined;
  #usage: Usage = emptyUsage();
  readonly #grounding = new GroundingCount();
  #stop: StopReason | undefined;
  #calledTool = false;
  readonly #ids = new CallIds();

  usageSoFar(): Usage {
    return { ...this.#usage };
  }

  decode(event: SseEvent): CanonicalEvent[] {
    if (this.#done) return [];
    let chunk: unknown;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      return this.#fail(502, "The gemini channel sent a stream event that is not JSON.");
    }
    if (!isObject(chunk)) return [];
    const out: CanonicalEvent[] = [];
    if (!this.#started) {
      this.#started = true;
      const id = typeof chunk.responseId === "string" && chunk.responseId !== "" ? chunk.responseId : newResponseId();
      const usage = normalizeGeminiUsage(chunk.usageMetadata);
      out.push({ type: "message_start", id, model: typeof chunk.modelVersion === "string" ? chunk.modelVersion : "", ...(usage && { usage }) });
    }
    if (isObject(chunk.error)) {
      const status = typeof chunk.error.code === "number" ? chunk.error.code : 500;
      const message = typeof chunk.error.message === "string" ? chunk.error.message : "The gemini channel failed mid-stream.";
      return [...out, ...this.#fail(status, message)];
    }
    this.#usage = normalizeGeminiUsage(chunk.usageMetadata) ?? this.#usage;
    this.#grounding.take(chunk);
    const candidate = Array.isArray(chunk.candidates) && isObject(chunk.candidates[0]) ? chunk.candidates[0] : undefined;
    if (candidate === undefined) {
      if (isObject(chunk.promptFeedback) && chunk.promptFeedback.blockReason != null) this.#stop = "content_filter";
      return out;
    }
    const parts = isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const part of parts) if (isObject(part)) this.#part(part, out);
    if (candidate.finishReason != null) {
      this.#close(out);
      this.#stop = stopReasonOf(candidate.finishReason, this.#calledTool);
    }
    return out;
  }

  finished(): boolean {
    return this.#stop !== undefined;
  }

  /** Ends the stream: message_stop after a finish reason, else an error (the stream broke off). */
  end(): CanonicalEvent[] {
    if (this.#done) return [];
    const out: CanonicalEvent[] = [];
    if (!this.#started) out.push({ type: "message_start", id: newResponseId(), model: "" });
    this.#started = true;
    if (this.#stop === undefined) return [...out, ...this.#fail(502, "The gemini channel's stream ended without a finishReason.")];
    this.#close(out);
    this.#done = true;
    out.push({ type: "message_stop", stopReason: this.#stop, usage: withGrounding(this.#usage, this.#grounding)! });
    return out;
  }

  #part(p: JsonObject, out: CanonicalEvent[]): void {
    const signature = typeof p.thoughtSignature === "string" ? p.thoughtSignature : undefined;
    const text = typeof p.text === "string" ? p.text : "";
    if (p.thought === true) {
      if (this.#open?.kind !== "thinking" || (this.#open.signed && text !== "")) this.#begin({ type: "thinking" }, out);
      const index = this.#open!.index;
      if (text !== "") out.push({ type: "thinking_delta", index, text });
      if (signature !== undefined) {
        out.push({ type: "signature_delta", index, signature });
        this.#open!.signed = true;
      }
      return;
    }
    if (signature !== undefined) {
      // A signature on a non-thought part: an empty signed thinking block just before it.
      const index = this.#begin({ type: "thinking" }, out);
      out.push({ type: "signature_delta", index, signature });
      this.#close(out);
    }
    if (isObject(p.functionCall)) {
      const call = p.functionCall;
      const name = typeof call.name === "string" ? call.name : "";
      const id = this.#ids.call(typeof call.id === "string" ? call.id : undefined, name);
      const index = this.#begin({ type: "tool_use", id, name }, out);
      out.push({ type: "tool_input_delta", index, partialJson: JSON.stringify(isObject(call.args) ? call.args : {}) });
      this.#close(out);
      this.#calledTool = true;
    } else if (p.inlineData != null || p.fileData != null) {
      // An image model's picture arrives whole in one part: an image block that opens and
      // closes at once. Other media are skipped, as in whole answers (parts-decode.ts).
      const source = imageSourceOf(p);
      if (source !== undefined) {
        this.#begin({ type: "image", source }, out);
        this.#close(out);
      }
    } else if (text !== "") {
      if (this.#open?.kind !== "text") this.#begin({ type: "text" }, out);
      out.push({ type: "text_delta", index: this.#open!.index, text });
    }
  }

  /** Closes any open block and opens a new one; returns its index. */
  #begin(block: StreamBlockStart, out: CanonicalEvent[]): number {
    this.#close(out);
    const index = this.#next++;
    out.push({ type: "block_start", index, block });
    this.#open = { kind: block.type, index, signed: false };
    return index;
  }

  #close(out: CanonicalEvent[]): void {
    if (this.#open === undefined) return;
    out.push({ type: "block_stop", index: this.#open.index });
    this.#open = undefined;
  }

  #fail(status: number, message: string): CanonicalEvent[] {
    if (this.#done) return [];
    this.#done = true;
    const out: CanonicalEvent[] = [];
    if (!this.#started) {
      this.#started = true;
      out.push({ type: "message_start", id: newResponseId(), model: "" });
    }
    this.#close(out);
    out.push({ type: "error", status, message });
    return out;
  }
}

/** The image of an inlineData or fileData part, or undefined when it is not an image. */
function imageSourceOf(p: JsonObject): ImageSource | undefined {
  const d = isObject(p.inlineData) ? p.inlineData : undefined;
  if (d !== undefined) {
    const mime = typeof d.mimeType === "string" ? d.mimeType : "";
    return mime.startsWith("image/") && typeof d.data === "string" ? { kind: "base64", mediaType: mime, data: d.data } : undefined;
  }
  const f = isObject(p.fileData) ? p.fileData : undefined;
  if (f === undefined || typeof f.fileUri !== "string") return undefined;
  return typeof f.mimeType !== "string" || f.mimeType.startsWith("image/") ? { kind: "url", url: f.fileUri } : undefined;
}

/** A decoder for one upstream generate-content stream. */
export function geminiStreamDecoder(): StreamDecoder {
  return new GeminiStreamDecoder();
}
