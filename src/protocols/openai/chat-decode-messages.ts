// Reads chat-completions `messages` into canonical system blocks and turns. System and
// developer messages before the first turn are the system prompt; later ones stay in place
// as system-role turns. Tool messages become tool_result blocks (legacy function calls and
// function messages too: chat-legacy-functions.ts); consecutive turns of one role are merged.
// Cache hints come as OpenAI's `prompt_cache_breakpoint` on a part, or as the
// Anthropic-style `cache_control` OpenRouter accepts on a part or on a whole message (the
// message's last block then carries it).

import type { Block, CacheHint, ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock } from "../canonical.js";
import { noteDropped } from "../field-policy.js";
import { invalid, isObject, onlyKnown, parseArguments } from "./chat-common.js";
import { imageBlocksOf } from "./chat-images.js";
import { LegacyCalls } from "./chat-legacy-functions.js";

// `name` (a participant label) is dropped (field-policy.ts): no other protocol has a place
// for it, and the conversation text itself is unchanged.
const systemKeys = new Set(["role", "content", "name", "cache_control"]);
const userKeys = new Set(["role", "content", "name", "cache_control"]);
const assistantKeys = new Set(["role", "content", "name", "tool_calls", "refusal", "reasoning_content", "audio", "function_call", "images", "cache_control"]);
const toolKeys = new Set(["role", "content", "tool_call_id", "cache_control"]);
const functionKeys = new Set(["role", "content", "name"]);
const ttls = new Set(["5m", "1h"]);
// `detail` is a resolution hint the other protocols choose for themselves.
const imageUrlKeys = new Set(["url", "detail"]);
// Key sets checked per part and per call, built once.
const partCacheKeys = ["prompt_cache_breakpoint", "cache_control"];
const imagePartKeys = new Set(["type", "image_url", ...partCacheKeys]);
const textPartKeys = new Set(["type", "text", ...partCacheKeys]);
const refusalPartKeys = new Set(["type", "refusal", ...partCacheKeys]);
const cacheControlKeys = new Set(["type", "ttl"]);
const toolCallKeys = new Set(["id", "type", "function"]);
const toolCallFunctionKeys = new Set(["name", "arguments"]);

const dataUrl = /^data:([^;,]+);base64,(.*)$/s;

/** The canonical system prompt and conversation of a chat-completions request. */
export interface DecodedMessages {
  readonly system: TextBlock[];
  readonly messages: Message[];
}

/** Where the client's cache hints were read, by the names field-policy.ts gives them. */
type CacheNames = string[];

function noteName(names: CacheNames, name: string): void {
  if (!names.includes(name)) names.push(name);
}

/** An Anthropic-style `cache_control` ({type: "ephemeral", ttl?: "5m" | "1h"}). */
function cacheControl(v: unknown, where: string, dropped: string[]): CacheHint | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v) || v.type !== "ephemeral") throw invalid(`${where}.cache_control must be {"type":"ephemeral"}.`);
  onlyKnown(v, cacheControlKeys, `${where}.cache_control`, dropped);
  if (v.ttl === undefined || v.ttl === null) return { type: "ephemeral" };
  if (typeof v.ttl !== "string" || !ttls.has(v.ttl)) throw invalid(`${where}.cache_control.ttl must be "5m" or "1h".`);
  return { type: "ephemeral", ttl: v.ttl };
}

function cacheOf(part: Record<string, unknown>, where: string, names: CacheNames, dropped: string[]): CacheHint | undefined {
  const control = cacheControl(part.cache_control, where, dropped);
  if (control) noteName(names, "messages[].content[].cache_control");
  const bp = part.prompt_cache_breakpoint;
  if (bp === undefined || bp === null) return control;
  if (!isObject(bp) || bp.mode !== "explicit") throw invalid(`${where}.prompt_cache_breakpoint must be {"mode":"explicit"}.`);
  noteName(names, "messages[].content[].prompt_cache_breakpoint");
  return control ?? { type: "ephemeral" };
}

/** A message-level cache_control on the message's last block that can carry one. */
function withMessageCache(blocks: Block[], m: Record<string, unknown>, where: string, names: CacheNames, dropped: string[]): Block[] {
  const hint = cacheControl(m.cache_control, where, dropped);
  if (!hint) return blocks;
  noteName(names, "messages[].cache_control");
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i];
    if (b.type === "thinking" || b.type === "redacted_thinking") continue;
    const out = [...blocks];
    out[i] = { ...b, cache: hint };
    return out;
  }
  return blocks;
}

function textBlock(text: string, cache?: CacheHint): TextBlock {
  return cache ? { type: "text", text, cache } : { type: "text", text };
}

function imageBlock(part: Record<string, unknown>, where: string, names: CacheNames, dropped: string[]): ImageBlock {
  const img = part.image_url;
  if (!isObject(img) || typeof img.url !== "string") throw invalid(`${where}.image_url.url must be a string.`);
  onlyKnown(img, imageUrlKeys, `${where}.image_url`, dropped);
  const cache = cacheOf(part, where, names, dropped);
  const m = dataUrl.exec(img.url);
  const source = m
    ? { kind: "base64" as const, mediaType: m[1], data: m[2] }
    : /^https?:\/\//i.test(img.url) ? { kind: "url" as const, url: img.url } : undefined;
  if (!source) throw invalid(`${where}.image_url.url must be an http(s) URL or a base64 data URL.`);
  return cache ? { type: "image", source, cache } : { type: "image", source };
}

/** Content as parts; `allowed` lists the part types this role may carry. */
function contentParts(content: unknown, where: string, allowed: ReadonlySet<string>, names: CacheNames, dropped: string[]): (TextBlock | ImageBlock)[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [textBlock(content)];
  if (!Array.isArray(content)) throw invalid(`${where}.content must be a string or an array of content parts.`);
  const out: (TextBlock | ImageBlock)[] = [];
  content.forEach((part: unknown, i) => {
    const at = `${where}.content[${i}]`;
    if (!isObject(part) || typeof part.type !== "string") throw invalid(`${at} must be a content part with a type.`);
    if (!allowed.has(part.type)) throw invalid(`${at}.type "${part.type}" cannot be converted to the channel's protocol.`);
    if (part.type === "image_url") {
      onlyKnown(part, imagePartKeys, at, dropped);
      out.push(imageBlock(part, at, names, dropped));
      return;
    }
    const field = part.type === "refusal" ? "refusal" : "text";
    onlyKnown(part, field === "refusal" ? refusalPartKeys : textPartKeys, at, dropped);
    if (typeof part[field] !== "string") throw invalid(`${at}.${field} must be a string.`);
    if (part[field] !== "") out.push(textBlock(part[field] as string, cacheOf(part, at, names, dropped)));
  });
  return out;
}

const textOnly = new Set(["text"]);
const userParts = new Set(["text", "image_url"]);
const assistantParts = new Set(["text", "refusal"]);

function assistantBlocks(m: Record<string, unknown>, i: number, names: Map<string, string>, legacy: LegacyCalls, cacheNames: CacheNames, dropped: string[]): Block[] {
  const where = `messages[${i}]`;
  if (m.audio !== undefined && m.audio !== null) throw invalid(`${where}.audio cannot be converted to the channel's protocol.`);
  const blocks: Block[] = [];
  if (m.reasoning_content !== undefined && m.reasoning_content !== null) {
    if (typeof m.reasoning_content !== "string") throw invalid(`${where}.reasoning_content must be a string.`);
    if (m.reasoning_content !== "") blocks.push({ type: "thinking", text: m.reasoning_content });
  }
  blocks.push(...contentParts(m.content, where, assistantParts, cacheNames, dropped));
  if (typeof m.refusal === "string" && m.refusal !== "") blocks.push(textBlock(m.refusal));
  else if (m.refusal !== undefined && m.refusal !== null && typeof m.refusal !== "string") throw invalid(`${where}.refusal must be a string.`);
  // Images an earlier answer carried (message.images, chat-images.ts), sent back with the
  // history: kept in the model's turn, for the targets that take them there (field-policy.ts).
  if (m.images !== undefined && m.images !== null) {
    if (!Array.isArray(m.images)) throw invalid(`${where}.images must be an array.`);
    blocks.push(...imageBlocksOf(m.images));
  }
  if (m.function_call !== undefined && m.function_call !== null) blocks.push(legacy.call(m.function_call, i));
  if (m.tool_calls === undefined || m.tool_calls === null) return blocks;
  if (!Array.isArray(m.tool_calls)) throw invalid(`${where}.tool_calls must be an array.`);
  m.tool_calls.forEach((tc: unknown, j) => blocks.push(toolUse(tc, `${where}.tool_calls[${j}]`, names, dropped)));
  return blocks;
}

function toolUse(tc: unknown, at: string, names: Map<string, string>, dropped: string[]): ToolUseBlock {
  if (!isObject(tc)) throw invalid(`${at} must be an object.`);
  if (tc.type !== "function") throw invalid(`${at}.type must be "function"; other tool call types cannot be converted.`);
  onlyKnown(tc, toolCallKeys, at, dropped);
  const fn = tc.function;
  if (typeof tc.id !== "string" || tc.id === "") throw invalid(`${at}.id must be a non-empty string.`);
  if (!isObject(fn) || typeof fn.name !== "string") throw invalid(`${at}.function.name must be a string.`);
  onlyKnown(fn, toolCallFunctionKeys, `${at}.function`, dropped);
  const input = parseArguments(typeof fn.arguments === "string" ? fn.arguments : "");
  if (!input) throw invalid(`${at}.function.arguments must be a JSON object.`);
  names.set(tc.id, fn.name);
  return { type: "tool_use", id: tc.id, name: fn.name, input };
}

function toolResult(m: Record<string, unknown>, where: string, names: Map<string, string>, cacheNames: CacheNames, dropped: string[]): ToolResultBlock {
  if (typeof m.tool_call_id !== "string" || m.tool_call_id === "") throw invalid(`${where}.tool_call_id must be a non-empty string.`);
  const content = contentParts(m.content, where, textOnly, cacheNames, dropped);
  const name = names.get(m.tool_call_id);
  return name === undefined
    ? { type: "tool_result", toolUseId: m.tool_call_id, content }
    : { type: "tool_result", toolUseId: m.tool_call_id, name, content };
}

/** Decodes `messages` (already known to be an array); dropped fields are added to `dropped`,
 * the names of the cache hints read to `cacheNames`. */
export function decodeMessages(list: readonly unknown[], dropped: string[] = [], cacheNames: string[] = []): DecodedMessages {
  const system: TextBlock[] = [];
  const messages: Message[] = [];
  const names = new Map<string, string>();
  const legacy = new LegacyCalls(dropped);
  const push = (role: Message["role"], content: Block[]): void => {
    if (content.length === 0) return;
    const last = messages.at(-1);
    if (last && last.role === role) messages[messages.length - 1] = { role, content: [...last.content, ...content] };
    else messages.push({ role, content });
  };
  list.forEach((m: unknown, i) => {
    const where = `messages[${i}]`;
    if (!isObject(m)) throw invalid(`${where} must be an object.`);
    if (m.name !== undefined && m.name !== null && m.role !== "function") noteDropped(dropped, "messages[].name");
    const cached = (blocks: Block[]): Block[] => withMessageCache(blocks, m, where, cacheNames, dropped);
    switch (m.role) {
      case "system":
      case "developer": {
        onlyKnown(m, systemKeys, where, dropped);
        const text = cached(contentParts(m.content, where, textOnly, cacheNames, dropped)) as TextBlock[];
        if (messages.length === 0) system.push(...text);
        else push("system", text);
        return;
      }
      case "user":
        onlyKnown(m, userKeys, where, dropped);
        return push("user", cached(contentParts(m.content, where, userParts, cacheNames, dropped)));
      case "assistant":
        onlyKnown(m, assistantKeys, where, dropped);
        return push("assistant", cached(assistantBlocks(m, i, names, legacy, cacheNames, dropped)));
      case "tool":
        onlyKnown(m, toolKeys, where, dropped);
        return push("user", cached([toolResult(m, where, names, cacheNames, dropped)]));
      case "function":
        onlyKnown(m, functionKeys, where, dropped);
        return push("user", [legacy.result(m, i, contentParts(m.content, where, textOnly, cacheNames, dropped))]);
      default:
        throw invalid(`${where}.role must be one of system, developer, user, assistant, tool, function.`);
    }
  });
  return { system, messages };
}
