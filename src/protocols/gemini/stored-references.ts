// Objects a generate-content request can name that live in the operator's upstream project:
// cached contents and files uploaded to the Files API. The gateway serves neither API, so
// no tenant created one through it: a request naming one is refused as unknown. (A fileUri
// elsewhere, e.g. a public video URL, is the client's own.)

import { isObject } from "./wire.js";

/** A Files API file: `files/<id>`, bare or under the API's host. */
const filesApiUri = /^(?:https:\/\/generativelanguage\.googleapis\.com\/[^/]+\/)?files\/[^/?#]+$/;

/** The first stored object the request names, described; undefined when none. */
export function generateStoredReference(json: Record<string, unknown>): string | undefined {
  if (typeof json.cachedContent === "string" && json.cachedContent !== "") return `cached content '${json.cachedContent}'`;
  if (!Array.isArray(json.contents)) return undefined;
  for (const content of json.contents) {
    const parts = isObject(content) ? content.parts : undefined;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      const uri = isObject(part) && isObject(part.fileData) ? part.fileData.fileUri : undefined;
      if (typeof uri === "string" && filesApiUri.test(uri)) return `file '${uri}'`;
    }
  }
  return undefined;
}
