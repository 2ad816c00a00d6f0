// Reads chat-completions `messages` into canonical system blocks and turns. System and
// developer messages before the first turn are the system prompt; later ones stay in place
// as system-role turns. Tool messages become tool_result blocks; consecutive turns of one
// role are merged.

import type { Block, CacheHint, ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock } from "../canonical.js";
import { noteDropped } from "../field-policy.js";
import { invalid, isObject, onlyKnown, parseArguments } from "./chat-common.js";

// `name` (a participant label) is dropped (field-policy.ts): no other protocol has a place
// for it, and the conversation text itself is unchanged.
const systemKeys = new Set(["role", "content", "name"]);
const userKeys = new Set(["role", "content", "name"]);
const assistantKeys = new Set(["role", "content", "name", "tool_calls", "refusal", "reasoning_content", "audio", "function_call", "images"]);
const toolKeys = new Set(["role", "content", "tool_call_id"]);
// `detail` is a resolution hint the other protocols choose for themselves.
const imageUrlKeys = new Set(["url", "detail"]);

const dataUrl = /^data:([^;,]+);base64,(.*)$/s;

/** The canonical system prompt and conversation of a chat-completions request. */
export interface DecodedMessages {
  readonly system: TextBlock[];
  readonly messages: Message[];
}

function cacheOf(part: Record<string, unknown>, where: string): CacheHint | undefined {
  const bp = part.prompt_cache_breakpoint;
  if (bp === undefined || bp === null) return undefined;
  if (!isObject(bp) || bp.mode !== "explicit") throw invalid(`${where}.prompt_cache_breakpoint must be {"mode":"explicit"}.`);
  return { type: "ephemeral" };
}

function textBlock(text: string, cache?: CacheHint): TextBlock {
  return cache ? { type: "text", text, cache } : { type: "text", text };
}

function imageBlock(part: Record<string, unknown>, where: string, dropped: string[]): ImageBlock {
  const img = part.image_url;
  if (!isObject(img) || typeof img.url !== "string") throw invalid(`${where}.image_url.url must be a string.`);
  onlyKnown(img, imageUrlKeys, `${where}.image_url`, dropped);
  const cache = cacheOf(part, where);
  const m = dataUrl.exec(img.url);
  const source = m
    ? { kind: "base64" as const, mediaType: m[1], data: m[2] }
    : /^https?:\/\//i.test(img.url) ? { kind: "url" as const, url: img.url } : undefined;
  if (!source) throw invalid(`${where}.image_url.url must be an http(s) URL or a base64 data URL.`);
  return cache ? { type: "image", source, cache } : { type: "image", source };
}

/** Content as parts; `allowed` lists the part types this role may carry. */
function contentParts(content: unknown, where: string, allowed: ReadonlySet<string>, dropped: string[]): (TextBlock | ImageBlock)[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [textBlock(content)];
  if (!Array.isArray(content)) throw invalid(`${where}.content must be a string or an array of content parts.`);
  const out: (TextBlock | ImageBlock)[] = [];
  content.forEach((part: unknown, i) => {
    const at = `${where}.content[${i}]`;
    if (!isObject(part) || typeof part.type !== "string") throw invalid(`${at} must be a content part with a type.`);
    if (!allowed.has(part.type)) throw invalid(`${at}.type "${part.type}" cannot be converted to the channel's protocol.`);
    if (part.type === "image_url") {
      onlyKnown(part, new Set(["type", "image_url", "prompt_cache_breakpoint"]), at, dropped);
      out.push(imageBlock(part, at, dropped));
      return;
    }
    const field = part.type === "refusal" ? "refusal" : "text";
    onlyKnown(part, new Set(["type", field, "prompt_cache_breakpoint"]), at, dropped);
    if (typeof part[field] !== "string") throw invalid(`${at}.${field} must be a string.`);
    if (part[field] !== "") out.push(textBlock(part[field] as string, cacheOf(part, at)));
  });
  return out;
}

const textOnly = new Set(["text"]);
const userParts = new Set(["text", "image_url"]);
const assistantParts = new Set(["text", "refusal"]);

function assistantBlocks(m: Record<string, unknown>, where: string, names: Map<string, string>, dropped: string[]): Block[] {
  if (m.audio !== undefined && m.audio !== null) throw invalid(`${where}.audio cannot be converted to the channel's protocol.`);
  if (m.function_call !== undefined && m.function_call !== null) {
    throw invalid(`${where}.function_call (legacy functions) is not supported when converting protocols; use tool_calls.`);
  }
  const blocks: Block[] = [];
  if (m.reasoning_content !== undefined && m.reasoning_content !== null) {
    if (typeof m.reasoning_content !== "string") throw invalid(`${where}.reasoning_content must be a string.`);
    if (m.reasoning_content !== "") blocks.push({ type: "thinking", text: m.reasoning_content });
  }
  blocks.push(...contentParts(m.content, where, assistantParts, dropped));
  if (typeof m.refusal === "string" && m.refusal !== "") blocks.push(textBlock(m.refusal));
  else if (m.refusal !== undefined && m.refusal !== null && typeof m.refusal !== "string") throw invalid(`${where}.refusal must be a string.`);
  if (m.tool_calls === undefined || m.tool_calls === null) return blocks;
  if (!Array.isArray(m.tool_calls)) throw invalid(`${where}.tool_calls must be an array.`);
  m.tool_calls.forEach((tc: unknown, j) => blocks.push(toolUse(tc, `${where}.tool_calls[${j}]`, names, dropped)));
  return blocks;
}

function toolUse(tc: unknown, at: string, names: Map<string, string>, dropped: string[]): ToolUseBlock {
  if (!isObject(tc)) throw invalid(`${at} must be an object.`);
  if (tc.type !== "function") throw invalid(`${at}.type must be "function"; other tool call types cannot be converted.`);
  onlyKnown(tc, new Set(["id", "type", "function"]), at, dropped);
  const fn = tc.function;
  if (typeof tc.id !== "string" || tc.id === "") throw invalid(`${at}.id must be a non-empty string.`);
  if (!isObject(fn) || typeof fn.name !== "string") throw invalid(`${at}.function.name must be a string.`);
  onlyKnown(fn, new Set(["name", "arguments"]), `${at}.function`, dropped);
  const input = parseArguments(typeof fn.arguments === "string" ? fn.arguments : "");
  if (!input) throw invalid(`${at}.function.arguments must be a JSON object.`);
  names.set(tc.id, fn.name);
  return { type: "tool_use", id: tc.id, name: fn.name, input };
}

function toolResult(m: Record<string, unknown>, where: string, names: Map<string, string>, dropped: string[]): ToolResultBlock {
  if (typeof m.tool_call_id !== "string" || m.tool_call_id === "") throw invalid(`${where}.tool_call_id must be a non-empty string.`);
  const content = contentParts(m.content, where, textOnly, dropped);
  const name = names.get(m.tool_call_id);
  return name === undefined
    ? { type: "tool_result", toolUseId: m.tool_call_id, content }
    : { type: "tool_result", toolUseId: m.tool_call_id, name, content };
}

/** Decodes `messages` (already known to be an array); dropped fields are added to `dropped`. */
export function decodeMessages(list: readonly unknown[], dropped: string[] = []): DecodedMessages {
  const system: TextBlock[] = [];
  const messages: Message[] = [];
  const names = new Map<string, string>();
  const push = (role: Message["role"], content: Block[]): void => {
    if (content.length === 0) return;
    const last = messages.at(-1);
    if (last && last.role === role) messages[messages.length - 1] = { role, content: [...last.content, ...content] };
    else messages.push({ role, content });
  };
  list.forEach((m: unknown, i) => {
    const where = `messages[${i}]`;
    if (!isObject(m)) throw invalid(`${where} must be an object.`);
    if (m.name !== undefined && m.name !== null) noteDropped(dropped, "messages[].name");
    switch (m.role) {
      case "system":
      case "developer": {
        onlyKnown(m, systemKeys, where, dropped);
        const text = contentParts(m.content, where, textOnly, dropped) as TextBlock[];
        if (messages.length === 0) system.push(...text);
        else push("system", text);
        return;
      }
      case "user":
        onlyKnown(m, userKeys, where, dropped);
        return push("user", contentParts(m.content, where, userParts, dropped));
      case "assistant":
        onlyKnown(m, assistantKeys, where, dropped);
        // Images an answer carried (message.images), sent back with the history: no other
        // protocol takes images in the model's own turns.
        if (Array.isArray(m.images) && m.images.length > 0) noteDropped(dropped, "messages[].images");
        return push("assistant", assistantBlocks(m, where, names, dropped));
      case "tool":
        onlyKnown(m, toolKeys, where, dropped);
        return push("user", [toolResult(m, where, names, dropped)]);
      case "function":
        throw invalid(`${where}.role "function" (legacy functions) is not supported when converting protocols; use tool messages.`);
      default:
        throw invalid(`${where}.role must be one of system, developer, user, assistant, tool.`);
    }
  });
  return { system, messages };
}
