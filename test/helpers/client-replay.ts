// Replays the recorded client requests (test/fixtures/clients/, see its README) through a
// gateway: loads the fixtures, knows each one's protocol, turn and the tool call the client
// was answered with, sends it as recorded with the model swapped and the gateway's token in
// the client's own auth header, and reads the answer the way the client's SDK does
// (@anthropic-ai/sdk MessageStream, openai ChatCompletionStream / ResponseStream, @google/genai
// GenerateContentResponse), into one comparable shape.

import assert from "node:assert/strict";
import { Stream as AnthropicStream } from "@anthropic-ai/sdk/core/streaming";
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { Stream as OpenAIStream } from "openai/core/streaming";
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import { ResponseStream } from "openai/lib/responses/ResponseStream";
import { GenerateContentResponse } from "@google/genai";
import { dataOf, sseEvents } from "./client-wire.js";
import { rawRequest, type RawResponse } from "../integration/support.js";
import { isStream, isTokenCount, protocolOf, readAllFixtures, type Fixture } from "./client-fixture-files.js";
import type { ClientProtocol } from "./client-routes.js";

export { isStream, protocolOf, type ClientProtocol, type Fixture };

type Json = Record<string, any>;

/** A tool call: its name and parsed arguments (and, for Responses, the namespace of a
 * namespaced tool). */
export interface ToolCall { readonly name: string; readonly args: Json; readonly namespace?: string }

/** Every recorded model request (the four protocols; probes such as `HEAD /` are left out). */
export function loadFixtures(): Fixture[] {
  return loadAll().filter((f) => protocolOf(f) !== undefined);
}

/** The recorded token counts (Claude Code's `/v1/messages/count_tokens`, Gemini's `:countTokens`). */
export function loadTokenCounts(): Fixture[] {
  return loadAll().filter(isTokenCount);
}

/** The other recorded requests (Claude Code's `HEAD /` probe). */
export function loadProbes(): Fixture[] {
  return loadAll().filter((f) => protocolOf(f) === undefined && !isTokenCount(f));
}

/** The protocol family whose auth header and model field a request uses. */
function familyOf(f: Pick<Fixture, "path">): ClientProtocol {
  if (f.path.startsWith("/v1/messages")) return "messages";
  if (f.path.startsWith("/v1beta/")) return "generate";
  return protocolOf(f) ?? "chat";
}

const loadAll = (): Fixture[] => readAllFixtures();

/** The tool call the recording fake answered this request with, if it answered one. */
export function recordedCall(f: Fixture): ToolCall | undefined {
  const a = f.answered;
  const events = (a.events ?? []).map((e) => e.data).filter((d) => typeof d === "object" && d !== null);
  switch (protocolOf(f)) {
    case "messages": {
      const block = a.body?.content?.find((b: Json) => b.type === "tool_use");
      if (block) return { name: block.name, args: block.input };
      const start = events.find((d) => d.content_block?.type === "tool_use");
      if (!start) return undefined;
      const json = events.filter((d) => d.index === start.index && d.delta?.type === "input_json_delta").map((d) => d.delta.partial_json).join("");
      return { name: start.content_block.name, args: JSON.parse(json || "{}") };
    }
    case "chat": {
      const call = a.body?.choices?.[0]?.message?.tool_calls?.[0];
      if (call) return { name: call.function.name, args: JSON.parse(call.function.arguments) };
      const deltas = events.flatMap((d) => d.choices?.[0]?.delta?.tool_calls ?? []);
      if (deltas.length === 0) return undefined;
      return { name: deltas[0].function.name, args: JSON.parse(deltas.map((t: Json) => t.function?.arguments ?? "").join("")) };
    }
    case "responses": {
      const output: Json[] = a.body?.output ?? events.find((d) => d.type === "response.completed")?.response?.output ?? [];
      const call = output.find((i) => i.type === "function_call");
      return call ? { name: call.name, args: JSON.parse(call.arguments) } : undefined;
    }
    case "generate": {
      const chunks: Json[] = a.body ? [a.body] : events;
      const part = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).find((p: Json) => p.functionCall);
      return part ? { name: part.functionCall.name, args: part.functionCall.args ?? {} } : undefined;
    }
    default: return undefined;
  }
}

/** `f` asked the other way: streamed as JSON, or JSON as a stream (the same turn, for the
 * clients that were recorded one way only). */
export function flipped(f: Fixture): Fixture {
  const stream = !isStream(f);
  if (protocolOf(f) === "generate") {
    const { alt: _alt, ...query } = f.query;
    return {
      ...f, name: `${f.name} (${stream ? "streamed" : "as JSON"})`,
      path: f.path.replace(/:(stream)?[gG]enerateContent$/, stream ? ":streamGenerateContent" : ":generateContent"),
      query: stream ? { ...query, alt: "sse" } : query,
    };
  }
  const { stream: _s, stream_options: _o, ...body } = f.body;
  return { ...f, name: `${f.name} (${stream ? "streamed" : "as JSON"})`, body: stream ? { ...body, stream: true } : body };
}

/** The function tools a request offers, by name, in any of the four protocols (a Responses
 * `namespace` tool's functions included; tools the provider runs itself left out). */
export function functionToolNames(proto: ClientProtocol, body: Json): string[] {
  const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
  switch (proto) {
    case "messages": return tools.filter((t) => t.input_schema !== undefined).map((t) => t.name);
    case "chat": return tools.filter((t) => t.type === "function").map((t) => t.function.name);
    case "responses": return tools.flatMap((t) => (t.type === "namespace" ? t.tools ?? [] : [t])).filter((t: Json) => t.type === "function").map((t: Json) => t.name);
    case "generate": return tools.flatMap((t) => t.functionDeclarations ?? []).map((f: Json) => f.name);
  }
}

/** Headers a replay does not resend: hop-by-hop ones, and what the transport sets itself. */
const NOT_RESENT = new Set(["connection", "keep-alive", "accept-encoding", "content-length", "host", "transfer-encoding"]);

/** The client's own way of presenting a key, per protocol. */
function authHeader(proto: ClientProtocol, token: string): Record<string, string> {
  switch (proto) {
    case "messages": return { "x-api-key": token };
    case "generate": return { "x-goog-api-key": token };
    default: return { authorization: `Bearer ${token}` };
  }
}

/** Sends `f` to the gateway at `base` as recorded, for model `model`, with `token`. */
export function replay(base: string, f: Fixture, model: string, token: string): Promise<RawResponse> {
  const proto = familyOf(f);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(f.headers)) if (!NOT_RESENT.has(k)) headers[k] = v;
  const pathname = proto === "generate" ? f.path.replace(/\/models\/[^/:]+:/, `/models/${encodeURIComponent(model)}:`) : f.path;
  const body = proto === "generate" ? f.body : { ...f.body, model };
  const query = new URLSearchParams(f.query as Record<string, string>).toString();
  return rawRequest(`${base}${pathname}${query ? `?${query}` : ""}`, {
    method: f.method, headers: { ...headers, ...authHeader(proto, token) }, body: JSON.stringify(body),
  });
}

/** An answer as the client understood it. */
export interface ClientAnswer {
  readonly text: string;
  readonly calls: readonly ToolCall[];
  /** The protocol's own stop / finish reason. */
  readonly finish: string;
}

const asResponse = (r: RawResponse) => new Response(r.text, { headers: { "content-type": String(r.headers["content-type"] ?? "") } });

/**
 * Reads a 200 answer in protocol `proto` as its client does: streams through the official
 * SDK's accumulators (which throw on an event out of place), with the event sequence the
 * recordings show the clients read checked around them; JSON by its fields.
 */
export async function readAnswer(proto: ClientProtocol, stream: boolean, r: RawResponse): Promise<ClientAnswer> {
  assert.equal(r.status, 200, `expected 200, got ${r.status}: ${r.text.slice(0, 600)}`);
  if (stream) assert.match(String(r.headers["content-type"]), /^text\/event-stream/);
  switch (proto) {
    case "messages": return stream ? messagesStream(r) : messagesJson(r.json);
    case "chat": return stream ? chatStream(r) : chatJson(r.json);
    case "responses": return stream ? responsesStream(r) : responsesJson(r.json);
    case "generate": return stream ? generateStream(r) : generateJson(r.json);
  }
}

function messagesJson(m: Json): ClientAnswer {
  assert.equal(m.type, "message");
  assert.equal(m.role, "assistant");
  assert.ok(Array.isArray(m.content));
  assert.equal(typeof m.usage?.input_tokens, "number");
  assert.equal(typeof m.usage?.output_tokens, "number");
  for (const b of m.content) assert.ok(!("citations" in b) || Array.isArray(b.citations), "citations: absent or a list (the AI SDK rejects null)");
  return {
    text: m.content.filter((b: Json) => b.type === "text").map((b: Json) => b.text).join(""),
    calls: m.content.filter((b: Json) => b.type === "tool_use").map((b: Json) => ({ name: b.name, args: b.input })),
    finish: m.stop_reason,
  };
}

async function messagesStream(r: RawResponse): Promise<ClientAnswer> {
  const names = sseEvents(r.text).map((e) => e.event);
  assert.equal(names[0], "message_start");
  assert.equal(names.at(-1), "message_stop");
  const events = AnthropicStream.fromSSEResponse(asResponse(r), new AbortController());
  const final = await MessageStream.fromReadableStream(events.toReadableStream()).finalMessage();
  return messagesJson(final as unknown as Json);
}

function chatJson(c: Json): ClientAnswer {
  assert.equal(c.object, "chat.completion");
  const choice = c.choices?.[0];
  assert.ok(choice, "a choice");
  return {
    text: choice.message.content ?? "",
    calls: (choice.message.tool_calls ?? []).map((t: Json) => ({ name: t.function.name, args: JSON.parse(t.function.arguments) })),
    finish: choice.finish_reason,
  };
}

async function chatStream(r: RawResponse): Promise<ClientAnswer> {
  const events = sseEvents(r.text);
  assert.equal(events.at(-1)?.data, "[DONE]");
  const chunks = OpenAIStream.fromSSEResponse(asResponse(r), new AbortController());
  const final = await ChatCompletionStream.fromReadableStream(chunks.toReadableStream()).finalChatCompletion();
  return chatJson(final as unknown as Json);
}

function responsesJson(x: Json): ClientAnswer {
  assert.equal(x.object, "response");
  assert.equal(x.status, "completed");
  assert.equal(typeof x.usage?.input_tokens, "number");
  const output: Json[] = x.output ?? [];
  return {
    text: output.filter((i) => i.type === "message").flatMap((i) => i.content).filter((p: Json) => p.type === "output_text").map((p: Json) => p.text).join(""),
    calls: output.filter((i) => i.type === "function_call")
      .map((i) => ({ name: i.name, args: JSON.parse(i.arguments), ...(i.namespace !== undefined && { namespace: i.namespace }) })),
    finish: x.status,
  };
}

async function responsesStream(r: RawResponse): Promise<ClientAnswer> {
  const events = sseEvents(r.text).map(dataOf);
  // What Codex reads: typed events numbered in order, items added before done, then
  // response.completed last (a stream that ends without it is an error to Codex).
  assert.equal(events[0]?.type, "response.created");
  assert.equal(events.at(-1)?.type, "response.completed");
  events.forEach((e, i) => assert.equal(e.sequence_number, i, `sequence_number of event ${i} (${e.type})`));
  const added = new Set(events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index));
  for (const e of events.filter((e) => e.type === "response.output_item.done")) assert.ok(added.has(e.output_index), "output_item.done after its added");
  const final = await ResponseStream.fromReadableStream(
    OpenAIStream.fromSSEResponse(asResponse(r), new AbortController()).toReadableStream(),
  ).finalResponse();
  const doneItems = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
  const answer = responsesJson(final as unknown as Json);
  // Codex builds its history from output_item.done, not from the final response.
  assert.deepEqual(doneItems.filter((i) => i.type === "function_call").map((i) => [i.namespace, i.name]), answer.calls.map((c) => [c.namespace, c.name]));
  return answer;
}

/** Reads Gemini answers (one JSON, or the stream's chunks) through @google/genai's
 * GenerateContentResponse, as Gemini CLI does: text and functionCalls per chunk, the last
 * chunk's finishReason and usageMetadata. */
function generateAnswer(chunks: readonly Json[]): ClientAnswer {
  assert.ok(chunks.length > 0, "at least one chunk");
  for (const c of chunks) assert.ok(Array.isArray(c.candidates) && c.error === undefined, `a chunk without candidates: ${JSON.stringify(c)}`);
  const responses = chunks.map((c) => Object.assign(new GenerateContentResponse(), c));
  const last = responses.at(-1)!;
  assert.equal(typeof last.usageMetadata?.promptTokenCount, "number");
  return {
    // .text warns on chunks holding a functionCall part; those hold no text here.
    text: responses.filter((x) => x.functionCalls === undefined).map((x) => x.text ?? "").join(""),
    calls: responses.flatMap((x) => x.functionCalls ?? []).map((c) => ({ name: c.name ?? "", args: c.args ?? {} })),
    finish: last.candidates?.[0]?.finishReason ?? "",
  };
}

const generateJson = (g: Json) => generateAnswer([g]);
const generateStream = (r: RawResponse) => generateAnswer(sseEvents(r.text).map(dataOf));
