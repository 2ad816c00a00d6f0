// Signed reasoning in a messages request going to Anthropic as the client sent it: thinking
// signatures and redacted data the gateway sealed for another provider (reasoning.ts), and
// thinking the gateway wrote unsigned (""), are left out, since Anthropic refuses any
// signature it did not issue; Anthropic's own, sealed on a converted route, go unsealed.

import { editedItems, isSealed, noteForeign, openSignature, type PortableBody } from "../reasoning.js";
import { isObject, type Json } from "./fields.js";

const UNSIGNED = "thinking (unsigned)";

/** The body with its reasoning fitted to Anthropic; undefined when nothing changes. */
export function portableMessages(json: Json): PortableBody | undefined {
  if (!Array.isArray(json.messages)) return undefined;
  const dropped: string[] = [];
  const block = (b: unknown): unknown => {
    if (!isObject(b)) return b;
    const field = b.type === "thinking" ? "signature" : b.type === "redacted_thinking" ? "data" : undefined;
    const value = field === undefined ? undefined : b[field];
    if (typeof value !== "string") return b;
    if (value === "") {
      // The gateway's mark for reasoning no provider signed (another vendor's).
      if (!dropped.includes(UNSIGNED)) dropped.push(UNSIGNED);
      return undefined;
    }
    if (!isSealed(value)) return b;
    const { issuer, signature } = openSignature(value, "anthropic");
    if (issuer === "anthropic") return { ...b, [field!]: signature };
    noteForeign(dropped, b.type === "thinking" ? "thinking.signature" : "redacted_thinking", issuer);
    return undefined;
  };
  const messages = editedItems(json.messages, (m) => {
    if (!isObject(m) || m.role !== "assistant" || !Array.isArray(m.content)) return m;
    const content = editedItems(m.content, block);
    return content === undefined ? m : { ...m, content };
  });
  if (messages === undefined) return undefined;
  // With thinking on, Anthropic wants the assistant turn whose tool calls the last user turn
  // answers to start with its own thinking: one that lost another provider's can only go on
  // without thinking (as a converted request does: field-policy.ts toolTurnLacksThinking).
  if (json.thinking !== undefined && toolTurnLacksThinking(messages)) {
    const { thinking: _, ...rest } = json;
    return { json: { ...rest, messages }, dropped: [...dropped, "thinking"] };
  }
  return { json: { ...json, messages }, dropped };
}

/** Whether the last user turn answers tool calls of an assistant turn that does not start
 * with thinking. */
function toolTurnLacksThinking(messages: readonly unknown[]): boolean {
  const last = messages.at(-1);
  const answersTools = isObject(last) && last.role === "user" && Array.isArray(last.content)
    && last.content.some((b) => isObject(b) && b.type === "tool_result");
  const turn = messages.at(-2);
  if (!answersTools || !isObject(turn) || turn.role !== "assistant" || !Array.isArray(turn.content)) return false;
  const first = turn.content[0];
  return !(isObject(first) && (first.type === "thinking" || first.type === "redacted_thinking"));
}
