// Content blocks between the messages wire and the hub, both ways. Requests and responses
// share these shapes, so the request decoder, request encoder and response code all use them.

import type { Block, CacheHint, ImageBlock, ImageSource, TextBlock } from "../canonical.js";
import { hostedToolName, noteDropped } from "../field-policy.js";
import { array, invalid, object, onlyKeys, optBool, readCache, string, writeCache, type Json } from "./fields.js";

const keys = (...k: string[]): ReadonlySet<string> => new Set(["type", "cache_control", ...k]);
const TEXT = keys("text", "citations");
const IMAGE = keys("source");
const TOOL_USE = keys("id", "name", "input", "caller", "toolset_name");
const TOOL_RESULT = keys("tool_use_id", "content", "is_error");
const THINKING = new Set(["type", "thinking", "signature"]);
const REDACTED = new Set(["type", "data"]);
const TOOL_REFERENCE = keys("tool_name");
const BASE64_SOURCE = new Set(["type", "media_type", "data"]);
const URL_SOURCE = new Set(["type", "url"]);
/** Blocks of server tools Anthropic ran: server_tool_use, web_search_tool_result, … */
const SERVER_TOOL_BLOCK = /^(server_tool_use|mcp_tool_use|mcp_tool_result|[a-z_]+_tool_result)$/;

/** Reads a text block; citations are only accepted empty (they point into documents, which
 * the hub cannot carry). */
function text(o: Json, field: string, dropped: string[]): TextBlock {
  onlyKeys(o, TEXT, field, dropped);
  if (o.citations != null && array(o.citations, `${field}.citations`).length > 0) {
    invalid(`${field}.citations`, "citations are not supported");
  }
  const cache = readCache(o.cache_control, `${field}.cache_control`, dropped);
  return { type: "text", text: string(o.text, `${field}.text`), ...(cache && { cache }) };
}

function imageSource(v: unknown, field: string, dropped: string[]): ImageSource {
  const s = object(v, field);
  if (s.type === "base64") {
    onlyKeys(s, BASE64_SOURCE, field, dropped);
    return { kind: "base64", mediaType: string(s.media_type, `${field}.media_type`), data: string(s.data, `${field}.data`) };
  }
  if (s.type === "url") {
    onlyKeys(s, URL_SOURCE, field, dropped);
    return { kind: "url", url: string(s.url, `${field}.url`) };
  }
  return invalid(`${field}.type`, `image source type ${JSON.stringify(s.type)} is not supported (use base64 or url)`);
}

function image(o: Json, field: string, dropped: string[]): ImageBlock {
  onlyKeys(o, IMAGE, field, dropped);
  const cache = readCache(o.cache_control, `${field}.cache_control`, dropped);
  return { type: "image", source: imageSource(o.source, `${field}.source`, dropped), ...(cache && { cache }) };
}

/** Tool-result content: a string, or text and image blocks. A tool search's
 * `tool_reference` (which loads a deferred tool) becomes text naming the tool: converted,
 * `defer_loading` is dropped, so every tool is in the request already. */
function resultContent(v: unknown, field: string, dropped: string[]): (TextBlock | ImageBlock)[] {
  if (v === undefined || v === null) return [];
  if (typeof v === "string") return [{ type: "text", text: v }];
  return array(v, field).map((item, i) => {
    const o = object(item, `${field}[${i}]`);
    if (o.type === "text") return text(o, `${field}[${i}]`, dropped);
    if (o.type === "image") return image(o, `${field}[${i}]`, dropped);
    if (o.type === "tool_reference") {
      onlyKeys(o, TOOL_REFERENCE, `${field}[${i}]`, dropped);
      return { type: "text", text: `Tool loaded: ${string(o.tool_name, `${field}[${i}].tool_name`)}` };
    }
    return invalid(`${field}[${i}].type`, `block type ${JSON.stringify(o.type)} is not supported in a tool result`);
  });
}

/**
 * Reads one request content block. `names` maps tool_use ids seen so far to tool names, so
 * tool results get their tool's name (Gemini needs it).
 */
export function decodeBlock(v: unknown, field: string, names: Map<string, string>, dropped: string[]): Block | undefined {
  const o = object(v, field);
  switch (o.type) {
    case "text":
      return text(o, field, dropped);
    case "image":
      return image(o, field, dropped);
    case "tool_use": {
      onlyKeys(o, TOOL_USE, field, dropped);
      if (o.caller != null && object(o.caller, `${field}.caller`).type !== "direct") invalid(`${field}.caller`, 'only "direct" callers are supported');
      if (o.toolset_name != null) invalid(`${field}.toolset_name`, "toolsets are not supported");
      const id = string(o.id, `${field}.id`);
      const name = string(o.name, `${field}.name`);
      names.set(id, name);
      const cache = readCache(o.cache_control, `${field}.cache_control`, dropped);
      return { type: "tool_use", id, name, input: object(o.input, `${field}.input`), ...(cache && { cache }) };
    }
    case "tool_result": {
      onlyKeys(o, TOOL_RESULT, field, dropped);
      const toolUseId = string(o.tool_use_id, `${field}.tool_use_id`);
      const name = names.get(toolUseId);
      const isError = optBool(o.is_error, `${field}.is_error`);
      const cache = readCache(o.cache_control, `${field}.cache_control`, dropped);
      return {
        type: "tool_result", toolUseId, content: resultContent(o.content, `${field}.content`, dropped),
        ...(name !== undefined && { name }), ...(isError !== undefined && { isError }), ...(cache && { cache }),
      };
    }
    case "thinking": {
      onlyKeys(o, THINKING, field, dropped);
      // "" is the signature our answers give other vendors' reasoning: unsigned (response.ts).
      const signature = o.signature == null || o.signature === "" ? undefined : string(o.signature, `${field}.signature`);
      return { type: "thinking", text: string(o.thinking, `${field}.thinking`), ...(signature !== undefined && { signature }) };
    }
    case "redacted_thinking":
      onlyKeys(o, REDACTED, field, dropped);
      return { type: "redacted_thinking", data: string(o.data, `${field}.data`) };
    default:
      // A server tool's call or result from an earlier answer (Anthropic ran it; what it
      // found is in the answer's text): dropped and named, as the server tool itself is.
      if (typeof o.type === "string" && SERVER_TOOL_BLOCK.test(o.type)) {
        noteDropped(dropped, hostedToolName("messages[].content[]", o.type));
        return undefined;
      }
      return invalid(`${field}.type`, `content block type ${JSON.stringify(o.type)} is not supported for conversion`);
  }
}

/** Reads a message's `content`: a string or an array of blocks. */
export function decodeContent(v: unknown, field: string, names: Map<string, string>, dropped: string[]): Block[] {
  if (typeof v === "string") return [{ type: "text", text: v }];
  return array(v, field).flatMap((b, i) => decodeBlock(b, `${field}[${i}]`, names, dropped) ?? []);
}

function source(s: ImageSource): Json {
  return s.kind === "base64" ? { type: "base64", media_type: s.mediaType, data: s.data } : { type: "url", url: s.url };
}

function withCache(o: Json, b: { readonly cache?: CacheHint }): Json {
  return b.cache ? { ...o, cache_control: writeCache(b.cache) } : o;
}

/**
 * One canonical block as a wire content block, or undefined for a thinking block without a
 * signature: such reasoning came from another vendor's model, the messages API rejects
 * unsigned thinking, and it ignores earlier turns' thinking anyway.
 */
export function encodeBlock(b: Block): Json | undefined {
  switch (b.type) {
    case "text":
      return withCache({ type: "text", text: b.text }, b);
    case "image":
      return withCache({ type: "image", source: source(b.source) }, b);
    case "tool_use":
      return withCache({ type: "tool_use", id: b.id, name: b.name, input: b.input }, b);
    case "tool_result": {
      const o: Json = { type: "tool_result", tool_use_id: b.toolUseId };
      if (b.content.length > 0) o.content = b.content.map((c) => encodeBlock(c) as Json);
      if (b.isError) o.is_error = true;
      return withCache(o, b);
    }
    case "thinking":
      return b.signature === undefined ? undefined : { type: "thinking", thinking: b.text, signature: b.signature };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: b.data };
  }
}
