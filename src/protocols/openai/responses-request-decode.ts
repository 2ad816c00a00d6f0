// Reads a client's responses request into the canonical request, for a model served on a
// channel of another protocol (or on an OpenAI chat-completions channel). Every top-level
// field is carried, dropped as a provider-side hint (named in `dropped`), or refused with a
// 400 naming it (field-policy.ts's table, plus the checks below). The gateway keeps no
// conversations: the whole conversation is in `input`. Tools: function tools, a namespace's
// function tools (offered flat, by their own names), and hosted tools by the table's one
// rule (web search mapped to the target's own, others dropped and named, forcing one refused).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type {
  Block, CanonicalRequest, HostedTool, ImageBlock, Message, Reasoning, TextBlock, Tool, ToolChoice, ToolResultBlock,
} from "../canonical.js";
import {
  clientRule, dropUnknownKeys as onlyKnown, forcedHostedRefusal, hostedToolName, noteDropped, noteUnknown, screenKeys, TOP,
} from "../field-policy.js";
import { invalid, isObject, optInt, optNumber, optString, parseArguments, reasoningEffort } from "./chat-common.js";
import { reasoningBlockOf } from "./responses-common.js";

/** Fields read here with their own messages; the others are screened by field-policy.ts's
 * table (carried, dropped as provider-side hints and named, or refused). */
const READ_HERE = new Set([
  "store", "include", "previous_response_id", "conversation", "prompt", "background", "top_logprobs", "moderation",
]);

/** include values the gateway honours: encrypted_content is always given on converted routes. */
const honouredIncludes = new Set(["reasoning.encrypted_content"]);

/** OpenAI's web search, in each of its names: the target's own web search serves it. */
const WEB_SEARCH_TOOLS = new Set(["web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11"]);

/** Built-in tools run by OpenAI itself: offered, they are mapped (web search) or dropped;
 * forced by tool_choice, refused. */
const BUILT_IN_TOOLS = new Set([
  "web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11", "file_search",
  "code_interpreter", "computer", "computer_use", "computer_use_preview", "mcp", "image_generation", "local_shell",
  "shell", "apply_patch", "tool_search", "programmatic_tool_calling",
]);

/** Input items of hosted tool calls OpenAI ran in an earlier answer. */
const HOSTED_CALL_ITEMS = new Set(["web_search_call", "file_search_call", "image_generation_call", "code_interpreter_call", "mcp_call", "mcp_list_tools"]);

// `strict` asks for exact schema adherence; channels that enforce schemas do so anyway.
// Other keys (defer_loading, allowed_callers, …) are screened by field-policy.ts's table.
const functionToolKeys = new Set(["type", "name", "description", "parameters", "strict"]);

const dataUrl = /^data:([^;,]+);base64,(.*)$/s;
// Key sets checked per input item and per part, built once.
const imagePartKeys = new Set(["type", "image_url", "file_id", "detail"]);
const textPartKeys = new Set(["type", "text", "annotations", "logprobs", "parsed"]);
const refusalPartKeys = new Set(["type", "refusal", "annotations", "logprobs", "parsed"]);
const functionCallKeys = new Set(["type", "call_id", "name", "arguments", "id", "status", "namespace", "caller", "parsed_arguments"]);
const callOutputKeys = new Set(["type", "call_id", "output", "id", "status", "caller"]);
const reasoningItemKeys = new Set(["type", "id", "summary", "content", "encrypted_content", "status"]);
const imageCallKeys = new Set(["type", "id", "status", "result", "output_format", "revised_prompt", "background", "quality", "size"]);


/** What the top-level fields ask for beyond what is carried: dropped hints, or a 400. */
function checkFields(json: Record<string, unknown>, dropped: string[]): void {
  screenKeys("responses", json, TOP, dropped, READ_HERE);
  const noConversation = "the gateway keeps no conversations: send the whole conversation in input";
  if (json.previous_response_id != null) throw invalid(`previous_response_id cannot be used with this model: ${noConversation}.`);
  if (json.conversation != null) throw invalid(`conversation cannot be used with this model: ${noConversation}.`);
  if (json.prompt != null) throw invalid("prompt (a stored prompt template) cannot be used with this model; send instructions and input instead.");
  if (json.background != null && json.background !== false) {
    throw invalid("background must be false: background responses are stored by OpenAI, and this model is served elsewhere.");
  }
  if (json.top_logprobs != null && json.top_logprobs !== 0) throw invalid("top_logprobs is not supported when the model is served through another protocol.");
  if (json.moderation != null) throw invalid("moderation is not supported when the model is served through another protocol.");
  for (const key of ["stream", "parallel_tool_calls", "store"]) {
    if (json[key] != null && typeof json[key] !== "boolean") throw invalid(`${key} must be a boolean.`);
  }
  // store: true asks OpenAI to keep the response; there is nothing here to keep it. false
  // (Codex, always) asks for what the gateway does anyway: nothing dropped.
  if (json.store === true) noteDropped(dropped, "store");
  if (json.include != null) {
    if (!Array.isArray(json.include) || !json.include.every((v) => typeof v === "string")) throw invalid("include must be an array of strings.");
    const asked = (json.include as string[]).filter((v) => !honouredIncludes.has(v));
    const logprobs = asked.find((v) => v.includes("logprobs"));
    if (logprobs) throw invalid(`include "${logprobs}" is not supported when the model is served through another protocol.`);
    if (asked.length > 0) noteDropped(dropped, "include");
  }
}

// ---- input ----

/** Conversation state while reading input items: turns so far, and call names by call id. */
class Conversation {
  readonly system: TextBlock[] = [];
  readonly messages: Message[] = [];
  readonly #names = new Map<string, string>();

  /** `dropped`: where unknown keys of the items are named. */
  constructor(readonly dropped: string[]) {}

  push(role: Message["role"], content: readonly Block[]): void {
    if (content.length === 0) return;
    const last = this.messages.at(-1);
    if (last && last.role === role) this.messages[this.messages.length - 1] = { role, content: [...last.content, ...content] };
    else this.messages.push({ role, content: [...content] });
  }

  called(callId: string, name: string): void {
    this.#names.set(callId, name);
  }

  nameOf(callId: string): string | undefined {
    return this.#names.get(callId);
  }
}

function imageBlock(part: Record<string, unknown>, at: string, dropped: string[]): ImageBlock {
  // detail is a resolution hint the other protocols choose for themselves.
  onlyKnown(part, imagePartKeys, at, dropped);
  if (part.file_id != null) {
    throw invalid(`${at}.file_id cannot be used with this model: OpenAI file ids cannot be read by its channel; send image_url (a data: or http(s) URL).`);
  }
  const url = part.image_url;
  if (typeof url !== "string") throw invalid(`${at}.image_url must be a string.`);
  const m = dataUrl.exec(url);
  if (m) return { type: "image", source: { kind: "base64", mediaType: m[1], data: m[2] } };
  if (/^https?:\/\//i.test(url)) return { type: "image", source: { kind: "url", url } };
  throw invalid(`${at}.image_url must be an http(s) URL or a base64 data URL.`);
}

/** One content part; `allowed` lists the part types the role may carry. */
function contentPart(part: unknown, at: string, allowed: ReadonlySet<string>, dropped: string[]): TextBlock | ImageBlock | undefined {
  if (!isObject(part) || typeof part.type !== "string") throw invalid(`${at} must be a content part with a type.`);
  if (!allowed.has(part.type)) {
    const file = part.type === "input_file" ? " (files cannot be read by this model's channel)" : "";
    throw invalid(`${at}.type "${part.type}" cannot be converted to this model's channel${file}.`);
  }
  if (part.type === "input_image") return imageBlock(part, at, dropped);
  const field = part.type === "refusal" ? "refusal" : "text";
  // annotations and logprobs of an earlier answer are the client's copy, `parsed` the openai
  // SDK's parse of the text; the text is what counts.
  onlyKnown(part, field === "refusal" ? refusalPartKeys : textPartKeys, at, dropped);
  if (typeof part[field] !== "string") throw invalid(`${at}.${field} must be a string.`);
  return part[field] === "" ? undefined : { type: "text", text: part[field] as string };
}

/** A message's `content` (or a call output's `output`): a string or content parts. */
function contentBlocks(content: unknown, at: string, allowed: ReadonlySet<string>, dropped: string[], field = "content"): (TextBlock | ImageBlock)[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw invalid(`${at}.${field} must be a string or an array of content parts.`);
  const out: (TextBlock | ImageBlock)[] = [];
  content.forEach((p: unknown, i) => {
    const block = contentPart(p, `${at}.${field}[${i}]`, allowed, dropped);
    if (block) out.push(block);
  });
  return out;
}

const userParts = new Set(["input_text", "input_image"]);
const systemParts = new Set(["input_text"]);
const assistantParts = new Set(["output_text", "refusal", "input_text"]);
// id, status and phase describe an earlier output item; the content is what the model reads.
const messageKeys = new Set(["type", "role", "content", "id", "status", "phase"]);

function messageItem(item: Record<string, unknown>, at: string, conv: Conversation): void {
  onlyKnown(item, messageKeys, at, conv.dropped);
  if (item.content === undefined || item.content === null) throw invalid(`${at}.content is required.`);
  switch (item.role) {
    case "user":
      return conv.push("user", contentBlocks(item.content, at, userParts, conv.dropped));
    case "assistant":
      return conv.push("assistant", contentBlocks(item.content, at, assistantParts, conv.dropped));
    case "system":
    case "developer": {
      // Before the first turn: the system prompt (after instructions); later: in place.
      const text = contentBlocks(item.content, at, systemParts, conv.dropped) as TextBlock[];
      if (conv.messages.length === 0) conv.system.push(...text);
      else conv.push("system", text);
      return;
    }
    default:
      throw invalid(`${at}.role must be one of user, assistant, system, developer.`);
  }
}

function functionCallItem(item: Record<string, unknown>, at: string, conv: Conversation): void {
  // namespace groups tools OpenAI-side; caller says who made the call; neither changes it.
  // parsed_arguments is the openai SDK's parse of `arguments` (finalResponse()), sent back as is.
  onlyKnown(item, functionCallKeys, at, conv.dropped);
  if (typeof item.call_id !== "string" || item.call_id === "") throw invalid(`${at}.call_id must be a non-empty string.`);
  if (typeof item.name !== "string" || item.name === "") throw invalid(`${at}.name must be a non-empty string.`);
  if (typeof item.arguments !== "string") throw invalid(`${at}.arguments must be a string (JSON text).`);
  const input = parseArguments(item.arguments);
  if (!input) throw invalid(`${at}.arguments must be a JSON object.`);
  conv.called(item.call_id, item.name);
  conv.push("assistant", [{ type: "tool_use", id: item.call_id, name: item.name, input }]);
}

const outputParts = new Set(["input_text", "input_image"]);

function functionCallOutputItem(item: Record<string, unknown>, at: string, conv: Conversation): void {
  onlyKnown(item, callOutputKeys, at, conv.dropped);
  if (typeof item.call_id !== "string" || item.call_id === "") throw invalid(`${at}.call_id must be a non-empty string.`);
  if (item.output === undefined || item.output === null) throw invalid(`${at}.output is required.`);
  const content = contentBlocks(item.output, at, outputParts, conv.dropped, "output");
  const name = conv.nameOf(item.call_id);
  const block: ToolResultBlock = name === undefined
    ? { type: "tool_result", toolUseId: item.call_id, content }
    : { type: "tool_result", toolUseId: item.call_id, name, content };
  conv.push("user", [block]);
}

/** A reasoning item sent back: its summary text with the signature the gateway put in
 * encrypted_content (or redacted data). Reasoning text (`content`) is OpenAI's own and
 * never leaves it; items from OpenAI carry ciphertext no other channel can read. */
function reasoningItem(item: Record<string, unknown>, at: string, conv: Conversation): void {
  onlyKnown(item, reasoningItemKeys, at, conv.dropped);
  if (!Array.isArray(item.summary)) throw invalid(`${at}.summary must be an array.`);
  let text = "";
  item.summary.forEach((s: unknown, i) => {
    if (!isObject(s) || s.type !== "summary_text" || typeof s.text !== "string") {
      throw invalid(`${at}.summary[${i}] must be {"type":"summary_text","text":…}.`);
    }
    text += (text === "" || s.text === "" ? "" : "\n\n") + s.text;
  });
  const encrypted = optString(item, "encrypted_content", `${at}.`);
  const block = reasoningBlockOf(text, encrypted);
  if (block) conv.push("assistant", [block]);
}

/** Magic prefixes of base64 images: an image_generation_call result names no format. */
const base64Formats: readonly [string, string][] = [["iVBOR", "image/png"], ["/9j/", "image/jpeg"], ["UklGR", "image/webp"], ["R0lGOD", "image/gif"]];

/** An image an earlier answer made (the gateway returns a model's images as these items),
 * sent back with the history: an image in the model's turn, which the target keeps or drops
 * (field-policy.ts). Without a result (an in-progress call) there is nothing to keep. */
function imageGenerationItem(item: Record<string, unknown>, at: string, conv: Conversation): void {
  onlyKnown(item, imageCallKeys, at, conv.dropped);
  const data = optString(item, "result", `${at}.`);
  if (data === undefined || data === "") return;
  const format = typeof item.output_format === "string" ? `image/${item.output_format === "jpg" ? "jpeg" : item.output_format}` : undefined;
  const mediaType = format ?? base64Formats.find(([prefix]) => data.startsWith(prefix))?.[1] ?? "image/png";
  conv.push("assistant", [{ type: "image", source: { kind: "base64", mediaType, data } }]);
}

function decodeInput(input: unknown, conv: Conversation): void {
  if (typeof input === "string") {
    conv.push("user", input === "" ? [] : [{ type: "text", text: input }]);
    return;
  }
  if (!Array.isArray(input)) throw invalid("input must be a string or an array of input items.");
  input.forEach((item: unknown, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw invalid(`${at} must be an object.`);
    const type = item.type ?? "message";
    switch (type) {
      case "message": return messageItem(item, at, conv);
      case "function_call": return functionCallItem(item, at, conv);
      case "function_call_output": return functionCallOutputItem(item, at, conv);
      case "reasoning": return reasoningItem(item, at, conv);
      case "image_generation_call": return imageGenerationItem(item, at, conv);
      case "item_reference":
        throw invalid(`${at}.type "item_reference" cannot be used with this model: the gateway keeps no conversations; send the item itself.`);
      default:
        // A hosted tool's call from an earlier answer (OpenAI ran it; what it found is in the
        // answer's text): dropped and named, as the hosted tool itself is.
        if (typeof type === "string" && HOSTED_CALL_ITEMS.has(type)) return noteDropped(conv.dropped, hostedToolName("input[]", type));
        throw invalid(`${at}.type "${String(type)}" cannot be converted to this model's channel.`);
    }
  });
}

// ---- tools and settings ----

/** A function tool (top level, or inside a namespace `ns`). */
function functionTool(t: Record<string, unknown>, at: string, dropped: string[], ns?: string): Tool {
  for (const key of Object.keys(t)) {
    if (functionToolKeys.has(key)) continue;
    if (t[key] === null || t[key] === undefined || t[key] === false) continue;
    const rule = clientRule("responses", `tools[].${key}`);
    if (rule?.fate === "drop") noteDropped(dropped, rule.field);
    else noteUnknown(dropped, at, key);
  }
  if (typeof t.name !== "string" || t.name === "") throw invalid(`${at}.name must be a non-empty string.`);
  const description = optString(t, "description", `${at}.`);
  if (t.parameters !== undefined && t.parameters !== null && !isObject(t.parameters)) throw invalid(`${at}.parameters must be a JSON Schema object.`);
  const parameters = (t.parameters as Record<string, unknown> | null | undefined) ?? { type: "object", properties: {} };
  const tool: { -readonly [K in keyof Tool]: Tool[K] } = { name: t.name, parameters };
  if (description !== undefined) tool.description = description;
  if (ns !== undefined) tool.namespace = ns;
  return tool;
}

/** The tools a client offers, flat: a namespace's function tools by their own names; and
 * the hosted tools the target can have (web search). */
function decodeTools(v: unknown, dropped: string[]): { tools?: Tool[]; hostedTools?: HostedTool[] } {
  if (v === undefined || v === null) return {};
  if (!Array.isArray(v)) throw invalid("tools must be an array.");
  const tools: Tool[] = [];
  let webSearch = false as boolean;
  v.forEach((t: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isObject(t) || typeof t.type !== "string") throw invalid(`${at}.type is required.`);
    if (t.type === "function") {
      tools.push(functionTool(t, at, dropped));
      return;
    }
    if (t.type === "namespace") {
      if (typeof t.name !== "string" || t.name === "") throw invalid(`${at}.name must be a non-empty string.`);
      if (!Array.isArray(t.tools)) throw invalid(`${at}.tools must be an array.`);
      onlyKnown(t, new Set(["type", "name", "description", "tools"]), at, dropped);
      t.tools.forEach((inner: unknown, j) => {
        const where = `${at}.tools[${j}]`;
        if (!isObject(inner) || inner.type !== "function") throw invalid(`${where}.type must be "function"; other tool types cannot be converted.`);
        tools.push(functionTool(inner, where, dropped, t.name as string));
      });
      return;
    }
    // A hosted tool merely offered (Codex offers web search and image generation on every
    // turn): web search becomes the target's own (field-policy.ts), any other tool type is
    // dropped and named; the model answers without it.
    if (WEB_SEARCH_TOOLS.has(t.type)) webSearch = true;
    else noteDropped(dropped, hostedToolName("tools[]", t.type));
  });
  return {
    ...(tools.length > 0 && { tools }),
    ...(webSearch ? { hostedTools: [{ kind: "web_search" as const }] } : {}),
  };
}

function decodeToolChoice(v: unknown): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === "auto" || v === "none") return { type: v };
  if (v === "required") return { type: "any" };
  if (isObject(v) && v.type === "function" && typeof v.name === "string" && v.name !== "") return { type: "tool", name: v.name };
  if (isObject(v) && typeof v.type === "string" && (BUILT_IN_TOOLS.has(v.type) || WEB_SEARCH_TOOLS.has(v.type))) {
    throw forcedHostedRefusal("tool_choice", v.type);
  }
  throw invalid('tool_choice must be "auto", "none", "required" or {"type":"function","name":…}.');
}

function decodeReasoning(v: unknown, dropped: string[]): Reasoning | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid("reasoning must be an object.");
  // summary / generate_summary: thinking the channel returns is given as the summary either way.
  onlyKnown(v, new Set(["effort", "summary", "generate_summary"]), "reasoning", dropped);
  return reasoningEffort(v.effort, "reasoning.effort");
}

function decodeText(v: unknown, dropped: string[]): CanonicalRequest["responseFormat"] {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid("text must be an object.");
  onlyKnown(v, new Set(["format", "verbosity"]), "text", dropped);
  // verbosity steers OpenAI models' answer length; other channels have no such control.
  if (v.verbosity !== undefined && v.verbosity !== null) noteDropped(dropped, "text.verbosity");
  const f = v.format;
  if (f === undefined || f === null) return undefined;
  if (!isObject(f)) throw invalid("text.format must be an object.");
  if (f.type === "text") return undefined;
  if (f.type === "json_object") return {};
  if (f.type !== "json_schema") throw invalid('text.format.type must be "text", "json_object" or "json_schema".');
  // description and strict are hints to the model/decoder; the schema itself is carried.
  onlyKnown(f, new Set(["type", "name", "schema", "description", "strict"]), "text.format", dropped);
  if (typeof f.name !== "string" || f.name === "") throw invalid("text.format.name must be a non-empty string.");
  if (!isObject(f.schema)) throw invalid("text.format.schema must be a JSON Schema object.");
  return { schema: f.schema, name: f.name };
}

/** Decodes a responses request body; throws GatewayError 400 naming the field. */
export function decodeResponsesRequest(json: Record<string, unknown>): CanonicalRequest {
  if (typeof json.model !== "string" || json.model === "") throw new GatewayError(errors.missingParameter, "model is required.");
  if (json.input === undefined || json.input === null) {
    throw new GatewayError(errors.missingParameter, "input is required: a string or an array of input items.");
  }
  const dropped: string[] = [];
  checkFields(json, dropped);
  const conv = new Conversation(dropped);
  const instructions = optString(json, "instructions", "");
  if (instructions) conv.system.push({ type: "text", text: instructions });
  decodeInput(json.input, conv);
  if (!conv.messages.some((m) => m.role !== "system")) throw invalid("input must hold at least one user, assistant or function_call_output item with content.");
  const req: Record<string, unknown> = {
    model: json.model,
    system: conv.system,
    messages: conv.messages,
    maxTokens: optInt(json, "max_output_tokens", ""),
    temperature: optNumber(json, "temperature", ""),
    topP: optNumber(json, "top_p", ""),
    ...decodeTools(json.tools, dropped),
    toolChoice: decodeToolChoice(json.tool_choice),
    parallelToolCalls: typeof json.parallel_tool_calls === "boolean" ? json.parallel_tool_calls : undefined,
    reasoning: decodeReasoning(json.reasoning, dropped),
    stream: json.stream === true,
    // safety_identifier replaced `user`; both identify the end user for abuse tracking.
    user: optString(json, "user", "") ?? optString(json, "safety_identifier", ""),
    responseFormat: decodeText(json.text, dropped),
    dropped: dropped.length > 0 ? dropped : undefined,
  };
  for (const key of Object.keys(req)) if (req[key] === undefined) delete req[key];
  return req as unknown as CanonicalRequest;
}
