// What the soak's clients send: a well-formed request for each client protocol × model ×
// JSON/stream in the protocol's real wire shape, the malformed bodies the gateway must
// refuse with 400, and how to tell from the bytes received that an answer was complete.

import { MODELS, type ModelKey, type SoakToken } from "./soak-world.js";

export type ClientProtocol = "chat-completions" | "responses" | "messages" | "generate-content";

/** A route the soak exercises: a client protocol asking for a model (one channel each). */
export interface Route {
  readonly protocol: ClientProtocol;
  readonly model: ModelKey;
}

/** Pass-through when the model's channel speaks the client's protocol; converted otherwise. */
export function routeMode(r: Route): "pass-through" | "converted" {
  const channel = MODELS[r.model].channel;
  const native = { "chat-completions": "openai", responses: "openai", messages: "anthropic", "generate-content": "gemini" }[r.protocol];
  return channel === native ? "pass-through" : "converted";
}

/** Every client protocol × a pass-through model and the converted ones (responses: pass-through only). */
export const ROUTES: readonly Route[] = [
  { protocol: "chat-completions", model: "gpt" },
  { protocol: "chat-completions", model: "claude" },
  { protocol: "chat-completions", model: "gemini" },
  { protocol: "responses", model: "resp" },
  { protocol: "messages", model: "claude" },
  { protocol: "messages", model: "gpt" },
  { protocol: "messages", model: "gemini" },
  { protocol: "generate-content", model: "gemini" },
  { protocol: "generate-content", model: "gpt" },
  { protocol: "generate-content", model: "claude" },
];

/** One HTTP request, ready to write. */
export interface WireRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly stream: boolean;
  readonly protocol: ClientProtocol;
}

const PROMPTS = [
  "Say hello.", "Grüße 👋🏽 — 你好，世界!", "Two lines\nand a \"quote\"", "What is 2 + 2?", "x".repeat(400),
];
const prompt = () => PROMPTS[Math.floor(Math.random() * PROMPTS.length)];
const MAX_TOKENS = 64;

function authHeaders(protocol: ClientProtocol, token: SoakToken): Record<string, string> {
  switch (protocol) {
    case "messages": return { "x-api-key": token.key, "anthropic-version": "2023-06-01" };
    case "generate-content": return { "x-goog-api-key": token.key };
    default: return { authorization: `Bearer ${token.key}` };
  }
}

function pathOf(protocol: ClientProtocol, model: string, stream: boolean): string {
  switch (protocol) {
    case "chat-completions": return "/v1/chat/completions";
    case "responses": return "/v1/responses";
    case "messages": return "/v1/messages";
    case "generate-content": return `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;
  }
}

function bodyOf(protocol: ClientProtocol, model: string, stream: boolean): Record<string, unknown> {
  const text = prompt();
  switch (protocol) {
    case "chat-completions":
      return { model, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: text }], max_tokens: MAX_TOKENS, ...(stream ? { stream: true } : {}) };
    case "responses":
      return { model, input: text, max_output_tokens: MAX_TOKENS, ...(stream ? { stream: true } : {}) };
    case "messages":
      return { model, max_tokens: MAX_TOKENS, system: "Be brief.", messages: [{ role: "user", content: text }], ...(stream ? { stream: true } : {}) };
    case "generate-content":
      return { contents: [{ role: "user", parts: [{ text }] }], generationConfig: { maxOutputTokens: MAX_TOKENS } };
  }
}

const wire = (protocol: ClientProtocol, path: string, token: SoakToken, body: Buffer, stream: boolean): WireRequest => ({
  path, stream, protocol, body,
  headers: { ...authHeaders(protocol, token), "content-type": "application/json", "content-length": String(body.length) },
});

/** A well-formed request for `route`. */
export function buildRequest(route: Route, token: SoakToken, stream: boolean): WireRequest {
  const model = MODELS[route.model].name;
  const body = Buffer.from(JSON.stringify(bodyOf(route.protocol, model, stream)));
  return wire(route.protocol, pathOf(route.protocol, model, stream), token, body, stream);
}

/** Ways a body can be malformed; each must be answered 400 before anything is reserved. */
export const MALFORMED_KINDS = ["truncated-json", "not-an-object", "model-not-a-string"] as const;
export type MalformedKind = (typeof MALFORMED_KINDS)[number];

/** A malformed request for `route` (model-not-a-string needs a body model: not for generate-content). */
export function buildMalformed(route: Route, token: SoakToken, kind: MalformedKind): WireRequest {
  const model = MODELS[route.model].name;
  const good = JSON.stringify(bodyOf(route.protocol, model, false));
  let text: string;
  switch (kind) {
    case "truncated-json": text = good.slice(0, Math.max(1, Math.floor(good.length * Math.random()))); break;
    case "not-an-object": text = Math.random() < 0.5 ? `[${good}]` : JSON.stringify(good); break;
    case "model-not-a-string": text = JSON.stringify({ ...JSON.parse(good), model: 42 }); break;
  }
  return wire(route.protocol, pathOf(route.protocol, model, false), token, Buffer.from(text), false);
}

/** Whether a malformed kind applies to a route. */
export const malformedApplies = (route: Route, kind: MalformedKind): boolean =>
  !(kind === "model-not-a-string" && route.protocol === "generate-content");

/** Whether a streamed answer's bytes end the way a complete stream of the protocol ends. */
export function streamComplete(protocol: ClientProtocol, text: string): boolean {
  switch (protocol) {
    case "chat-completions": return text.endsWith("data: [DONE]\n\n");
    case "responses": return text.includes("event: response.completed\n");
    case "messages": return /event: message_stop\r?\ndata: [^\n]*\r?\n\r?\n$/.test(text);
    case "generate-content": return /"finishReason":"[A-Z_]+"/.test(text) && /\r?\n\r?\n$/.test(text);
  }
}

/** Whether a streamed answer carries an error event (a stream that failed after its 200). */
export function streamHasError(protocol: ClientProtocol, text: string): boolean {
  switch (protocol) {
    case "messages": return text.includes("event: error");
    case "responses": return text.includes("event: error") || text.includes("event: response.failed");
    default: return /^data: \{"error"/m.test(text);
  }
}

/** Whether a JSON answer is a complete answer of the protocol. */
export function jsonComplete(protocol: ClientProtocol, text: string): boolean {
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    switch (protocol) {
      case "chat-completions": return Array.isArray(j.choices) && j.usage !== undefined;
      case "responses": return j.object === "response" && j.status === "completed";
      case "messages": return j.type === "message" && Array.isArray(j.content);
      case "generate-content": return Array.isArray(j.candidates);
    }
  } catch {
    return false;
  }
}

/** The error code of an error body in any of the protocols' shapes ("" when none found). */
export function errorCodeOf(text: string): string {
  try {
    const e = (JSON.parse(text) as { error?: { code?: unknown; type?: unknown; status?: unknown } }).error;
    if (!e) return "";
    // OpenAI: code (a string); Gemini: code is the HTTP status, status the name; Anthropic: type.
    return String(typeof e.code === "string" ? e.code : e.status ?? e.type ?? e.code ?? "");
  } catch {
    return "(not json)";
  }
}

