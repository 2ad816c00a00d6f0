// Usage of a realtime session: each `response.done` event carries its response's usage
// (input_tokens include cached ones; details are singular: input_token_details).

import { tokenCount, type Usage } from "../usage.js";

interface RealtimeUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_token_details?: { cached_tokens?: number } | null;
}

/** Adds one `response.done` event's usage to `total`; false when the event has none. */
export function addRealtimeUsage(total: Usage, event: unknown): boolean {
  const u = (event as { response?: { usage?: RealtimeUsage } } | null)?.response?.usage;
  if (!u || typeof u !== "object") return false;
  const input = tokenCount(u.input_tokens);
  const cached = Math.min(tokenCount(u.input_token_details?.cached_tokens), input);
  total.input += input - cached;
  total.cacheRead += cached;
  total.output += tokenCount(u.output_tokens);
  return true;
}
