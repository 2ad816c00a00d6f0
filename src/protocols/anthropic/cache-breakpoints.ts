// The messages API refuses a request with more than four cache breakpoints. A converted client
// may mark more (chat-completions clients put cache_control on any message): the last four are
// kept, since each covers the prompt up to its own block and later ones cover more of it, and
// the earliest are left out (the field table names the drop).

import type { Block, CacheHint, CanonicalRequest, Message, TextBlock, ImageBlock, Tool } from "../canonical.js";
import { cacheBreakpoints, MAX_CACHE_BREAKPOINTS } from "../field-policy.js";

/** The request with at most MAX_CACHE_BREAKPOINTS cache hints: the earliest in prompt order
 * (tools, system, turns) are removed. The request itself when it is within the limit. */
export function lastCacheBreakpoints(r: CanonicalRequest): CanonicalRequest {
  let excess = cacheBreakpoints(r) - MAX_CACHE_BREAKPOINTS;
  if (excess <= 0) return r;
  /** The item without its hint while some are still to be removed. */
  const strip = <T extends { readonly cache?: CacheHint }>(item: T): T => {
    if (!item.cache || excess <= 0) return item;
    excess--;
    const { cache: _removed, ...rest } = item;
    return rest as T;
  };
  const tools: Tool[] | undefined = r.tools?.map(strip);
  const system = r.system.map(strip);
  const block = (b: Block): Block => {
    if (b.type === "thinking" || b.type === "redacted_thinking") return b;
    // A tool result's content comes before the result's own end in the prompt.
    const inner = b.type === "tool_result" ? { ...b, content: b.content.map((c) => strip<TextBlock | ImageBlock>(c)) } : b;
    return strip(inner);
  };
  const messages: Message[] = r.messages.map((m) => ({ role: m.role, content: m.content.map(block) }));
  return { ...r, ...(tools && { tools }), system, messages };
}
