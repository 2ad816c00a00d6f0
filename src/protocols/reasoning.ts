// The one table between reasoning effort levels and thinking budgets, so every protocol
// converts "high" to the same budget and back.

import type { Protocol } from "../runtime/types.js";
import type { Block, CanonicalEvent, CanonicalRequest, Message, ReasoningEffort } from "./canonical.js";
import { noteDropped, type HubRoute } from "./field-policy.js";

const budgets: Readonly<Record<ReasoningEffort, number>> = { minimal: 1024, low: 2048, medium: 8192, high: 24576 };

/** The thinking budget (tokens) for an effort level. */
export function budgetOf(effort: ReasoningEffort): number {
  return budgets[effort];
}

/** Thinking budget → effort: ≤1024 minimal, ≤2048 low, ≤8192 medium, else high. */
export function effortOf(budget: number): ReasoningEffort {
  if (budget <= 1024) return "minimal";
  if (budget <= 2048) return "low";
  if (budget <= 8192) return "medium";
  return "high";
}

// Signed reasoning (Anthropic's thinking signatures and redacted data, Gemini's thought
// signatures, OpenAI's encrypted reasoning) is valid only at the provider that issued it;
// any other refuses the request. A signature the gateway writes into a converted answer is
// sealed with its issuer: "gw:<issuer>:<signature>", e.g. "gw:gemini:CiQBjz…". Providers'
// signatures are base64 or base64url, which never contain ':', so a sealed one is never
// taken for a provider's, nor a provider's for a sealed one. A signature without the seal
// in a client's request is its own protocol's provider's (it came through a pass-through).

/** Who issued a signature: a channel protocol. */
export type Issuer = Protocol;

const SEALED = /^gw:(openai|anthropic|gemini):/;

/** A signature (or redacted data) as the gateway writes it into a converted answer. */
export function sealSignature(issuer: Issuer, signature: string): string {
  return `gw:${issuer}:${signature}`;
}

/** Whether a value carries the gateway's seal (a cheap test before opening it). */
export function isSealed(value: string): boolean {
  return value.startsWith("gw:") && SEALED.test(value);
}

/** A signature's issuer and the provider's own bytes: the seal's issuer, or `unsealedIssuer`. */
export function openSignature(value: string, unsealedIssuer: Issuer): { readonly issuer: Issuer; readonly signature: string } {
  const m = value.startsWith("gw:") ? SEALED.exec(value) : null;
  return m ? { issuer: m[1] as Issuer, signature: value.slice(m[0].length) } : { issuer: unsealedIssuer, signature: value };
}

/** The issuer of the unsealed signatures a client of each protocol sends. */
export const clientIssuer: Readonly<Record<HubRoute, Issuer>> = {
  "chat-completions": "openai", responses: "openai", messages: "anthropic", "generate-content": "gemini",
};

/** How each protocol's clients name signed reasoning (in x-gateway-dropped-fields). */
const signatureField: Readonly<Record<HubRoute, string>> = {
  "chat-completions": "reasoning signature", responses: "reasoning.encrypted_content",
  messages: "thinking.signature", "generate-content": "thoughtSignature",
};

/**
 * The request with its signed reasoning fitted to `target`: signatures `target` issued go
 * as the provider wrote them (unsealed); another's are left out (a thinking block goes
 * unsigned, which each encoder treats as another vendor's reasoning; redacted data goes
 * entirely), and named once per issuer. The request itself when nothing changes.
 */
export function portableReasoning(req: CanonicalRequest, from: HubRoute, target: Issuer): { request: CanonicalRequest; dropped: string[] } {
  const dropped: string[] = [];
  const unsealed = clientIssuer[from];
  const name = (issuer: Issuer) => noteForeign(dropped, signatureField[from], issuer);
  const signed = (m: Message) => m.role === "assistant" && m.content.some(
    (b) => b.type === "thinking" ? b.signature !== undefined : b.type === "redacted_thinking");
  // Most requests carry no signed reasoning: they go as they are, nothing copied.
  if (!req.messages.some(signed)) return { request: req, dropped };
  const messages = req.messages.map((m) => {
    if (!signed(m)) return m;
    const content: Block[] = [];
    for (const b of m.content) {
      if (b.type === "thinking" && b.signature !== undefined) {
        const { issuer, signature } = openSignature(b.signature, unsealed);
        if (issuer === target) content.push(signature === b.signature ? b : { ...b, signature });
        else {
          name(issuer);
          content.push({ type: "thinking", text: b.text });
        }
      } else if (b.type === "redacted_thinking") {
        const { issuer, signature } = openSignature(b.data, unsealed);
        if (issuer === target) content.push(signature === b.data ? b : { ...b, data: signature });
        else name(issuer);
      } else content.push(b);
    }
    return { ...m, content };
  });
  return { request: { ...req, messages }, dropped };
}

/** An answer's blocks with their signatures sealed by `issuer` (converted answers). */
export function sealedBlocks(blocks: readonly Block[], issuer: Issuer): readonly Block[] {
  if (!blocks.some((b) => (b.type === "thinking" && b.signature !== undefined) || b.type === "redacted_thinking")) return blocks;
  return blocks.map((b) => b.type === "thinking" && b.signature !== undefined ? { ...b, signature: sealSignature(issuer, b.signature) }
    : b.type === "redacted_thinking" ? { ...b, data: sealSignature(issuer, b.data) } : b);
}

/** A stream event with its signature sealed by `issuer` (converted streams). */
export function sealedEvent(event: CanonicalEvent, issuer: Issuer): CanonicalEvent {
  if (event.type === "signature_delta") return { ...event, signature: sealSignature(issuer, event.signature) };
  if (event.type === "block_start" && event.block.type === "redacted_thinking") {
    return { ...event, block: { ...event.block, data: sealSignature(issuer, event.block.data) } };
  }
  return event;
}

/** What a pass-through body looks like once other providers' signatures are out of it. */
export interface PortableBody {
  readonly json: Record<string, unknown>;
  /** Named once per issuer, e.g. "thinking.signature (from gemini)". */
  readonly dropped: readonly string[];
}

/** Notes `field (from issuer)` in `dropped`, once (as every dropped field is: noteDropped). */
export function noteForeign(dropped: string[], field: string, issuer: Issuer): void {
  noteDropped(dropped, `${field} (from ${issuer})`);
}

/** A body's array member edited item by item (`edit`: the item, a replacement, or undefined
 * to leave it out); the same array when no item changed. */
export function editedItems(items: readonly unknown[], edit: (item: unknown) => unknown): unknown[] | undefined {
  let out: unknown[] | undefined;
  items.forEach((item, i) => {
    const next = edit(item);
    if (next === item && out === undefined) return;
    out ??= items.slice(0, i);
    if (next !== undefined) out.push(next);
  });
  return out;
}
