// Reads a complete responses-protocol answer (a Response object) into the canonical
// response: output items become blocks, the status a stop reason, usage the canonical one
// exactly as pass-through billing reads it, so a converted answer costs the same.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Block, CanonicalResponse, StopReason } from "../canonical.js";
import { emptyUsage } from "../usage.js";
import { isObject, parseArguments } from "./chat-common.js";
import { responseUsage } from "./responses-usage.js";

function upstreamFault(message: string): GatewayError {
  return new GatewayError(errors.upstreamError, `The upstream answer could not be read: ${message}`);
}

/** The text of a reasoning item: its summary parts, or (open-weight servers) its raw
 * reasoning_text content, parts joined by a blank line. */
export function reasoningText(item: Record<string, unknown>): string {
  const parts = Array.isArray(item.summary) && item.summary.length > 0 ? item.summary : item.content;
  if (!Array.isArray(parts)) return "";
  return parts.map((p: unknown) => (isObject(p) && typeof p.text === "string" ? p.text : "")).filter((t) => t !== "").join("\n\n");
}

/** A thinking block for a reasoning item, its encrypted content as the signature; undefined
 * when it carries neither text nor content to pass back. */
export function thinkingOf(item: Record<string, unknown>): Block | undefined {
  const text = reasoningText(item);
  const encrypted = typeof item.encrypted_content === "string" && item.encrypted_content !== "" ? item.encrypted_content : undefined;
  if (text === "" && encrypted === undefined) return undefined;
  return encrypted === undefined ? { type: "thinking", text } : { type: "thinking", text, signature: encrypted };
}

/** A function_call item as a tool_use block (call_id is what the function_call_output names). */
export function toolUseOf(item: Record<string, unknown>, at: number): Block {
  if (typeof item.name !== "string") throw upstreamFault(`output[${at}] is a function call without a name.`);
  const id = typeof item.call_id === "string" && item.call_id !== "" ? item.call_id : `call_${at}`;
  const input = parseArguments(typeof item.arguments === "string" ? item.arguments : "");
  if (!input) throw upstreamFault(`the arguments of function call ${id} are not a JSON object.`);
  return { type: "tool_use", id, name: item.name, input };
}

/** Why an answer stopped, from its status and what it holds. */
export function stopReasonOfResponse(response: Record<string, unknown>, called: boolean, refused: boolean): StopReason {
  if (response.status === "incomplete") {
    const reason = isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return reason === "content_filter" ? "content_filter" : "max_tokens";
  }
  if (refused) return "refusal";
  return called ? "tool_use" : "end_turn";
}

/** The message of a failed response's `error`, or a generic one. */
export function failureMessage(response: unknown): string {
  const err = isObject(response) ? response.error : undefined;
  return isObject(err) && typeof err.message === "string" ? err.message : "the upstream response failed.";
}

/** Reads a Response object into the canonical response. */
export function decodeResponsesResponse(json: unknown): CanonicalResponse {
  if (!isObject(json) || !Array.isArray(json.output)) throw upstreamFault("no output.");
  if (json.status === "failed" || json.status === "cancelled") throw upstreamFault(failureMessage(json));
  const content: Block[] = [];
  let called = false;
  let refused = false;
  json.output.forEach((item: unknown, at) => {
    if (!isObject(item)) return;
    if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isObject(part)) continue;
        if (part.type === "output_text" && typeof part.text === "string" && part.text !== "") {
          content.push({ type: "text", text: part.text });
        } else if (part.type === "refusal" && typeof part.refusal === "string") {
          refused = true;
          content.push({ type: "text", text: part.refusal });
        }
      }
    } else if (item.type === "function_call") {
      called = true;
      content.push(toolUseOf(item, at));
    } else if (item.type === "reasoning") {
      const thinking = thinkingOf(item);
      if (thinking) content.push(thinking);
    }
    // Built-in tool items (web search, …) are never asked for by a converted request.
  });
  return {
    id: typeof json.id === "string" ? json.id : "",
    model: typeof json.model === "string" ? json.model : "",
    content,
    stopReason: stopReasonOfResponse(json, called, refused),
    usage: responseUsage(json) ?? emptyUsage(),
  };
}
