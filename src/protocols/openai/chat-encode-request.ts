// Writes a canonical request as a chat-completions body for an OpenAI-protocol channel.
// What chat-completions drops (field-policy.ts: top-k, cache hints) is settled by the hub
// before encoding and simply not written here. Cache hints are dropped because OpenAI caches
// prefixes by itself, and its explicit breakpoints exist only on the newest models (others
// would refuse the request). Mid-conversation system messages stay in place.

import type { Block, CanonicalRequest, ImageSource, Message, TextBlock, ToolChoice, ToolResultBlock } from "../canonical.js";
import type { ChatReasoningField, EncodeOptions } from "../adapter.js";
import { effortOf } from "../reasoning.js";
import { invalid } from "./chat-common.js";

type WireMessage = Record<string, unknown>;
type TextPart = { type: "text"; text: string };

function imageUrl(source: ImageSource): string {
  return source.kind === "base64" ? `data:${source.mediaType};base64,${source.data}` : source.url;
}

/** One text block → a string; several → text parts (block boundaries kept). */
function textContent(blocks: readonly TextBlock[]): string | TextPart[] {
  return blocks.length === 1 ? blocks[0].text : blocks.map((b) => ({ type: "text", text: b.text }));
}

function toolMessage(block: ToolResultBlock, where: string): WireMessage {
  const texts = block.content.map((c, k) => {
    if (c.type !== "text") throw invalid(`${where}.content[${k}]: a tool result image cannot be sent to a chat-completions channel.`);
    return c.text;
  });
  // Chat-completions has no error flag on tool messages; the model learns it from the text.
  const text = texts.join("\n");
  return { role: "tool", tool_call_id: block.toolUseId, content: block.isError ? `Error: ${text}` : text };
}

function userMessages(m: Message, where: string): WireMessage[] {
  const out: WireMessage[] = [];
  const parts: Block[] = [];
  // Tool results go first: chat-completions wants tool messages right after the assistant's calls.
  m.content.forEach((b, j) => {
    if (b.type === "tool_result") out.push(toolMessage(b, `${where}.content[${j}]`));
    else if (b.type === "text" || b.type === "image") parts.push(b);
    else throw invalid(`${where}.content[${j}]: a ${b.type} block cannot appear in a user message.`);
  });
  if (parts.length === 0) return out;
  const content = parts.every((b) => b.type === "text")
    ? textContent(parts as TextBlock[])
    : parts.map((b) => b.type === "text"
      ? { type: "text", text: b.text }
      : { type: "image_url", image_url: { url: imageUrl((b as { source: ImageSource }).source) } });
  out.push({ role: "user", content });
  return out;
}

function assistantMessage(m: Message, where: string, reasoningField: ChatReasoningField | undefined): WireMessage | undefined {
  const texts: TextBlock[] = [];
  let reasoning = "";
  const calls: Record<string, unknown>[] = [];
  m.content.forEach((b, j) => {
    if (b.type === "text") texts.push(b);
    else if (b.type === "tool_use") {
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } });
    } else if (b.type === "thinking") {
      reasoning += b.text;
    } else if (b.type === "tool_result") {
      throw invalid(`${where}.content[${j}]: a ${b.type} block cannot appear in a chat-completions assistant message.`);
    }
    // An image of an earlier answer: chat-completions takes images from the user only (the
    // field table drops and names it).
    // redacted_thinking from earlier turns is left out, and so is thinking: chat-completions
    // takes no reasoning back, and the messages protocol itself drops earlier turns'
    // thinking; but an upstream that needs it back on tool-call turns (DeepSeek) names the
    // field it takes (`reasoningField`), and gets the thinking's text there.
  });
  if (texts.length === 0 && calls.length === 0) return undefined;
  const msg: WireMessage = { role: "assistant", content: texts.length === 0 ? null : textContent(texts) };
  if (calls.length > 0) msg.tool_calls = calls;
  if (reasoningField !== undefined && calls.length > 0 && reasoning !== "") msg[reasoningField] = reasoning;
  return msg;
}

function toolChoice(c: ToolChoice): unknown {
  switch (c.type) {
    case "auto":
    case "none": return c.type;
    case "any": return "required";
    case "tool": return { type: "function", function: { name: c.name } };
  }
}

function responseFormat(f: NonNullable<CanonicalRequest["responseFormat"]>): unknown {
  if (!f.schema) return { type: "json_object" };
  return { type: "json_schema", json_schema: { name: f.name ?? "response", schema: f.schema } };
}

/** The chat-completions body for `req`, addressed to `upstreamModel`. */
export function encodeChatRequest(req: CanonicalRequest, upstreamModel: string, options: EncodeOptions = {}): Record<string, unknown> {
  const messages: WireMessage[] = [];
  if (req.system.length > 0) messages.push({ role: "system", content: textContent(req.system) });
  req.messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (m.role === "user") messages.push(...userMessages(m, where));
    else if (m.role === "system") {
      const texts = m.content.filter((b): b is TextBlock => b.type === "text");
      if (texts.length > 0) messages.push({ role: "system", content: textContent(texts) });
    } else {
      const a = assistantMessage(m, where, options.chatReasoningField);
      if (a) messages.push(a);
    }
  });
  const body: Record<string, unknown> = { model: upstreamModel, messages };
  // max_completion_tokens: reasoning models refuse the deprecated max_tokens.
  if (req.maxTokens !== undefined) body.max_completion_tokens = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop && req.stop.length > 0) body.stop = [...req.stop];
  if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
  if (req.presencePenalty !== undefined) body.presence_penalty = req.presencePenalty;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: "function",
      function: t.description === undefined
        ? { name: t.name, parameters: t.parameters }
        : { name: t.name, description: t.description, parameters: t.parameters },
    }));
  }
  if (req.toolChoice) body.tool_choice = toolChoice(req.toolChoice);
  if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  const r = req.reasoning;
  if (r && (r.effort || r.budgetTokens !== undefined)) body.reasoning_effort = r.effort ?? effortOf(r.budgetTokens ?? 0);
  if (req.responseFormat) body.response_format = responseFormat(req.responseFormat);
  if (req.user !== undefined) body.user = req.user;
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true }; // the gateway bills from the final usage chunk
  }
  return body;
}
