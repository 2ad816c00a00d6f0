// Images a model made, in a chat-completions answer. The protocol has no such field, so this
// follows the convention its peers agree on: OpenRouter and LiteLLM (≥1.77, for Gemini image
// models) return `message.images` / `delta.images` as `[{type: "image_url", image_url: {url}}]`
// with a base64 data URL, the same part shape a client sends images in; the SDKs keep the
// field (the openai SDK's stream accumulator copies unknown delta fields onto the message).
// Content stays text only, so clients that ignore `images` still read a clean answer.

import type { ImageBlock, ImageSource } from "../canonical.js";
import { isObject } from "./chat-common.js";

/** One entry of `message.images` / `delta.images`. */
export interface ChatImage {
  readonly type: "image_url";
  readonly image_url: { readonly url: string };
}

const dataUrl = /^data:([^;,]+);base64,(.*)$/s;

/** An image source as a chat image entry (base64 as a data URL). */
export function chatImage(source: ImageSource): ChatImage {
  const url = source.kind === "base64" ? `data:${source.mediaType};base64,${source.data}` : source.url;
  return { type: "image_url", image_url: { url } };
}

/** The image blocks of an upstream's `images` field; entries without a URL are skipped. */
export function imageBlocksOf(images: unknown): ImageBlock[] {
  if (!Array.isArray(images)) return [];
  const blocks: ImageBlock[] = [];
  for (const entry of images) {
    const url = isObject(entry) && isObject(entry.image_url) ? entry.image_url.url : undefined;
    if (typeof url !== "string" || url === "") continue;
    const m = dataUrl.exec(url);
    blocks.push({ type: "image", source: m ? { kind: "base64", mediaType: m[1], data: m[2] } : { kind: "url", url } });
  }
  return blocks;
}
