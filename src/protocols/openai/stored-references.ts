// Objects an OpenAI-protocol request can name that live under the operator's one upstream
// account: uploaded files, vector stores, code-interpreter containers. The gateway serves
// none of the APIs that create them, so no tenant created one through it: a request naming
// one would reach another tenant's (or the operator's) object, and is refused as unknown.

import { isObject } from "./chat-common.js";

/** The first file a list of content parts names by id, described; undefined when none. */
function fileInParts(parts: unknown, idOf: (part: Record<string, unknown>) => unknown): string | undefined {
  if (!Array.isArray(parts)) return undefined;
  for (const part of parts) {
    const id = isObject(part) ? idOf(part) : undefined;
    if (typeof id === "string") return `file '${id}'`;
  }
  return undefined;
}

/** Chat completions: a `file` content part with a `file_id`. */
export function chatStoredReference(json: Record<string, unknown>): string | undefined {
  if (!Array.isArray(json.messages)) return undefined;
  for (const message of json.messages) {
    const found = isObject(message) ? fileInParts(message.content, (p) => (isObject(p.file) ? p.file.file_id : undefined)) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** Responses: input parts with a `file_id` (input_file, input_image), file_search's vector
 * stores, a code interpreter's container or its files. */
export function responsesStoredReference(json: Record<string, unknown>): string | undefined {
  if (Array.isArray(json.input)) {
    for (const item of json.input) {
      const found = isObject(item) ? fileInParts(item.content, (p) => p.file_id) : undefined;
      if (found) return found;
    }
  }
  if (!Array.isArray(json.tools)) return undefined;
  for (const tool of json.tools) {
    if (!isObject(tool)) continue;
    if (tool.type === "file_search" && Array.isArray(tool.vector_store_ids) && tool.vector_store_ids.length > 0) {
      return `vector store '${String(tool.vector_store_ids[0])}'`;
    }
    if (tool.type === "code_interpreter") {
      if (typeof tool.container === "string") return `container '${tool.container}'`;
      const files = isObject(tool.container) ? tool.container.file_ids : undefined;
      if (Array.isArray(files) && files.length > 0) return `file '${String(files[0])}'`;
    }
  }
  return undefined;
}
