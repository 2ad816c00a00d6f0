// Reads messages-protocol usage. `input_tokens` excludes cache reads and writes, which
// come as their own counts; `output_tokens` includes thinking.

import { tokenCount, type Usage } from "../usage.js";

interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

/** Normalises an Anthropic `usage` object; undefined when there is none. */
export function normalizeAnthropicUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as AnthropicUsage;
  const output = tokenCount(u.output_tokens);
  return {
    input: tokenCount(u.input_tokens),
    cacheRead: tokenCount(u.cache_read_input_tokens),
    cacheWrite: tokenCount(u.cache_creation_input_tokens),
    output,
    reasoning: Math.min(tokenCount(u.output_tokens_details?.thinking_tokens), output),
  };
}
