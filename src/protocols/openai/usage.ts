// Reads OpenAI chat-completions usage. `prompt_tokens` includes cached (and cache-write) tokens, and
// `completion_tokens` includes reasoning tokens; both are split out here.

import { tokenCount as count, type Usage } from "../usage.js";

interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** Normalises an OpenAI `usage` object; undefined when there is none. */
export function normalizeOpenAIUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as OpenAIUsage;
  const prompt = count(u.prompt_tokens);
  const cached = Math.min(count(u.prompt_tokens_details?.cached_tokens), prompt);
  // Cache writes (reported by newer models) are part of prompt_tokens too.
  const written = Math.min(count(u.prompt_tokens_details?.cache_write_tokens), prompt - cached);
  const output = count(u.completion_tokens);
  return {
    input: prompt - cached - written,
    cacheRead: cached,
    cacheWrite: written,
    output,
    reasoning: Math.min(count(u.completion_tokens_details?.reasoning_tokens), output),
  };
}
