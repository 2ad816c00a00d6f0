// Turns a chat-completions SSE stream from a channel into canonical events. The wire has
// no block events, so blocks are opened when a new kind of delta (reasoning, text, a new
// tool call index) arrives and closed when the next kind starts or the choice finishes;
// images (`delta.images`) come whole, each a block of its own.

import type { SseEvent, StreamDecoder } from "../adapter.js";
import type { CanonicalEvent, StopReason } from "../canonical.js";
import { emptyUsage, type Usage } from "../usage.js";
import { isObject, stopReasonOf } from "./chat-common.js";
import { imageBlocksOf } from "./chat-images.js";
import { normalizeOpenAIUsage, withServiceTier } from "./usage.js";

type Kind = "text" | "thinking" | "tool";

class ChatStreamDecoder implements StreamDecoder {
  #started = false;
  #done = false;
  #open?: { index: number; kind: Kind };
  #next = 0;
  /** Wire tool_calls[].index → canonical block index. */
  readonly #tools = new Map<number, number>();
  #finish: unknown;
  #refused = false;
  #usage: Usage = emptyUsage();
  /** The service tier the chunks name (each chunk does; the usage chunk may not be last). */
  #serviceTier: unknown;

  usageSoFar(): Usage {
    return { ...this.#usage };
  }

  decode(event: SseEvent): CanonicalEvent[] {
    if (this.#done) return [];
    if (event.data.trim() === "[DONE]") return this.#stop();
    let chunk: unknown;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      return this.#fail("the upstream sent a stream chunk that is not JSON.");
    }
    if (!isObject(chunk)) return [];
    if (isObject(chunk.error)) {
      const message = typeof chunk.error.message === "string" ? chunk.error.message : "upstream stream error";
      return this.#fail(message);
    }
    const out: CanonicalEvent[] = [];
    if (!this.#started) {
      this.#started = true;
      out.push({ type: "message_start", id: String(chunk.id ?? ""), model: String(chunk.model ?? "") });
    }
    if (chunk.service_tier !== undefined && chunk.service_tier !== null) this.#serviceTier = chunk.service_tier;
    const usage = withServiceTier(normalizeOpenAIUsage(chunk.usage), this.#serviceTier);
    if (usage) this.#usage = usage;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    const choice: unknown = choices.find((c: unknown) => isObject(c) && (c.index ?? 0) === 0);
    if (!isObject(choice)) return out;
    if (isObject(choice.delta) && !this.#delta(choice.delta, out)) return out;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.#finish = choice.finish_reason;
      this.#close(out);
    }
    return out;
  }

  /** A stream is whole only with its `data: [DONE]`: without it, even after a finish
   * reason, the upstream may have been cut before its usage chunk. */
  end(): CanonicalEvent[] {
    if (this.#done) return [];
    return this.#fail("the upstream stream ended before the answer finished.");
  }

  /** Handles one delta; false when it ended the stream with an error. */
  #delta(delta: Record<string, unknown>, out: CanonicalEvent[]): boolean {
    // reasoning_content (DeepSeek, vLLM) or reasoning (OpenRouter): OpenAI-compatible upstreams' thinking.
    const thinking = delta.reasoning_content ?? delta.reasoning;
    if (typeof thinking === "string" && thinking !== "") {
      out.push({ type: "thinking_delta", index: this.#ensure("thinking", out), text: thinking });
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      out.push({ type: "text_delta", index: this.#ensure("text", out), text: delta.content });
    }
    if (typeof delta.refusal === "string" && delta.refusal !== "") {
      this.#refused = true;
      out.push({ type: "text_delta", index: this.#ensure("text", out), text: delta.refusal });
    }
    for (const image of imageBlocksOf(delta.images)) {
      // Each image arrives whole (OpenRouter, LiteLLM): a block that opens and closes at once.
      this.#close(out);
      const index = this.#next++;
      out.push({ type: "block_start", index, block: { type: "image", source: image.source } }, { type: "block_stop", index });
    }
    const calls: unknown[] = Array.isArray(delta.tool_calls) ? delta.tool_calls
      : isObject(delta.function_call) ? [{ index: 0, function: delta.function_call }] : [];
    for (const [pos, call] of calls.entries()) {
      if (!isObject(call)) continue;
      const wire = typeof call.index === "number" ? call.index : pos;
      const fn = isObject(call.function) ? call.function : {};
      let index = this.#tools.get(wire);
      if (index === undefined) {
        this.#close(out);
        index = this.#next++;
        this.#tools.set(wire, index);
        this.#open = { index, kind: "tool" };
        const id = typeof call.id === "string" && call.id !== "" ? call.id : `call_${this.#tools.size - 1}`;
        out.push({ type: "block_start", index, block: { type: "tool_use", id, name: typeof fn.name === "string" ? fn.name : "" } });
      } else if (this.#open?.index !== index) {
        out.push(...this.#fail("the upstream interleaved the arguments of parallel tool calls."));
        return false;
      }
      if (typeof fn.arguments === "string" && fn.arguments !== "") {
        out.push({ type: "tool_input_delta", index, partialJson: fn.arguments });
      }
    }
    return true;
  }

  /** The index of an open block of `kind`, opening one (and closing another) if needed. */
  #ensure(kind: Kind, out: CanonicalEvent[]): number {
    if (this.#open?.kind === kind && kind !== "tool") return this.#open.index;
    this.#close(out);
    const index = this.#next++;
    this.#open = { index, kind };
    out.push({ type: "block_start", index, block: { type: kind === "thinking" ? "thinking" : "text" } });
    return index;
  }

  #close(out: CanonicalEvent[]): void {
    if (!this.#open) return;
    out.push({ type: "block_stop", index: this.#open.index });
    this.#open = undefined;
  }

  #stop(): CanonicalEvent[] {
    const out: CanonicalEvent[] = [];
    if (!this.#started) return this.#fail("the upstream stream ended without any data.");
    this.#close(out);
    this.#done = true;
    let stopReason: StopReason = stopReasonOf(this.#finish);
    if (this.#refused && this.#finish !== "content_filter") stopReason = "refusal";
    else if (this.#finish === undefined && this.#tools.size > 0) stopReason = "tool_use";
    out.push({ type: "message_stop", stopReason, usage: this.#usage });
    return out;
  }

  #fail(message: string): CanonicalEvent[] {
    this.#done = true;
    return [{ type: "error", status: 502, message }];
  }
}

/** A decoder for one chat-completions stream from a channel. */
export function chatStreamDecoder(): StreamDecoder {
  return new ChatStreamDecoder();
}
