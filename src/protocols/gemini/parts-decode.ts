// Gemini `parts` → canonical blocks, for client requests (strict: anything the hub cannot
// carry is a 400 naming the part) and for upstream answers (lenient: unknown parts skipped).
// Thought signatures: a thought part keeps its signature on its thinking block; a signature
// on any other part becomes an empty, signed thinking block just before that part's block,
// so the encoder can put it back on the same part.

import { dropUnknownKeys } from "../field-policy.js";
import type { Block, ImageBlock, TextBlock, ToolResultBlock } from "../canonical.js";
import { array, CallIds, invalid, isObject, object, setKeys, SKIP_SIGNATURE, string, type JsonObject } from "./wire.js";

const PART_KEYS = new Set(["text", "thought", "thoughtSignature", "inlineData", "fileData", "functionCall", "functionResponse"]);
const CALL_KEYS = new Set(["id", "name", "args"]);
const RESPONSE_KEYS = new Set(["id", "name", "response", "parts"]);

/** How to read one turn's parts. */
export interface PartsContext {
  /** Client request (reject what cannot be carried) vs upstream answer (skip it). */
  readonly strict: boolean;
  readonly role: "user" | "assistant";
  /** Field path of the parts array's owner, for error messages, e.g. "contents[2]". */
  readonly field: string;
  readonly ids: CallIds;
  /** Client request: where keys the hub does not know are dropped and named. */
  readonly dropped?: string[];
}

/**
 * The canonical blocks of a Gemini `parts` array, appended to `blocks` (pass the previous
 * turn's blocks to continue it: the SDK's chat history keeps each streamed chunk as its
 * own Content, so a thought can span several).
 */
export function decodeParts(parts: unknown, ctx: PartsContext, blocks: Block[] = []): Block[] {
  const list = ctx.strict ? array(parts, `${ctx.field}.parts`) : Array.isArray(parts) ? parts : [];
  list.forEach((raw, j) => {
    const field = `${ctx.field}.parts[${j}]`;
    if (!isObject(raw)) {
      if (ctx.strict) throw invalid(field, "must be an object");
      return;
    }
    // A key the hub does not know (a part kind or a field added later) is dropped and named;
    // a part made only of such keys is left out whole.
    if (ctx.strict && setKeys(raw).some((k) => !PART_KEYS.has(k))) {
      onlyKeys(raw, PART_KEYS, field, ctx);
      if (setKeys(raw).every((k) => !PART_KEYS.has(k))) return;
    }
    decodePart(raw, field, ctx, blocks);
  });
  return blocks;
}

function decodePart(p: JsonObject, field: string, ctx: PartsContext, blocks: Block[]): void {
  // The documented "no signature" sentinel signs nothing: another vendor must not get it.
  const signature = typeof p.thoughtSignature === "string" && p.thoughtSignature !== SKIP_SIGNATURE ? p.thoughtSignature : undefined;
  if (p.thought === true) {
    if (ctx.strict && ctx.role === "user") throw invalid(`${field}.thought`, "only model turns carry thoughts");
    const text = typeof p.text === "string" ? p.text : "";
    const last = blocks.at(-1);
    if (last?.type === "thinking" && last.signature === undefined) {
      blocks[blocks.length - 1] = { type: "thinking", text: last.text + text, ...(signature !== undefined && { signature }) };
    } else {
      blocks.push({ type: "thinking", text, ...(signature !== undefined && { signature }) });
    }
    return;
  }
  if (signature !== undefined) blocks.push({ type: "thinking", text: "", signature });
  if (typeof p.text === "string") {
    if (p.text !== "") blocks.push({ type: "text", text: p.text });
  } else if (p.inlineData != null || p.fileData != null) {
    const image = decodeMedia(p, field, ctx.strict);
    if (image) blocks.push(image);
  } else if (p.functionCall != null) {
    if (ctx.strict && ctx.role === "user") throw invalid(`${field}.functionCall`, "only model turns carry function calls");
    const call = object(p.functionCall, `${field}.functionCall`);
    if (ctx.strict) onlyKeys(call, CALL_KEYS, `${field}.functionCall`, ctx);
    const name = string(call.name, `${field}.functionCall.name`);
    const id = call.id == null ? undefined : string(call.id, `${field}.functionCall.id`);
    const input = call.args == null ? {} : object(call.args, `${field}.functionCall.args`);
    blocks.push({ type: "tool_use", id: ctx.ids.call(id, name), name, input });
  } else if (p.functionResponse != null) {
    if (ctx.strict && ctx.role === "assistant") throw invalid(`${field}.functionResponse`, "only user turns carry function responses");
    blocks.push(decodeFunctionResponse(object(p.functionResponse, `${field}.functionResponse`), `${field}.functionResponse`, ctx));
  } else if (ctx.strict && signature === undefined) {
    throw invalid(field, "a part needs text, inlineData, fileData, functionCall or functionResponse");
  }
}

/** An inlineData/fileData part as an image block; non-images are a 400 (strict) or skipped. */
function decodeMedia(p: JsonObject, field: string, strict: boolean): ImageBlock | undefined {
  if (p.inlineData != null) {
    const d = object(p.inlineData, `${field}.inlineData`);
    const mediaType = string(d.mimeType, `${field}.inlineData.mimeType`);
    if (!mediaType.startsWith("image/")) {
      if (strict) throw invalid(`${field}.inlineData.mimeType`, `only images can be converted, not ${mediaType}`);
      return undefined;
    }
    return { type: "image", source: { kind: "base64", mediaType, data: string(d.data, `${field}.inlineData.data`) } };
  }
  const f = object(p.fileData, `${field}.fileData`);
  const mime = f.mimeType == null ? undefined : string(f.mimeType, `${field}.fileData.mimeType`);
  if (mime !== undefined && !mime.startsWith("image/")) {
    if (strict) throw invalid(`${field}.fileData.mimeType`, `only images can be converted, not ${mime}`);
    return undefined;
  }
  return { type: "image", source: { kind: "url", url: string(f.fileUri, `${field}.fileData.fileUri`) } };
}

/**
 * A functionResponse as a tool_result. By Gemini's convention `{output}` is the result and
 * `{error}` a failure; a string there is the text, anything else is the JSON of `response`.
 */
function decodeFunctionResponse(r: JsonObject, field: string, ctx: PartsContext): ToolResultBlock {
  if (ctx.strict) onlyKeys(r, RESPONSE_KEYS, field, ctx);
  const name = string(r.name, `${field}.name`);
  const id = r.id == null ? undefined : string(r.id, `${field}.id`);
  const response = r.response == null ? {} : object(r.response, `${field}.response`);
  const keys = Object.keys(response);
  const isError = keys.length === 1 && keys[0] === "error";
  const only = keys.length === 1 && (isError || keys[0] === "output") ? response[keys[0]] : undefined;
  const text = typeof only === "string" ? only : JSON.stringify(isError && only !== undefined ? only : response);
  const content: (TextBlock | ImageBlock)[] = [{ type: "text", text }];
  (r.parts == null ? [] : array(r.parts, `${field}.parts`)).forEach((part, k) => {
    const image = decodeMedia(object(part, `${field}.parts[${k}]`), `${field}.parts[${k}]`, ctx.strict);
    if (image) content.push(image);
  });
  return { type: "tool_result", toolUseId: ctx.ids.result(id, name), name, content, ...(isError && { isError: true }) };
}

/** Drops and names the keys of a client's `o` outside `allowed` (field-policy.ts). */
function onlyKeys(o: JsonObject, allowed: ReadonlySet<string>, field: string, ctx: PartsContext): void {
  if (ctx.dropped) dropUnknownKeys(o, allowed, field, ctx.dropped);
}
