// Canonical blocks → Gemini `parts`, shared by the upstream request and the client answer.
// An empty signed thinking block stands for a signature Gemini put on the following part,
// so its signature goes back onto that part (the API validates signatures by position).

import type { Block, ImageBlock, ImageSource, TextBlock, ToolResultBlock } from "../canonical.js";
import { invalid, isObject, type GeminiPart } from "./wire.js";

/** Finds the tool name of a tool_use id elsewhere in the request. */
export type ToolNameLookup = (toolUseId: string) => string | undefined;

/**
 * The parts for one turn's blocks. Cache hints have no Gemini equivalent and are left out:
 * Gemini caches prompts implicitly, and a hint does not change the answer.
 * `field` names the owner for errors, e.g. "messages[3]".
 */
export function encodeParts(blocks: readonly Block[], field: string, toolName: ToolNameLookup): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let signature: string | undefined;
  const push = (part: GeminiPart): void => {
    parts.push(signature === undefined ? part : { ...part, thoughtSignature: signature });
    signature = undefined;
  };
  blocks.forEach((b, j) => {
    switch (b.type) {
      case "text":
        push({ text: b.text });
        break;
      case "image":
        push(mediaPart(b.source));
        break;
      case "tool_use":
        push({ functionCall: { id: b.id, name: b.name, args: b.input } });
        break;
      case "tool_result":
        push({ functionResponse: functionResponse(b, `${field}.content[${j}]`, toolName) });
        break;
      case "thinking":
        if (b.text === "") {
          if (b.signature !== undefined) signature = b.signature;
        } else {
          if (signature !== undefined) push({ text: "" });
          parts.push({ text: b.text, thought: true, ...(b.signature !== undefined && { thoughtSignature: b.signature }) });
        }
        break;
      case "redacted_thinking":
        // Anthropic's encrypted reasoning: only Anthropic can read it, and earlier turns'
        // reasoning does not change the answer, so it is left out (as chat-completions does).
        break;
    }
  });
  if (signature !== undefined) push({ text: "" });
  return parts;
}

/** An image source as an inlineData or fileData part. */
export function mediaPart(source: ImageSource): GeminiPart {
  if (source.kind === "base64") return { inlineData: { mimeType: source.mediaType, data: source.data } };
  return { fileData: { fileUri: source.url, mimeType: imageMimeOf(source.url) } };
}

const EXTENSIONS: Record<string, string> = {
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  heic: "image/heic", heif: "image/heif",
};

/** Gemini requires a mimeType on fileData; a URL source has none, so guess by extension. */
function imageMimeOf(url: string): string {
  const path = url.split(/[?#]/, 1)[0];
  const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
  return EXTENSIONS[ext] ?? "image/jpeg";
}

/**
 * A tool_result as a functionResponse: text that is a JSON object is the response itself;
 * other text is `{output}` (or `{error}` when the tool failed); images go in `parts`.
 */
function functionResponse(b: ToolResultBlock, field: string, toolName: ToolNameLookup): NonNullable<GeminiPart["functionResponse"]> {
  const name = b.name ?? toolName(b.toolUseId);
  if (name === undefined) {
    throw invalid(`${field}.name`, `no tool_use with id "${b.toolUseId}" in the request names the tool, and Gemini needs the name`);
  }
  const text = b.content.filter((c): c is TextBlock => c.type === "text").map((c) => c.text).join("\n");
  const images = b.content.filter((c): c is ImageBlock => c.type === "image").map((c) => mediaPart(c.source));
  const parsed = parseObject(text);
  const response = b.isError ? { error: parsed ?? text } : parsed ?? { output: text };
  return {
    id: b.toolUseId,
    name,
    response,
    ...(images.length > 0 && { parts: images as NonNullable<NonNullable<GeminiPart["functionResponse"]>["parts"]> }),
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
