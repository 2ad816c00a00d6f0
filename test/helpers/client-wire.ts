// How each client protocol's answers look to a test, for the upstream-faults suites: an SSE
// body split into whole events, which events are errors or terminal ones, the catalogue code
// an error carries in the protocol's own shape, and the generated text a client received.

import assert from "node:assert/strict";
import type { Client } from "./fault-world.js";

/** One SSE event as the client got it. */
export interface SseEvent {
  readonly event?: string;
  readonly data: string;
  readonly raw: string;
}

/** Splits a whole SSE body into events (LF or CRLF framing), asserting it ends on an event
 * boundary: nothing half-sent. */
export function sseEvents(text: string): SseEvent[] {
  assert.match(text, /(\r?\n){2}$/, `the stream must end on a whole event: ${JSON.stringify(text.slice(-200))}`);
  return text.split(/\r?\n\r?\n/).filter((raw) => raw.trim() !== "").map((raw) => {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of raw.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    return { event, data: data.join("\n"), raw };
  }).filter((e) => e.data !== "" || e.event !== undefined);
}

/** The data of an event, parsed (fails the test when it is not JSON). */
export function dataOf(e: SseEvent): any {
  try {
    return JSON.parse(e.data);
  } catch {
    assert.fail(`an event that is not whole JSON reached the client: ${JSON.stringify(e.raw)}`);
  }
}

/** Whether a client event is its protocol's error event. */
export function isErrorEvent(client: Client, e: SseEvent): boolean {
  if (e.data === "[DONE]") return false;
  const d = dataOf(e);
  switch (client) {
    case "chat": case "generate": return d !== null && typeof d === "object" && "error" in d;
    case "responses": return e.event === "error" || d.type === "error";
    case "messages": return e.event === "error" || d.type === "error";
  }
}

/** Whether a client event is its protocol's terminal event of a whole answer. */
export function isTerminalEvent(client: Client, e: SseEvent): boolean {
  if (client === "chat") return e.data.trim() === "[DONE]";
  const d = dataOf(e);
  switch (client) {
    case "responses": return d.type === "response.completed" || d.type === "response.incomplete";
    case "messages": return d.type === "message_stop" || e.event === "message_stop";
    case "generate": return (d.candidates ?? []).some((c: { finishReason?: unknown }) => c.finishReason !== undefined);
  }
}

/** The catalogue code an error event or body carries, in the client protocol's shape
 * (asserting the shape on the way). */
export function errorCode(client: Client, body: any): string {
  switch (client) {
    case "chat":
      assert.equal(typeof body.error?.message, "string", JSON.stringify(body));
      assert.equal(body.error.type, "gateway_error", JSON.stringify(body));
      return body.error.code;
    case "responses":
      if (body.type === "error") {
        assert.equal(typeof body.message, "string", JSON.stringify(body));
        return body.code;
      }
      assert.equal(body.error.type, "gateway_error", JSON.stringify(body));
      return body.error.code;
    case "messages":
      assert.equal(body.type, "error", JSON.stringify(body));
      assert.equal(typeof body.error?.type, "string", JSON.stringify(body));
      assert.equal(typeof body.error.message, "string", JSON.stringify(body));
      return body.error.code;
    case "generate":
      assert.equal(typeof body.error?.code, "number", JSON.stringify(body));
      assert.equal(typeof body.error.message, "string", JSON.stringify(body));
      assert.equal(typeof body.error.status, "string", JSON.stringify(body));
      assert.equal(body.error.details?.[0]?.["@type"], "type.googleapis.com/google.rpc.ErrorInfo", JSON.stringify(body));
      return body.error.details[0].reason;
  }
}

/** The error message inside an error event or body of any protocol. */
export function errorMessage(body: any): string {
  return String(body.error?.message ?? body.message ?? "");
}

/** The generated text of a whole (non-stream) answer in the client's protocol. */
export function answerText(client: Client, body: any): string {
  switch (client) {
    case "chat": return body.choices[0].message.content;
    case "responses": return body.output.flatMap((o: any) => o.content ?? []).map((c: any) => c.text ?? "").join("");
    case "messages": return body.content.map((b: any) => b.text ?? "").join("");
    case "generate": return body.candidates[0].content.parts.map((p: any) => p.text ?? "").join("");
  }
}

/** The generated text the client received in a stream's events. */
export function streamedText(client: Client, events: readonly SseEvent[]): string {
  let text = "";
  for (const e of events) {
    if (e.data === "[DONE]" || isErrorEvent(client, e)) continue;
    const d = dataOf(e);
    switch (client) {
      case "chat": text += d.choices?.[0]?.delta?.content ?? ""; break;
      case "responses": if (d.type === "response.output_text.delta") text += d.delta; break;
      case "messages": if (d.type === "content_block_delta" && d.delta.type === "text_delta") text += d.delta.text; break;
      case "generate": text += (d.candidates?.[0]?.content?.parts ?? []).map((p: any) => p.text ?? "").join(""); break;
    }
  }
  return text;
}
