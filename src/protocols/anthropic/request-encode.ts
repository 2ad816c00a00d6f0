// Writes the canonical request as a messages-protocol body for an `anthropic` channel.
// What the protocol cannot express fails with a 400 naming the canonical field.

import type { CanonicalRequest, Message, Reasoning, Tool, ToolChoice } from "../canonical.js";
import { UnsupportedField } from "../adapter.js";
import { budgetOf } from "../reasoning.js";
import { encodeBlock } from "./blocks.js";
import { writeCache, type Json } from "./fields.js";

/** max_tokens when the client set none: the messages API requires it, and 4096 is within
 * every current model's output limit. */
export const DEFAULT_MAX_TOKENS = 4096;
/** The smallest thinking budget the messages API accepts. */
const MIN_BUDGET = 1024;

function thinkingBudget(r: Reasoning): number {
  const budget = r.budgetTokens ?? budgetOf(r.effort ?? "medium");
  return Math.max(budget, MIN_BUDGET);
}

function messages(msgs: readonly Message[]): Json[] {
  return msgs.map((m) => ({
    role: m.role,
    content: m.content.map(encodeBlock).filter((b): b is Json => b !== undefined),
  }));
}

function tool(t: Tool): Json {
  // input_schema must be an object schema; OpenAI clients may send `{}` for "no arguments".
  const schema = t.parameters.type === undefined ? { type: "object", properties: {}, ...t.parameters } : t.parameters;
  const o: Json = { name: t.name, input_schema: schema };
  if (t.description !== undefined) o.description = t.description;
  if (t.cache) o.cache_control = writeCache(t.cache);
  return o;
}

function toolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): Json | undefined {
  if (!choice) return parallel === false ? { type: "auto", disable_parallel_tool_use: true } : undefined;
  const o: Json = choice.type === "tool" ? { type: "tool", name: choice.name } : { type: choice.type };
  if (parallel === false && choice.type !== "none") o.disable_parallel_tool_use = true;
  return o;
}

/** Refuses what the messages protocol has no field for, naming the canonical field. Zero penalties are the OpenAI
 * defaults many clients send explicitly; they change nothing, so they pass. */
function refuseInexpressible(r: CanonicalRequest): void {
  if (r.candidates !== undefined && r.candidates > 1) throw new UnsupportedField("candidates", "the messages protocol returns one answer per request");
  if (r.frequencyPenalty) throw new UnsupportedField("frequencyPenalty", "the messages protocol has no frequency penalty");
  if (r.presencePenalty) throw new UnsupportedField("presencePenalty", "the messages protocol has no presence penalty");
  if (r.seed !== undefined) throw new UnsupportedField("seed", "the messages protocol has no seed");
  if (r.temperature !== undefined && r.temperature > 1) throw new UnsupportedField("temperature", "the messages protocol accepts at most 1");
  if (r.responseFormat && !r.responseFormat.schema) throw new UnsupportedField("responseFormat", "JSON mode without a schema is not supported by the messages protocol; give a JSON schema");
}

/** Encodes a canonical request as a messages-protocol request body. */
export function encodeMessagesRequest(r: CanonicalRequest, upstreamModel: string): Json {
  refuseInexpressible(r);
  let maxTokens = r.maxTokens ?? DEFAULT_MAX_TOKENS;
  const body: Json = { model: upstreamModel };
  if (r.system.length > 0) body.system = r.system.map((b) => encodeBlock(b));
  body.messages = messages(r.messages);
  if (r.reasoning) {
    const budget = thinkingBudget(r.reasoning);
    // The API needs max_tokens > budget_tokens (thinking counts toward max_tokens). When the
    // client's limit is not above the budget, keep the client's limit for the visible answer.
    if (maxTokens <= budget) maxTokens = budget + maxTokens;
    body.thinking = { type: "enabled", budget_tokens: budget };
  }
  body.max_tokens = maxTokens;
  if (r.temperature !== undefined) body.temperature = r.temperature;
  if (r.topP !== undefined) body.top_p = r.topP;
  if (r.topK !== undefined) body.top_k = r.topK;
  if (r.stop && r.stop.length > 0) body.stop_sequences = [...r.stop];
  if (r.tools && r.tools.length > 0) body.tools = r.tools.map(tool);
  const choice = toolChoice(r.toolChoice, r.parallelToolCalls);
  if (choice) body.tool_choice = choice;
  if (r.user !== undefined) body.metadata = { user_id: r.user };
  // The response format's `name` is only a label; the schema is what constrains the answer.
  if (r.responseFormat?.schema) body.output_config = { format: { type: "json_schema", schema: r.responseFormat.schema } };
  // streamUsage needs nothing: a messages stream always reports usage.
  if (r.stream) body.stream = true;
  return body;
}
