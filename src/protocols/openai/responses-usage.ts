// Usage of the responses protocol: its names for the one OpenAI usage reader (usage.ts), the
// hosted tools its output ran, and its stream, which reports usage on `response.completed`.

import { lastUsageReader, textChars, type StreamEnds, type UsageReader } from "../usage-tap.js";
import { someToolCalls, type ToolCalls, type Usage } from "../usage.js";
import { readOpenAIUsage, withServiceTier, type UsageFields } from "./usage.js";

/** The names the responses API (and the media routes that report its usage) uses. */
export const responsesUsageFields: UsageFields = Object.freeze({
  input: "input_tokens", output: "output_tokens",
  inputDetails: "input_tokens_details", outputDetails: "output_tokens_details",
});

/** Normalises a responses `usage` object; undefined when there is none. */
export function normalizeResponsesUsage(raw: unknown): Usage | undefined {
  return readOpenAIUsage(raw, responsesUsageFields);
}

/** Output item types of the hosted tools OpenAI bills per call. */
const toolOfItem: Readonly<Record<string, keyof ToolCalls>> = {
  web_search_call: "web_search",
  file_search_call: "file_search",
  code_interpreter_call: "code_interpreter",
};

/** Hosted tool calls among a response's output items. */
export function responsesToolCalls(output: unknown): ToolCalls | undefined {
  if (!Array.isArray(output)) return undefined;
  const calls: ToolCalls = {};
  for (const item of output) {
    const tool = item !== null && typeof item === "object" ? toolOfItem[(item as { type?: unknown }).type as string] : undefined;
    if (tool) calls[tool] = (calls[tool] ?? 0) + 1;
  }
  return someToolCalls(calls);
}

/** Usage of a whole response object: its `usage`, the hosted tools its output ran, and the
 * `service_tier` that served it. */
export function responseUsage(response: unknown): Usage | undefined {
  if (!response || typeof response !== "object") return undefined;
  const r = response as { usage?: unknown; output?: unknown; service_tier?: unknown };
  const usage = withServiceTier(normalizeResponsesUsage(r.usage), r.service_tier);
  // Without usage the answer is billed as one that reported none (its calls with it).
  const calls = usage && responsesToolCalls(r.output);
  return calls ? { ...usage, toolCalls: calls } : usage;
}

/** Generated text of a responses body or event: output text and its deltas. */
export const responsesTextField = /"(?:text|delta|arguments)"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/** Characters of generated text in a responses body (JSON-escaped length). */
export function responsesGeneratedChars(json: string): number {
  return textChars(json, responsesTextField);
}

/** Generated text of a responses stream: the deltas only (the *.done events and the final
 * response repeat the whole text). */
const responsesDeltaField = /"delta"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/** A reader for one responses stream (usage on the terminal response.* event, which also
 * names the response's id). */
export function responsesUsageReader(): UsageReader {
  let id: string | undefined;
  const reader = lastUsageReader(/"usage"\s*:\s*\{/, responsesDeltaField, (data) => {
    const response = (data as { response?: { id?: unknown } }).response;
    if (typeof response?.id === "string") id = response.id;
    return responseUsage(response);
  });
  return Object.assign(reader, { answerId: () => id });
}

/** A responses stream ends with response.completed (or .incomplete: cut at a limit, still
 * whole); `error` and response.failed are the upstream's own failure. */
export const responsesStreamEnds: StreamEnds = Object.freeze({
  terminal: /^event: ?response\.(?:completed|incomplete)\s*$|^data: ?\{\s*"type"\s*:\s*"response\.(?:completed|incomplete)"/m,
  failure: /^event: ?(?:error|response\.failed)\s*$|^data: ?\{\s*"type"\s*:\s*"(?:error|response\.failed)"/m,
});
