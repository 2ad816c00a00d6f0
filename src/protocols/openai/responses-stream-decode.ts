// Turns a responses-protocol SSE stream from a channel into canonical events. The wire
// announces output items (message, function_call, reasoning) and streams their parts;
// each text part, tool call and reasoning item becomes one canonical block, opened at its
// first delta and closed when its item is done. The answer ends at response.completed
// (or .incomplete); response.failed and `error` are the upstream's own failure.

import type { SseEvent, StreamDecoder } from "../adapter.js";
import type { CanonicalEvent, StreamBlockStart } from "../canonical.js";
import { emptyUsage, type Usage } from "../usage.js";
import { isObject } from "./chat-common.js";
import { failureMessage, reasoningText, stopReasonOfResponse } from "./responses-response-decode.js";
import { responseUsage } from "./responses-usage.js";

type Json = Record<string, unknown>;
type Kind = "text" | "thinking" | "tool";

/** The block being streamed: its canonical index, and the wire part it belongs to. */
interface OpenBlock {
  readonly index: number;
  readonly kind: Kind;
  /** output_index (and content_index for text) of the wire part. */
  readonly key: string;
  /** Tool call: arguments arrived as deltas. Reasoning: the summary part last written. */
  streamed: boolean;
  part: number;
}

/** HTTP status for an `error` event's code; anything else is the upstream's failure. */
const STATUS: Readonly<Record<string, number>> = { rate_limit_exceeded: 429, invalid_prompt: 400, server_error: 502 };

/** The status of a failed response, by its error's code. */
function failureStatus(response: unknown): number {
  const err = isObject(response) ? response.error : undefined;
  return (isObject(err) && STATUS[String(err.code)]) || 502;
}

class ResponsesStreamDecoder implements StreamDecoder {
  #started = false;
  #done = false;
  #open?: OpenBlock;
  #next = 0;
  /** output_index of items that produced a block, so a done item is not emitted twice. */
  readonly #shown = new Set<number>();
  #called = false;
  #refused = false;
  /** The last usage any event's response carried (in-progress events may). */
  #usage: Usage | undefined;

  usageSoFar(): Usage {
    return this.#usage ?? emptyUsage();
  }

  decode(event: SseEvent): CanonicalEvent[] {
    if (this.#done) return [];
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      return this.#fail(502, "the upstream sent a stream event that is not JSON.");
    }
    if (!isObject(data)) return [];
    const out: CanonicalEvent[] = [];
    const type = data.type ?? event.event;
    if (isObject(data.response)) this.#usage = responseUsage(data.response) ?? this.#usage;
    if (type === "error") return this.#fail(STATUS[String(data.code)] ?? 502, typeof data.message === "string" ? data.message : "upstream stream error");
    if (!this.#started) this.#start(isObject(data.response) ? data.response : {}, out);
    const at = typeof data.output_index === "number" ? data.output_index : 0;
    switch (type) {
      case "response.output_item.added":
        if (isObject(data.item) && data.item.type === "function_call") this.#toolStart(data.item, at, out);
        break;
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (type === "response.refusal.delta") this.#refused = true;
        this.#text(`${at}:${String(data.content_index ?? 0)}`, at, data.delta, out);
        break;
      case "response.function_call_arguments.delta":
        if (this.#open?.kind !== "tool" || this.#open.key !== String(at)) {
          return [...out, ...this.#fail(502, "the upstream streamed arguments of a function call it did not announce.")];
        }
        this.#arguments(data.delta, out);
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        this.#thinking(at, Number(data.summary_index ?? data.content_index ?? 0), data.delta, out);
        break;
      case "response.output_item.done":
        if (isObject(data.item)) this.#itemDone(data.item, at, out);
        break;
      case "response.completed":
      case "response.incomplete":
        return this.#stop(isObject(data.response) ? data.response : {}, out);
      case "response.failed":
        return [...out, ...this.#fail(failureStatus(data.response), failureMessage(data.response))];
    }
    // Other events (in_progress, content_part.*, *.done texts, annotations) repeat what the
    // deltas already said.
    return out;
  }

  /** An upstream that ends without response.completed did not finish the answer: what is
   * open is closed, and the stream ends with an error. */
  end(): CanonicalEvent[] {
    if (this.#done) return [];
    if (!this.#started) return this.#fail(502, "the upstream stream ended without any data.");
    return this.#fail(502, "the upstream stream ended before the response completed.");
  }

  #start(response: Json, out: CanonicalEvent[]): void {
    this.#started = true;
    out.push({ type: "message_start", id: String(response.id ?? ""), model: String(response.model ?? "") });
  }

  /** Opens a block (closing the one before); `start` for a tool call, which names itself. */
  #openBlock(kind: Kind, key: string, out: CanonicalEvent[], start?: StreamBlockStart): OpenBlock {
    this.#close(out);
    const index = this.#next++;
    this.#open = { index, kind, key, streamed: false, part: 0 };
    out.push({ type: "block_start", index, block: start ?? { type: kind === "thinking" ? "thinking" : "text" } });
    return this.#open;
  }

  #close(out: CanonicalEvent[]): void {
    if (!this.#open) return;
    out.push({ type: "block_stop", index: this.#open.index });
    this.#open = undefined;
  }

  #text(key: string, at: number, delta: unknown, out: CanonicalEvent[]): void {
    if (typeof delta !== "string" || delta === "") return;
    const open = this.#open?.kind === "text" && this.#open.key === key ? this.#open : this.#openBlock("text", key, out);
    this.#shown.add(at);
    out.push({ type: "text_delta", index: open.index, text: delta });
  }

  #toolStart(item: Json, at: number, out: CanonicalEvent[]): void {
    this.#called = true;
    this.#shown.add(at);
    const id = typeof item.call_id === "string" && item.call_id !== "" ? item.call_id : `call_${at}`;
    const name = typeof item.name === "string" ? item.name : "";
    this.#openBlock("tool", String(at), out, { type: "tool_use", id, name });
    // Some servers send the arguments whole with the item instead of as deltas.
    if (typeof item.arguments === "string" && item.arguments !== "") this.#arguments(item.arguments, out);
  }

  #arguments(delta: unknown, out: CanonicalEvent[]): void {
    if (typeof delta !== "string" || delta === "" || !this.#open) return;
    this.#open.streamed = true;
    out.push({ type: "tool_input_delta", index: this.#open.index, partialJson: delta });
  }

  /** A reasoning delta; a new summary part of the same item is set apart by a blank line. */
  #thinking(at: number, part: number, delta: unknown, out: CanonicalEvent[]): void {
    if (typeof delta !== "string" || delta === "") return;
    let open = this.#open;
    if (open?.kind !== "thinking" || open.key !== String(at)) {
      open = this.#openBlock("thinking", String(at), out);
      open.part = part;
    } else if (part !== open.part) {
      open.part = part;
      out.push({ type: "thinking_delta", index: open.index, text: "\n\n" });
    }
    this.#shown.add(at);
    out.push({ type: "thinking_delta", index: open.index, text: delta });
  }

  /** Closes an item's block; an item the stream did not show part by part (reasoning that
   * is only encrypted content, a call announced only now) is emitted whole. */
  #itemDone(item: Json, at: number, out: CanonicalEvent[]): void {
    const key = String(at);
    const mine = this.#open !== undefined && this.#open.key.split(":")[0] === key;
    if (item.type === "function_call") {
      if (!mine || this.#open?.kind !== "tool") this.#toolStart({ ...item, arguments: "" }, at, out);
      if (!this.#open!.streamed && typeof item.arguments === "string") this.#arguments(item.arguments, out);
    } else if (item.type === "reasoning") {
      const encrypted = typeof item.encrypted_content === "string" && item.encrypted_content !== "" ? item.encrypted_content : undefined;
      if (!mine || this.#open?.kind !== "thinking") {
        const text = reasoningText(item);
        if (text === "" && encrypted === undefined) return;
        const open = this.#openBlock("thinking", key, out);
        if (text !== "") out.push({ type: "thinking_delta", index: open.index, text });
      }
      if (encrypted !== undefined) out.push({ type: "signature_delta", index: this.#open!.index, signature: encrypted });
    } else if (item.type === "message" && !mine && !this.#shown.has(at) && Array.isArray(item.content)) {
      item.content.forEach((part: unknown, k) => {
        if (!isObject(part)) return;
        if (part.type === "refusal") this.#refused = true;
        this.#text(`${at}:${k}`, at, part.type === "refusal" ? part.refusal : part.text, out);
      });
    }
    this.#shown.add(at);
    if (this.#open?.key.split(":")[0] === key) this.#close(out);
  }

  #stop(response: Json, out: CanonicalEvent[]): CanonicalEvent[] {
    this.#close(out);
    this.#done = true;
    out.push({
      type: "message_stop",
      stopReason: stopReasonOfResponse(response, this.#called, this.#refused),
      usage: responseUsage(response) ?? emptyUsage(),
    });
    return out;
  }

  #fail(status: number, message: string): CanonicalEvent[] {
    const out: CanonicalEvent[] = [];
    this.#close(out);
    this.#done = true;
    out.push({ type: "error", status, message });
    return out;
  }
}

/** A decoder for one responses-protocol stream from a channel. */
export function responsesStreamDecoder(): StreamDecoder {
  return new ResponsesStreamDecoder();
}
