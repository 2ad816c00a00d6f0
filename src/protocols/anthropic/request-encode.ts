// Writes the canonical request as a messages-protocol body for an `anthropic` channel.
// Fields the messages protocol drops or refuses (field-policy.ts: penalties, seed, a
// temperature above 1, JSON without a schema) are settled by the hub before encoding; the
// dropped ones are simply not written here.

import { mapsWebSearch, refusedBesideThinking } from "../field-policy.js";
import type { CanonicalRequest, Message, Reasoning, Tool, ToolChoice } from "../canonical.js";
import { budgetOf } from "../reasoning.js";
import { withSystemAsUser } from "../system-note.js";
import { encodeBlock } from "./blocks.js";
import { lastCacheBreakpoints } from "./cache-breakpoints.js";
import { writeCache, type Json } from "./fields.js";

/** max_tokens when the client set none: the messages API requires it, and 4096 is within
 * every current model's output limit. */
export const DEFAULT_MAX_TOKENS = 4096;
/** Anthropic's web search server tool (billed per search from usage.server_tool_use). */
const WEB_SEARCH_TOOL = "web_search_20250305";
/** The smallest thinking budget the messages API accepts. */
const MIN_BUDGET = 1024;

function thinkingBudget(r: Reasoning): number {
  const budget = r.budgetTokens ?? budgetOf(r.effort ?? "medium");
  return Math.max(budget, MIN_BUDGET);
}

/** Turns in order. A mid-conversation system message becomes a note in a user turn, merged
 * with the user turn beside it, tool results first (the API wants them to open the turn
 * that answers the calls). */
function messages(msgs: readonly Message[]): Json[] {
  const out: { role: string; content: Json[] }[] = [];
  let lastHasNote = false;
  for (const m of msgs) {
    const note = m.role === "system";
    const role = note ? "user" : m.role;
    // Images of an earlier answer: the API takes images in user turns only (the table drops them).
    const blocks = role === "assistant" ? m.content.filter((b) => b.type !== "image") : withSystemAsUser(m).content;
    const content = blocks.map(encodeBlock).filter((b): b is Json => b !== undefined);
    const last = out.at(-1);
    if (last && last.role === role && (note || lastHasNote)) {
      const merged = [...last.content, ...content];
      last.content = [...merged.filter((b) => b.type === "tool_result"), ...merged.filter((b) => b.type !== "tool_result")];
      lastHasNote = true;
    } else {
      out.push({ role, content });
      lastHasNote = note;
    }
  }
  return out;
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

/** The thinking budget a request is encoded with, if it thinks. */
function encodedBudget(r: CanonicalRequest): number | undefined {
  return r.reasoning && !refusedBesideThinking.reasoning(r) ? thinkingBudget(r.reasoning) : undefined;
}

/** The max_tokens a request is encoded with. The API needs max_tokens > budget_tokens
 * (thinking counts toward max_tokens): when the client's limit is not above the budget,
 * the client's limit is kept for the visible answer, on top of the budget. */
export function encodedMaxTokens(r: CanonicalRequest): number {
  const maxTokens = r.maxTokens ?? DEFAULT_MAX_TOKENS;
  const budget = encodedBudget(r);
  return budget !== undefined && maxTokens <= budget ? budget + maxTokens : maxTokens;
}

/** Encodes a canonical request as a messages-protocol request body. */
export function encodeMessagesRequest(request: CanonicalRequest, upstreamModel: string): Json {
  const r = lastCacheBreakpoints(request);
  const body: Json = { model: upstreamModel };
  if (r.system.length > 0) body.system = r.system.map((b) => encodeBlock(b));
  body.messages = messages(r.messages);
  const budget = encodedBudget(r);
  if (budget !== undefined) body.thinking = { type: "enabled", budget_tokens: budget };
  body.max_tokens = encodedMaxTokens(r);
  // What the API refuses beside thinking the table drops (and names): left out here.
  if (r.temperature !== undefined && !refusedBesideThinking.temperature(r)) body.temperature = r.temperature;
  if (r.topP !== undefined && !refusedBesideThinking.topP(r)) body.top_p = r.topP;
  if (r.topK !== undefined && !refusedBesideThinking.topK(r)) body.top_k = r.topK;
  if (r.stop && r.stop.length > 0) body.stop_sequences = [...r.stop];
  const tools = (r.tools ?? []).map(tool);
  // The client's hosted web search, as Anthropic's own server tool (field-policy.ts).
  if (mapsWebSearch("messages", r)) tools.push({ type: WEB_SEARCH_TOOL, name: "web_search" });
  if (tools.length > 0) body.tools = tools;
  const choice = toolChoice(r.toolChoice, r.parallelToolCalls);
  if (choice) body.tool_choice = choice;
  if (r.user !== undefined) body.metadata = { user_id: r.user };
  // The response format's `name` is only a label; the schema is what constrains the answer.
  if (r.responseFormat?.schema) body.output_config = { format: { type: "json_schema", schema: r.responseFormat.schema } };
  // streamUsage needs nothing: a messages stream always reports usage.
  if (r.stream) body.stream = true;
  return body;
}
