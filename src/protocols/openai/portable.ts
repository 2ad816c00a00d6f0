// Reasoning items in a responses request going to OpenAI as the client sent it: those whose
// encrypted_content the gateway filled for another provider (a sealed signature, or
// Anthropic's redacted data: reasoning.ts, responses-common.ts) are left out whole, since
// OpenAI can decrypt only its own (and would look a converted item's id up in vain);
// OpenAI's own, sealed on a converted route, go unsealed.

import { editedItems, isSealed, noteForeign, openSignature, type PortableBody } from "../reasoning.js";
import { isObject } from "./chat-common.js";
import { REDACTED_PREFIX } from "./responses-common.js";

type Json = Record<string, unknown>;

/** The body with its reasoning items fitted to OpenAI; undefined when nothing changes. */
export function portableInput(json: Json): PortableBody | undefined {
  if (!Array.isArray(json.input)) return undefined;
  const dropped: string[] = [];
  const input = editedItems(json.input, (item) => {
    if (!isObject(item) || item.type !== "reasoning" || typeof item.encrypted_content !== "string") return item;
    const value = item.encrypted_content;
    if (value.startsWith(REDACTED_PREFIX)) {
      noteForeign(dropped, "reasoning.encrypted_content", "anthropic");
      return undefined;
    }
    if (!isSealed(value)) return item;
    const { issuer, signature } = openSignature(value, "openai");
    if (issuer === "openai") return { ...item, encrypted_content: signature };
    noteForeign(dropped, "reasoning.encrypted_content", issuer);
    return undefined;
  });
  return input === undefined ? undefined : { json: { ...json, input }, dropped };
}
