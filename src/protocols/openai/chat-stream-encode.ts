// Writes canonical stream events as the chat-completions chunks the OpenAI SDKs parse: a
// first chunk with the assistant role, content/reasoning/tool-call/image deltas, a chunk with
// finish_reason, and (when the client asked for include_usage) a usage chunk with no choices.
// A client of legacy `functions` gets its call as `delta.function_call` (the first call only:
// the legacy shape has room for one).

import type { StreamEncoder } from "../adapter.js";
import type { CanonicalEvent, CanonicalRequest } from "../canonical.js";
import { streamEventError } from "../render-error.js";
import { renderOpenAIStreamError } from "./errors.js";
import { chatId, finishReasonOf, wireUsage } from "./chat-common.js";
import { chatImage } from "./chat-images.js";

/** The SSE text the chat-completions protocol ends every stream with. */
export const CHAT_STREAM_TRAILER = "data: [DONE]\n\n";

class ChatStreamEncoder implements StreamEncoder {
  readonly #usage: boolean;
  readonly #legacy: boolean;
  #id = "";
  #model = "";
  readonly #created = Math.floor(Date.now() / 1000);
  /** Canonical block index → tool_calls[].index (tool calls count from 0 on their own). */
  readonly #toolIndex = new Map<number, number>();
  /** The fixed text around a chunk's delta, built once per stream: a stream writes one chunk
   * per token, so only the delta is serialised each time. */
  #prefix = "";
  #suffix = "";

  constructor(req: CanonicalRequest) {
    this.#usage = req.streamUsage === true;
    this.#legacy = req.legacyFunctions === true;
    this.#model = req.model;
  }

  encode(event: CanonicalEvent): string {
    switch (event.type) {
      case "message_start":
        this.#id = chatId(event.id);
        if (event.model) this.#model = event.model;
        this.#prefix = `data: ${JSON.stringify(this.#head()).slice(0, -1)},"choices":[{"index":0,"delta":`;
        this.#suffix = `,"logprobs":null,"finish_reason":null}]${this.#usage ? ',"usage":null' : ""}}\n\n`;
        return this.#chunk({ role: "assistant", content: "" });
      case "block_start":
        // An image comes whole; its chunk carries it as `delta.images` (see chat-images.ts).
        if (event.block.type === "image") return this.#chunk({ images: [chatImage(event.block.source)] });
        if (event.block.type !== "tool_use") return "";
        if (this.#legacy) {
          if (this.#toolIndex.size > 0) return "";
          this.#toolIndex.set(event.index, 0);
          return this.#chunk({ function_call: { name: event.block.name, arguments: "" } });
        }
        this.#toolIndex.set(event.index, this.#toolIndex.size);
        return this.#chunk({
          tool_calls: [{
            index: this.#toolIndex.get(event.index),
            id: event.block.id,
            type: "function",
            function: { name: event.block.name, arguments: "" },
          }],
        });
      case "text_delta":
        return event.text === "" ? "" : this.#delta("content", event.text);
      case "thinking_delta":
        return event.text === "" ? "" : this.#delta("reasoning_content", event.text);
      case "tool_input_delta": {
        const index = this.#toolIndex.get(event.index);
        if (index === undefined || event.partialJson === "") return "";
        if (this.#legacy) return this.#chunk({ function_call: { arguments: event.partialJson } });
        return this.#chunk({ tool_calls: [{ index, function: { arguments: event.partialJson } }] });
      }
      case "signature_delta":
      case "block_stop":
        return ""; // no wire counterpart: signatures cannot travel in chat-completions
      case "message_stop": {
        let finish: string = finishReasonOf(event.stopReason);
        if (this.#legacy && finish === "tool_calls" && this.#toolIndex.size > 0) finish = "function_call";
        let out = this.#chunk({}, finish);
        // Fields added to a fresh object, not after a spread: on Node 20 every property added
        // after an object spread builds a new hidden class (~200 B that only a full GC frees).
        if (this.#usage) {
          const last = Object.assign(this.#head(), { choices: [], usage: wireUsage(event.usage) });
          if (event.usage.serviceTier !== undefined) Object.assign(last, { service_tier: event.usage.serviceTier });
          out += this.#data(last);
        }
        return out;
      }
      case "error":
        return renderOpenAIStreamError(streamEventError(event));
    }
  }

  #head(): Record<string, unknown> {
    return { id: this.#id, object: "chat.completion.chunk", created: this.#created, model: this.#model };
  }

  /** A chunk whose delta is one text field, from the prebuilt prefix and suffix. */
  #delta(field: string, text: string): string {
    if (!this.#prefix) return this.#chunk({ [field]: text });
    return `${this.#prefix}{"${field}":${JSON.stringify(text)}}${this.#suffix}`;
  }

  #chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    const chunk: Record<string, unknown> = {
      ...this.#head(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    // With include_usage OpenAI sends "usage": null on every chunk but the last.
    if (this.#usage) chunk.usage = null;
    return this.#data(chunk);
  }

  #data(value: unknown): string {
    return `data: ${JSON.stringify(value)}\n\n`;
  }
}

/** A stream encoder for one chat-completions response to a client. */
export function chatStreamEncoder(req: CanonicalRequest): StreamEncoder {
  return new ChatStreamEncoder(req);
}
