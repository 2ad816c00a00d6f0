// Writes canonical stream events as the responses protocol's typed SSE events, in the order
// the openai SDK's accumulator (client.responses.stream) and Codex read them:
// response.created, response.in_progress; per output item output_item.added, its parts and
// deltas, their .done events, output_item.done; then response.completed (or .incomplete)
// with the whole Response. Every event is numbered by sequence_number from 0.

import type { StreamEncoder } from "../adapter.js";
import type { CanonicalEvent, CanonicalRequest, ImageSource, StreamBlockStart } from "../canonical.js";
import { streamEventError } from "../render-error.js";
import { renderResponsesStreamError } from "./errors.js";
import { encryptedContentOf, responsesEndOf, responsesWireUsage, ResponsesIds } from "./responses-common.js";
import { imageItem, items, namespaceOf, responseObject, type OutputItem, type ResponseState } from "./responses-response-encode.js";

/** An output item being streamed: what it is, where, and what it has gathered so far. */
interface OpenItem {
  readonly kind: "message" | "reasoning" | "function_call";
  readonly outputIndex: number;
  readonly id: string;
  /** The fixed start of this item's delta events (all but the delta and the number). */
  readonly deltaPrefix: string;
  text: string;
  /** reasoning: the signature (or redacted data) for encrypted_content. */
  encrypted: string | null;
  /** reasoning: a summary part was opened. */
  summaryOpen: boolean;
  readonly callId?: string;
  readonly name?: string;
}

class ResponsesStreamEncoder implements StreamEncoder {
  readonly #req: CanonicalRequest;
  readonly #ids = new ResponsesIds();
  readonly #createdAt = Math.floor(Date.now() / 1000);
  #id = "";
  #model: string;
  #seq = 0;
  #started = false;
  /** Finished output items by output_index (blocks may close out of order). */
  readonly #output: OutputItem[] = [];
  #nextOutput = 0;
  /** Canonical block index → its open output item. */
  readonly #open = new Map<number, OpenItem>();

  constructor(req: CanonicalRequest) {
    this.#req = req;
    this.#model = req.model;
  }

  encode(event: CanonicalEvent): string {
    switch (event.type) {
      case "message_start": {
        this.#id = this.#ids.response(event.id);
        if (event.model) this.#model = event.model;
        this.#started = true;
        const response = this.#response({ status: "in_progress" });
        return this.#event("response.created", { response }) + this.#event("response.in_progress", { response });
      }
      case "block_start":
        return this.#start(event.index, event.block);
      case "text_delta":
      case "thinking_delta":
        return this.#textDelta(event.index, event.text);
      case "signature_delta": {
        const item = this.#open.get(event.index);
        if (item?.kind === "reasoning") item.encrypted = (item.encrypted ?? "") + event.signature;
        return "";
      }
      case "tool_input_delta": {
        const item = this.#open.get(event.index);
        if (item?.kind !== "function_call" || event.partialJson === "") return "";
        item.text += event.partialJson;
        return this.#delta(item, event.partialJson);
      }
      case "block_stop":
        return this.#stop(event.index);
      case "message_stop": {
        const end = responsesEndOf(event.stopReason);
        const response = this.#response({
          status: end.status, incompleteDetails: end.incompleteDetails,
          usage: responsesWireUsage(event.usage), serviceTier: event.usage.serviceTier,
        });
        return this.#event(end.status === "completed" ? "response.completed" : "response.incomplete", { response });
      }
      case "error": {
        const err = streamEventError(event);
        let out = renderResponsesStreamError(err, this.#seq++);
        if (this.#started) {
          // Once the response exists the API ends it as failed, with the items made so far.
          const code = err.status === 429 ? "rate_limit_exceeded" : "server_error";
          out += this.#event("response.failed", { response: this.#response({ status: "failed", error: { code, message: err.message } }) });
        }
        return out;
      }
    }
  }

  #response(s: Omit<ResponseState, "id" | "createdAt" | "model" | "output">): Record<string, unknown> {
    return responseObject(this.#req, { id: this.#id, createdAt: this.#createdAt, model: this.#model, output: this.#output.filter((i) => i !== undefined), ...s });
  }

  #start(index: number, block: StreamBlockStart): string {
    const outputIndex = this.#nextOutput;
    switch (block.type) {
      case "text": {
        const item = this.#item(index, "message", outputIndex, "msg", "response.output_text.delta", ',"content_index":0');
        return this.#event("response.output_item.added", {
          output_index: outputIndex, item: { id: item.id, type: "message", status: "in_progress", role: "assistant", content: [] },
        }) + this.#event("response.content_part.added", {
          item_id: item.id, output_index: outputIndex, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] },
        });
      }
      case "thinking":
      case "redacted_thinking": {
        const item = this.#item(index, "reasoning", outputIndex, "rs", "response.reasoning_summary_text.delta", ',"summary_index":0');
        if (block.type === "redacted_thinking") item.encrypted = encryptedContentOf({ type: "redacted_thinking", data: block.data });
        return this.#event("response.output_item.added", {
          output_index: outputIndex, item: { id: item.id, type: "reasoning", summary: [], encrypted_content: null, status: "in_progress" },
        });
      }
      case "tool_use": {
        const item = this.#item(index, "function_call", outputIndex, "fc", "response.function_call_arguments.delta", "", block.id, block.name);
        const added: Record<string, unknown> = { id: item.id, type: "function_call", status: "in_progress", arguments: "", call_id: block.id, name: block.name };
        const namespace = namespaceOf(this.#req, block.name);
        if (namespace !== undefined) added.namespace = namespace;
        return this.#event("response.output_item.added", { output_index: outputIndex, item: added });
      }
      case "image":
        return this.#image(block.source);
      default:
        return ""; // a block kind this protocol has no item for: its deltas are not written either
    }
  }

  /** An image arrives whole: its item is added and done at once (base64: an
   * image_generation_call with the result; a URL: a message linking it, as the non-stream
   * answer gives it). Its block takes no deltas, so nothing stays open. */
  #image(source: ImageSource): string {
    const outputIndex = this.#nextOutput++;
    const done = imageItem(source, this.#ids, outputIndex);
    this.#output[outputIndex] = done;
    const added = done.type === "message"
      ? { ...done, status: "in_progress", content: [] }
      : { ...done, status: "in_progress", result: null };
    let out = this.#event("response.output_item.added", { output_index: outputIndex, item: added });
    if (done.type === "message") {
      const part = (done.content as unknown[])[0];
      const at = { item_id: done.id, output_index: outputIndex, content_index: 0 };
      out += this.#event("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } })
        + this.#event("response.output_text.delta", { ...at, delta: (part as { text: string }).text, logprobs: [] })
        + this.#event("response.output_text.done", { ...at, text: (part as { text: string }).text, logprobs: [] })
        + this.#event("response.content_part.done", { ...at, part });
    } else {
      out += this.#event("response.image_generation_call.completed", { item_id: done.id, output_index: outputIndex });
    }
    return out + this.#event("response.output_item.done", { output_index: outputIndex, item: done });
  }

  #item(
    index: number, kind: OpenItem["kind"], outputIndex: number, prefix: "msg" | "rs" | "fc", deltaType: string, extra: string,
    callId?: string, name?: string,
  ): OpenItem {
    const id = this.#ids.item(prefix, outputIndex);
    this.#nextOutput++;
    const deltaPrefix = `event: ${deltaType}\ndata: {"type":"${deltaType}","item_id":"${id}","output_index":${outputIndex}${extra},"delta":`;
    const item: OpenItem = { kind, outputIndex, id, deltaPrefix, text: "", encrypted: null, summaryOpen: false, callId, name };
    this.#open.set(index, item);
    return item;
  }

  #textDelta(index: number, text: string): string {
    const item = this.#open.get(index);
    if (!item || text === "" || item.kind === "function_call") return "";
    item.text += text;
    if (item.kind === "reasoning" && !item.summaryOpen) {
      item.summaryOpen = true;
      return this.#event("response.reasoning_summary_part.added", {
        item_id: item.id, output_index: item.outputIndex, summary_index: 0, part: { type: "summary_text", text: "" },
      }) + this.#delta(item, text);
    }
    return this.#delta(item, text);
  }

  /** A delta event from the item's prebuilt prefix: one is written per token. */
  #delta(item: OpenItem, delta: string): string {
    const logprobs = item.kind === "message" ? ',"logprobs":[]' : "";
    return `${item.deltaPrefix}${JSON.stringify(delta)}${logprobs},"sequence_number":${this.#seq++}}\n\n`;
  }

  #stop(index: number): string {
    const item = this.#open.get(index);
    if (!item) return "";
    this.#open.delete(index);
    const at = { item_id: item.id, output_index: item.outputIndex };
    let out = "";
    let done: OutputItem;
    if (item.kind === "message") {
      const part = { type: "output_text", text: item.text, annotations: [], logprobs: [] };
      out += this.#event("response.output_text.done", { ...at, content_index: 0, text: item.text, logprobs: [] });
      out += this.#event("response.content_part.done", { ...at, content_index: 0, part });
      done = items.message(item.id, item.text);
    } else if (item.kind === "reasoning") {
      if (item.summaryOpen) {
        out += this.#event("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: item.text });
        out += this.#event("response.reasoning_summary_part.done", { ...at, summary_index: 0, part: { type: "summary_text", text: item.text } });
      }
      done = items.reasoning(item.id, item.text, item.encrypted);
    } else {
      const args = item.text === "" ? "{}" : item.text;
      out += this.#event("response.function_call_arguments.done", { ...at, name: item.name, arguments: args });
      done = items.functionCall(item.id, item.callId!, item.name!, args, namespaceOf(this.#req, item.name!));
    }
    this.#output[item.outputIndex] = done;
    return out + this.#event("response.output_item.done", { output_index: item.outputIndex, item: done });
  }

  #event(type: string, fields: Record<string, unknown>): string {
    const data = Object.assign({ type }, fields, { sequence_number: this.#seq++ });
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }
}

/** A stream encoder for one responses answer to a client. */
export function responsesStreamEncoder(req: CanonicalRequest): StreamEncoder {
  return new ResponsesStreamEncoder(req);
}
