// Thought signatures in a generate-content request going to Gemini as the client sent it:
// those the gateway sealed for another provider (reasoning.ts) are left out, since Gemini
// refuses a signature it did not issue (a function call keeps the documented "no signature"
// sentinel in its place, which Gemini's own tool loops require); Gemini's own, sealed on a
// converted route, go unsealed.

import { editedItems, isSealed, noteForeign, openSignature, type PortableBody } from "../reasoning.js";
import { isObject, SKIP_SIGNATURE, type JsonObject as Json } from "./wire.js";

/** The body with its thought signatures fitted to Gemini; undefined when nothing changes. */
export function portableContents(json: Json): PortableBody | undefined {
  if (!Array.isArray(json.contents)) return undefined;
  const dropped: string[] = [];
  const part = (p: unknown): unknown => {
    if (!isObject(p) || typeof p.thoughtSignature !== "string" || !isSealed(p.thoughtSignature)) return p;
    const { issuer, signature } = openSignature(p.thoughtSignature, "gemini");
    if (issuer === "gemini") return { ...p, thoughtSignature: signature };
    noteForeign(dropped, "thoughtSignature", issuer);
    const { thoughtSignature: _, ...rest } = p;
    return p.functionCall !== undefined ? { ...rest, thoughtSignature: SKIP_SIGNATURE } : rest;
  };
  const contents = editedItems(json.contents, (c) => {
    if (!isObject(c) || !Array.isArray(c.parts)) return c;
    const parts = editedItems(c.parts, part);
    return parts === undefined ? c : { ...c, parts };
  });
  return contents === undefined ? undefined : { json: { ...json, contents }, dropped };
}
