// Reads messages-protocol usage. `input_tokens` excludes cache reads and writes, which
// come as their own counts; `output_tokens` includes thinking. `cache_creation` splits the
// writes by lifetime (5 minutes, 1 hour: priced apart); `service_tier` says what served it.

import { someToolCalls, tokenCount, type Usage } from "../usage.js";

interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** Of the cache writes, by lifetime. */
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
  /** standard | priority | batch. */
  service_tier?: string | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
  /** Server tools Anthropic ran (billed per call). */
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number } | null;
}

/** Normalises an Anthropic `usage` object; undefined when there is none. */
export function normalizeAnthropicUsage(raw: unknown): Usage | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const u = raw as AnthropicUsage;
  const output = tokenCount(u.output_tokens);
  const lifetimes = u.cache_creation;
  const oneHour = tokenCount(lifetimes?.ephemeral_1h_input_tokens);
  // cache_creation_input_tokens is the total; without it, the lifetimes add up to it.
  const written = tokenCount(u.cache_creation_input_tokens) || tokenCount(lifetimes?.ephemeral_5m_input_tokens) + oneHour;
  const usage: Usage = {
    input: tokenCount(u.input_tokens),
    cacheRead: tokenCount(u.cache_read_input_tokens),
    cacheWrite: written,
    output,
    reasoning: Math.min(tokenCount(u.output_tokens_details?.thinking_tokens), output),
  };
  if (oneHour > 0) usage.cacheWrite1h = Math.min(oneHour, written);
  if (typeof u.service_tier === "string" && u.service_tier !== "") usage.serviceTier = u.service_tier;
  const tools = u.server_tool_use;
  if (tools && typeof tools === "object") {
    const calls = someToolCalls({ web_search: tokenCount(tools.web_search_requests), web_fetch: tokenCount(tools.web_fetch_requests) });
    if (calls) usage.toolCalls = calls;
  }
  return usage;
}

/** Folds one report of a stream's usage (message_start's, then each message_delta's) into
 * the fields seen so far: a later report's present counts replace the earlier ones (they
 * are cumulative); normalizeAnthropicUsage reads the result. */
export function mergeReportedUsage(into: Record<string, unknown>, raw: unknown): void {
  if (!raw || typeof raw !== "object") return;
  for (const [k, v] of Object.entries(raw)) if (v !== null && v !== undefined) into[k] = v;
}
