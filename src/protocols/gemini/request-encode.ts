// Canonical request → the body a gemini channel takes, for clients of other protocols.
// What generate-content drops (field-policy.ts: `user`, parallel_tool_calls false, cache
// hints) is settled by the hub before encoding and simply not written here.

import type { CanonicalRequest, Message } from "../canonical.js";
import { mapsWebSearch } from "../field-policy.js";
import { budgetOf } from "../reasoning.js";
import { withSystemAsUser } from "../system-note.js";
import { encodeParts } from "./parts-encode.js";
import { SKIP_SIGNATURE, type GeminiContent, type JsonObject } from "./wire.js";

// Gemini 3 rejects a replayed model turn whose first function call has no thought
// signature. A history converted from another protocol never has one, so such calls get
// the sentinel Google documents for this case (SKIP_SIGNATURE).

/** Upstream path: `:streamGenerateContent?alt=sse` when streaming, else `:generateContent`. */
export function geminiPath(request: CanonicalRequest, upstreamModel: string): string {
  const model = encodeURIComponent(upstreamModel);
  return request.stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`;
}

/** Encodes the generate-content body. */
export function encodeGeminiRequest(request: CanonicalRequest, upstreamModel: string): JsonObject {
  const body: JsonObject = { contents: encodeContents(request.messages, upstreamModel.startsWith("gemini-3")) };
  if (request.system.length > 0) body.systemInstruction = { parts: request.system.map((b) => ({ text: b.text })) };
  const tools: JsonObject[] = [];
  if (request.tools && request.tools.length > 0) {
    tools.push({
      functionDeclarations: request.tools.map((t) => ({
        name: t.name,
        ...(t.description !== undefined && { description: t.description }),
        parametersJsonSchema: t.parameters,
      })),
    });
  }
  const toolConfig: JsonObject = {};
  if (request.toolChoice) toolConfig.functionCallingConfig = toolChoice(request.toolChoice);
  // The client's hosted web search, as Google Search. Beside function declarations Gemini
  // wants server-side tool invocations turned on; their parts come back and are skipped.
  if (mapsWebSearch("generate-content", request)) {
    if (tools.length > 0) toolConfig.includeServerSideToolInvocations = true;
    tools.push({ googleSearch: {} });
  }
  if (tools.length > 0) body.tools = tools;
  if (Object.keys(toolConfig).length > 0) body.toolConfig = toolConfig;
  const config = generationConfig(request);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

/**
 * Turns in order; consecutive messages of one role merge into one Content, because Gemini
 * wants all responses to one step's parallel calls in a single user turn.
 */
function encodeContents(messages: readonly Message[], needsSignature: boolean): GeminiContent[] {
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === "tool_use") names.set(b.id, b.name);
  const contents: GeminiContent[] = [];
  messages.forEach((m, i) => {
    // A mid-conversation system message is a note in a user turn (system-note.ts says why).
    const role = m.role === "assistant" ? "model" : "user";
    const parts = encodeParts(withSystemAsUser(m).content, `messages[${i}]`, (id) => names.get(id));
    const last = contents.at(-1);
    if (parts.length === 0) return; // e.g. a turn of redacted reasoning only: Gemini rejects empty turns
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  });
  if (needsSignature) {
    for (const c of contents) {
      if (c.role !== "model" || c.parts.some((p) => p.thoughtSignature !== undefined)) continue;
      const at = c.parts.findIndex((p) => p.functionCall !== undefined);
      if (at >= 0) c.parts[at] = { ...c.parts[at], thoughtSignature: SKIP_SIGNATURE };
    }
  }
  return contents;
}

function toolChoice(choice: NonNullable<CanonicalRequest["toolChoice"]>): JsonObject {
  switch (choice.type) {
    case "auto":
      return { mode: "AUTO" };
    case "none":
      return { mode: "NONE" };
    case "any":
      return { mode: "ANY" };
    case "tool":
      return { mode: "ANY", allowedFunctionNames: [choice.name] };
  }
}

/**
 * `generationConfig`. Reasoning becomes a thinking budget (the request's own, else the
 * effort's) with thoughts included, so they can reach the client. `user` has no Gemini
 * field and does not change the answer; `responseFormat.name` is only a label.
 */
function generationConfig(r: CanonicalRequest): JsonObject {
  const c: JsonObject = {};
  if (r.maxTokens !== undefined) c.maxOutputTokens = r.maxTokens;
  if (r.temperature !== undefined) c.temperature = r.temperature;
  if (r.topP !== undefined) c.topP = r.topP;
  if (r.topK !== undefined) c.topK = r.topK;
  if (r.stop && r.stop.length > 0) c.stopSequences = [...r.stop];
  if (r.presencePenalty !== undefined) c.presencePenalty = r.presencePenalty;
  if (r.frequencyPenalty !== undefined) c.frequencyPenalty = r.frequencyPenalty;
  if (r.seed !== undefined) c.seed = r.seed;
  if (r.responseFormat) {
    c.responseMimeType = "application/json";
    if (r.responseFormat.schema) c.responseJsonSchema = r.responseFormat.schema;
  }
  const reasoning = r.reasoning;
  if (reasoning && (reasoning.budgetTokens !== undefined || reasoning.effort !== undefined)) {
    const budget = reasoning.budgetTokens ?? budgetOf(reasoning.effort ?? "medium");
    c.thinkingConfig = { thinkingBudget: budget, includeThoughts: true };
  }
  return c;
}
