// Reads an `anthropic` channel's SSE stream into canonical events. The wire already has
// block start/stop events; this keeps the usage spread over message_start and
// message_delta, renumbers blocks, and closes what an interrupted stream left open.

import type { SseEvent, StreamDecoder } from "../adapter.js";
import type { CanonicalEvent, StopReason } from "../canonical.js";
import { emptyUsage, type Usage } from "../usage.js";
import { isObject, type Json } from "./fields.js";
import { imageBlockIn, stopReasonIn } from "./response.js";
import { mergeReportedUsage, normalizeAnthropicUsage } from "./usage.js";

/** HTTP status for a stream `error` event's type. overloaded_error is 529 on the wire, a
 * status only this vendor uses; 503 tells every client to back off and retry. */
const STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400, authentication_error: 401, billing_error: 402, permission_error: 403,
  not_found_error: 404, request_too_large: 413, rate_limit_error: 429, api_error: 500,
  timeout_error: 504, overloaded_error: 503,
};

/** A text delta exactly as the messages API writes it; anything else takes the full parse. */
const textDelta = /^\{"type":"content_block_delta","index":(\d+),"delta":\{"type":"text_delta","text":("(?:[^"\\]|\\.)*")\}\}$/;

/** Decodes one messages-protocol SSE stream. */
export class MessagesStreamDecoder implements StreamDecoder {
  #started = false;
  #done = false;
  /** Wire block index → canonical index, for blocks we carry. */
  #blocks = new Map<number, number>();
  #open = new Set<number>();
  #next = 0;
  #usage: Usage = emptyUsage();
  /** The usage fields reported so far (message_start's, updated by each message_delta). */
  readonly #reported: Record<string, unknown> = {};
  #stop?: StopReason;
  #stopSequence?: string;

  usageSoFar(): Usage {
    return { ...this.#usage };
  }

  decode(event: SseEvent): CanonicalEvent[] {
    if (this.#done || event.event === "ping") return []; // keep-alives: not worth parsing
    // Most of a stream is text deltas in one fixed layout: read them without building the
    // event object (only the text's string literal is parsed).
    const text = textDelta.exec(event.data);
    if (text) {
      const index = this.#blocks.get(Number(text[1]));
      if (index === undefined || !this.#open.has(index)) return [];
      const value = JSON.parse(text[2]) as string;
      return value ? [{ type: "text_delta", index, text: value }] : [];
    }
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      this.#done = true;
      return [{ type: "error", status: 502, message: "The upstream sent a stream event that is not JSON." }];
    }
    if (!isObject(data)) return [];
    switch (data.type ?? event.event) {
      case "message_start": return this.#messageStart(data);
      case "content_block_start": return this.#blockStart(data);
      case "content_block_delta": return this.#delta(data);
      case "content_block_stop": return this.#blockStop(data);
      case "message_delta": this.#messageDelta(data); return [];
      case "message_stop": return this.#finish();
      case "error": return this.#error(data);
      default: return []; // ping, and event types added after this adapter was written
    }
  }

  /** A stream is whole only with its message_stop: without it the answer may be cut (half a
   * tool call's JSON, the final usage), which is an error, not a stop. */
  end(): CanonicalEvent[] {
    if (this.#done) return [];
    this.#done = true;
    const when = this.#started ? "before the message was complete" : "before it started";
    return [{ type: "error", status: 502, message: `The upstream stream ended ${when}.` }];
  }

  #messageStart(d: Json): CanonicalEvent[] {
    if (this.#started) return [];
    this.#started = true;
    const m = isObject(d.message) ? d.message : {};
    mergeReportedUsage(this.#reported, m.usage);
    this.#usage = normalizeAnthropicUsage(this.#reported) ?? emptyUsage();
    return [{ type: "message_start", id: String(m.id ?? ""), model: String(m.model ?? ""), usage: { ...this.#usage } }];
  }

  #blockStart(d: Json): CanonicalEvent[] {
    const b = isObject(d.content_block) ? d.content_block : {};
    const index = this.#next;
    const out: CanonicalEvent[] = [];
    switch (b.type) {
      case "text":
        out.push({ type: "block_start", index, block: { type: "text" } });
        if (typeof b.text === "string" && b.text) out.push({ type: "text_delta", index, text: b.text });
        break;
      case "thinking":
        out.push({ type: "block_start", index, block: { type: "thinking" } });
        if (typeof b.thinking === "string" && b.thinking) out.push({ type: "thinking_delta", index, text: b.thinking });
        if (typeof b.signature === "string" && b.signature) out.push({ type: "signature_delta", index, signature: b.signature });
        break;
      case "redacted_thinking":
        out.push({ type: "block_start", index, block: { type: "redacted_thinking", data: String(b.data ?? "") } });
        break;
      case "tool_use":
        out.push({ type: "block_start", index, block: { type: "tool_use", id: String(b.id ?? ""), name: String(b.name ?? "") } });
        if (isObject(b.input) && Object.keys(b.input).length > 0) out.push({ type: "tool_input_delta", index, partialJson: JSON.stringify(b.input) });
        break;
      case "image": {
        // An image model behind a messages-protocol upstream: the image comes whole here.
        const image = imageBlockIn(b.source);
        if (image === undefined) return [];
        out.push({ type: "block_start", index, block: { type: "image", source: image.source } });
        break;
      }
      default:
        return []; // server-tool blocks: never requested through the hub, so skipped
    }
    this.#blocks.set(Number(d.index), index);
    this.#open.add(index);
    this.#next++;
    return out;
  }

  #delta(d: Json): CanonicalEvent[] {
    const index = this.#blocks.get(Number(d.index));
    const x = isObject(d.delta) ? d.delta : {};
    if (index === undefined || !this.#open.has(index)) return [];
    switch (x.type) {
      case "text_delta":
        return typeof x.text === "string" && x.text ? [{ type: "text_delta", index, text: x.text }] : [];
      case "thinking_delta":
        return typeof x.thinking === "string" && x.thinking ? [{ type: "thinking_delta", index, text: x.thinking }] : [];
      case "signature_delta":
        return typeof x.signature === "string" && x.signature ? [{ type: "signature_delta", index, signature: x.signature }] : [];
      case "input_json_delta":
        return typeof x.partial_json === "string" && x.partial_json ? [{ type: "tool_input_delta", index, partialJson: x.partial_json }] : [];
      default:
        return []; // citations_delta: citations point into documents, which the hub never sends
    }
  }

  #blockStop(d: Json): CanonicalEvent[] {
    const index = this.#blocks.get(Number(d.index));
    if (index === undefined || !this.#open.delete(index)) return [];
    return [{ type: "block_stop", index }];
  }

  /** message_delta: the stop reason, and usage where output_tokens is cumulative and input or
   * cache counts, when present, replace the ones from message_start. */
  #messageDelta(d: Json): void {
    const x = isObject(d.delta) ? d.delta : {};
    if (x.stop_reason != null) this.#stop = stopReasonIn(x.stop_reason);
    if (typeof x.stop_sequence === "string") this.#stopSequence = x.stop_sequence;
    if (!isObject(d.usage)) return;
    mergeReportedUsage(this.#reported, d.usage);
    this.#usage = normalizeAnthropicUsage(this.#reported) ?? emptyUsage();
  }

  #finish(): CanonicalEvent[] {
    if (!this.#started) return this.end();
    this.#done = true;
    const out: CanonicalEvent[] = [...this.#open].map((index) => ({ type: "block_stop", index }) as const);
    this.#open.clear();
    out.push({
      type: "message_stop", stopReason: this.#stop ?? "end_turn",
      ...(this.#stopSequence !== undefined && { stopSequence: this.#stopSequence }), usage: { ...this.#usage },
    });
    return out;
  }

  #error(d: Json): CanonicalEvent[] {
    this.#done = true;
    const e = isObject(d.error) ? d.error : {};
    const status = STATUS[String(e.type)] ?? 502;
    return [{ type: "error", status, message: typeof e.message === "string" ? e.message : "The upstream stream failed." }];
  }
}
