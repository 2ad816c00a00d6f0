// ConverseStream's events (event-stream frames named by :event-type) as Anthropic's SSE:
//   messageStart                      → message_start (usage zeros: Converse tells it last)
//   contentBlockStart {toolUse}       → content_block_start tool_use
//   contentBlockDelta {text}          → text_delta (the block started on its first delta:
//                                       Converse sends no start for text)
//   contentBlockDelta {toolUse.input} → input_json_delta
//   contentBlockDelta {reasoningContent} → thinking_delta / signature_delta
//   contentBlockStop                  → content_block_stop
//   messageStop {stopReason}          → held until the usage comes
//   metadata {usage}                  → message_delta (stop_reason, input, output and cache
//                                       counts), then message_stop
// The usage reader merges message_delta's counts over message_start's zeros, so the bill
// is metadata's. A stream that ends without metadata has no message_stop: it is cut, and
// billed as an estimate. Exception frames become Anthropic's error event.

import type { Message } from "@smithy/eventstream-codec";
import { toUtf8 } from "@smithy/util-utf8";
import { anthropicStopReason, anthropicUsage } from "./converse-answer.js";
import { CorruptFrame, exceptionSse, frameHeader } from "./eventstream.js";

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function sse(type: string, data: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** The kind of Anthropic block a Converse block became. */
type BlockType = "text" | "tool_use" | "thinking" | "redacted_thinking";

/** Reads one ConverseStream answer, frame by frame (a FrameReader: state per stream). */
export class ConverseStreamReader {
  readonly #model: string;
  readonly #id: string;
  #started = false;
  /** Converse block index → the Anthropic block (numbered from 0 in order of appearance). */
  readonly #blocks = new Map<number, { index: number; type: BlockType; open: boolean }>();
  #stopReason: string | undefined;
  #usage: Json | undefined;
  #finished = false;

  constructor(model: string, id: string) {
    this.#model = model;
    this.#id = id;
  }

  /** The SSE text of one frame (bound: it is handed to FrameDecoder). */
  readonly read = (message: Message): string => {
    const failure = exceptionSse(message);
    if (failure !== undefined) return failure;
    if (frameHeader(message.headers, ":message-type") !== "event" || this.#finished) return "";
    const type = frameHeader(message.headers, ":event-type");
    let data: unknown;
    try {
      data = JSON.parse(toUtf8(message.body));
    } catch {
      throw new CorruptFrame(`a ${type ?? "Converse"} event that is not JSON`);
    }
    if (!isObject(data)) throw new CorruptFrame(`a ${type ?? "Converse"} event that is not an object`);
    switch (type) {
      case "messageStart": return this.#start();
      case "contentBlockStart": return this.#blockStart(data);
      case "contentBlockDelta": return this.#delta(data);
      case "contentBlockStop": return this.#blockStop(data);
      case "messageStop":
        this.#stopReason = anthropicStopReason(data.stopReason);
        return this.#closeAll() + this.#finishWhenReady();
      case "metadata":
        this.#usage = anthropicUsage(data.usage);
        return this.#finishWhenReady();
      default: return ""; // events added after this reader was written
    }
  };

  #start(): string {
    if (this.#started) return "";
    this.#started = true;
    return sse("message_start", {
      message: {
        id: this.#id, type: "message", role: "assistant", model: this.#model, content: [], stop_reason: null, stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
  }

  /** A block's start (and the message's, if it has not started). */
  #open(converseIndex: number, type: BlockType, contentBlock: Json): string {
    const index = this.#blocks.size;
    this.#blocks.set(converseIndex, { index, type, open: true });
    return this.#start() + sse("content_block_start", { index, content_block: contentBlock });
  }

  #blockStart(d: Json): string {
    const start = isObject(d.start) ? d.start : {};
    const at = Number(d.contentBlockIndex);
    if (!isObject(start.toolUse) || this.#blocks.has(at)) return "";
    const t = start.toolUse;
    return this.#open(at, "tool_use", { type: "tool_use", id: String(t.toolUseId ?? ""), name: String(t.name ?? ""), input: {} });
  }

  #delta(d: Json): string {
    const delta = isObject(d.delta) ? d.delta : {};
    const at = Number(d.contentBlockIndex);
    let out = "";
    if (!this.#blocks.has(at)) {
      const reasoning = isObject(delta.reasoningContent) ? delta.reasoningContent : undefined;
      if (typeof delta.text === "string") out = this.#open(at, "text", { type: "text", text: "" });
      else if (typeof reasoning?.redactedContent === "string") return this.#open(at, "redacted_thinking", { type: "redacted_thinking", data: reasoning.redactedContent });
      else if (reasoning) out = this.#open(at, "thinking", { type: "thinking", thinking: "", signature: "" });
      else return "";
    }
    const block = this.#blocks.get(at)!;
    if (!block.open) return out;
    const index = block.index;
    if (block.type === "text" && typeof delta.text === "string" && delta.text !== "") {
      return out + sse("content_block_delta", { index, delta: { type: "text_delta", text: delta.text } });
    }
    if (block.type === "tool_use" && isObject(delta.toolUse) && typeof delta.toolUse.input === "string" && delta.toolUse.input !== "") {
      return out + sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: delta.toolUse.input } });
    }
    if (block.type === "thinking" && isObject(delta.reasoningContent)) {
      const r = delta.reasoningContent;
      if (typeof r.text === "string" && r.text !== "") return out + sse("content_block_delta", { index, delta: { type: "thinking_delta", thinking: r.text } });
      if (typeof r.signature === "string" && r.signature !== "") return out + sse("content_block_delta", { index, delta: { type: "signature_delta", signature: r.signature } });
    }
    return out;
  }

  #blockStop(d: Json): string {
    const block = this.#blocks.get(Number(d.contentBlockIndex));
    if (!block?.open) return "";
    block.open = false;
    return sse("content_block_stop", { index: block.index });
  }

  /** Stops for the blocks still open when the message stops. */
  #closeAll(): string {
    let out = "";
    for (const block of this.#blocks.values()) {
      if (!block.open) continue;
      block.open = false;
      out += sse("content_block_stop", { index: block.index });
    }
    return out;
  }

  /** message_delta and message_stop, once both the stop reason and the usage came. */
  #finishWhenReady(): string {
    if (this.#stopReason === undefined || this.#usage === undefined || this.#finished) return "";
    this.#finished = true;
    return this.#start()
      + sse("message_delta", { delta: { stop_reason: this.#stopReason, stop_sequence: null }, usage: this.#usage })
      + sse("message_stop", {});
  }
}
