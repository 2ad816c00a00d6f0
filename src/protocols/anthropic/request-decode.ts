// Reads a client's messages-protocol request into the canonical request. Every field is
// carried, deliberately ignored (listed below, with why), or refused with a 400 naming it.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Block, CacheHint, CanonicalRequest, Message, Reasoning, ReasoningEffort, TextBlock, Tool, ToolChoice } from "../canonical.js";
import { decodeContent } from "./blocks.js";
import { array, invalid, object, onlyKeys, optBool, optInt, optNumber, readCache, string, type Json } from "./fields.js";

/**
 * Fields with no effect on the answer's content, so they may be dropped in conversion:
 * `service_tier` and `speed` pick capacity and throughput, `inference_geo` the region,
 * `diagnostics` only asks for an explanation of prompt-cache misses.
 */
const IGNORED = new Set(["service_tier", "speed", "inference_geo", "diagnostics"]);
const CARRIED = new Set(["model", "max_tokens", "messages", "system", "metadata", "stop_sequences", "stream",
  "temperature", "top_p", "top_k", "thinking", "tool_choice", "tools", "cache_control", "output_config"]);
/** Fields that change the answer and have no canonical form; named in their 400. */
const REFUSED: Readonly<Record<string, string>> = {
  container: "code-execution containers are not supported for conversion",
  mcp_servers: "remote MCP servers are not supported for conversion",
};

/** Anthropic's `output_config.effort` as a canonical effort; xhigh and max exceed the
 * canonical scale and become its top level, high. */
const EFFORTS: Readonly<Record<string, ReasoningEffort>> = { low: "low", medium: "medium", high: "high", xhigh: "high", max: "high" };

function required(json: Json, key: string, field = key): unknown {
  if (json[key] === undefined || json[key] === null) throw new GatewayError(errors.missingParameter, `${field}: is required`);
  return json[key];
}

function system(v: unknown, field: string): TextBlock[] {
  if (v === undefined || v === null) return [];
  const blocks = decodeContent(v, field, new Map());
  blocks.forEach((b, i) => b.type !== "text" && invalid(`${field}[${i}].type`, 'system blocks must be "text"'));
  return blocks as TextBlock[];
}

/** Messages, with leading `system`-role messages moved into the system prompt. */
function messages(v: unknown, sys: TextBlock[]): Message[] {
  const names = new Map<string, string>();
  const out: Message[] = [];
  array(v, "messages").forEach((raw, i) => {
    const field = `messages[${i}]`;
    const m = object(raw, field);
    onlyKeys(m, new Set(["role", "content"]), field);
    if (m.role === "system") {
      if (out.length > 0) invalid(`${field}.role`, "a system message after the conversation started is not supported");
      sys.push(...system(m.content, `${field}.content`));
      return;
    }
    if (m.role !== "user" && m.role !== "assistant") invalid(`${field}.role`, 'must be "user" or "assistant"');
    out.push({ role: m.role, content: decodeContent(m.content, `${field}.content`, names) });
  });
  return out;
}

function tools(v: unknown): Tool[] | undefined {
  if (v === undefined || v === null) return undefined;
  return array(v, "tools").map((raw, i) => {
    const field = `tools[${i}]`;
    const t = object(raw, field);
    if (t.type != null && t.type !== "custom") invalid(`${field}.type`, `server tool ${JSON.stringify(t.type)} is not supported for conversion`);
    // strict: a schema-conformance guarantee (the schema itself is carried);
    // eager_input_streaming: delta granularity; allowed_callers: only matters with code execution.
    onlyKeys(t, new Set(["type", "name", "description", "input_schema", "cache_control", "strict", "eager_input_streaming", "allowed_callers", "defer_loading", "input_examples"]), field);
    if (t.defer_loading === true) invalid(`${field}.defer_loading`, "deferred tool loading is not supported");
    if (Array.isArray(t.input_examples) && t.input_examples.length > 0) invalid(`${field}.input_examples`, "tool input examples are not supported");
    const cache = readCache(t.cache_control, `${field}.cache_control`);
    const description = t.description == null ? undefined : string(t.description, `${field}.description`);
    return {
      name: string(t.name, `${field}.name`), parameters: object(t.input_schema, `${field}.input_schema`),
      ...(description !== undefined && { description }), ...(cache && { cache }),
    };
  });
}

function toolChoice(v: unknown): { choice?: ToolChoice; parallel?: boolean } {
  if (v === undefined || v === null) return {};
  const c = object(v, "tool_choice");
  onlyKeys(c, new Set(["type", "name", "disable_parallel_tool_use"]), "tool_choice");
  const disable = optBool(c.disable_parallel_tool_use, "tool_choice.disable_parallel_tool_use");
  const parallel = disable === undefined ? undefined : !disable;
  switch (c.type) {
    case "auto": case "any": case "none":
      return { choice: { type: c.type }, parallel };
    case "tool":
      return { choice: { type: "tool", name: string(c.name, "tool_choice.name") }, parallel };
    default:
      return invalid("tool_choice.type", 'must be "auto", "any", "tool" or "none"');
  }
}

/** `thinking` and `output_config.effort` as canonical reasoning. Adaptive thinking without
 * an effort gets Anthropic's default effort, high. */
function reasoning(v: unknown, effort: ReasoningEffort | undefined): Reasoning | undefined {
  if (v === undefined || v === null) return effort && { effort };
  const t = object(v, "thinking");
  onlyKeys(t, new Set(["type", "budget_tokens", "display"]), "thinking");
  if (t.display === "omitted") invalid("thinking.display", '"omitted" is not supported for conversion');
  if (t.type === "disabled") return undefined;
  if (t.type === "adaptive") return { effort: effort ?? "high" };
  if (t.type !== "enabled") invalid("thinking.type", 'must be "enabled", "adaptive" or "disabled"');
  const budgetTokens = optInt(required(t, "budget_tokens", "thinking.budget_tokens"), "thinking.budget_tokens") as number;
  return { budgetTokens, ...(effort && { effort }) };
}

function outputConfig(v: unknown): { effort?: ReasoningEffort; format?: Record<string, unknown> } {
  if (v === undefined || v === null) return {};
  const o = object(v, "output_config");
  onlyKeys(o, new Set(["effort", "format"]), "output_config");
  let effort: ReasoningEffort | undefined;
  if (o.effort != null) effort = EFFORTS[string(o.effort, "output_config.effort")] ?? invalid("output_config.effort", "unknown effort level");
  if (o.format == null) return { effort };
  const f = object(o.format, "output_config.format");
  onlyKeys(f, new Set(["type", "schema"]), "output_config.format");
  if (f.type !== "json_schema") invalid("output_config.format.type", 'must be "json_schema"');
  return { effort, format: object(f.schema, "output_config.format.schema") };
}

/** Top-level `cache_control` marks the request's last cacheable block. */
function markLast(hint: CacheHint, msgs: Message[], sys: TextBlock[], tls: Tool[] | undefined): void {
  const last = msgs[msgs.length - 1];
  const content = last ? [...last.content] : [];
  let at = content.length - 1;
  while (at >= 0 && (content[at].type === "thinking" || content[at].type === "redacted_thinking")) at--;
  if (at >= 0) {
    content[at] = { ...content[at], cache: hint } as Block;
    msgs[msgs.length - 1] = { role: last.role, content };
  } else if (sys.length > 0) sys[sys.length - 1] = { ...sys[sys.length - 1], cache: hint };
  else if (tls && tls.length > 0) tls[tls.length - 1] = { ...tls[tls.length - 1], cache: hint };
}

/** Decodes a messages-protocol request body into the canonical request. */
export function decodeMessagesRequest(json: Json): CanonicalRequest {
  for (const key of Object.keys(json)) {
    if (REFUSED[key] && json[key] != null) invalid(key, REFUSED[key]);
    if (!CARRIED.has(key) && !IGNORED.has(key) && !REFUSED[key]) invalid(key, "is not supported by this gateway for conversion");
  }
  const model = string(required(json, "model"), "model");
  const maxTokens = optInt(required(json, "max_tokens"), "max_tokens");
  const sys = system(json.system, "system");
  const msgs = messages(required(json, "messages"), sys);
  const tls = tools(json.tools);
  const { choice, parallel } = toolChoice(json.tool_choice);
  const out = outputConfig(json.output_config);
  const topCache = readCache(json.cache_control, "cache_control");
  if (topCache) markLast(topCache, msgs, sys, tls);
  const metadata = json.metadata == null ? {} : object(json.metadata, "metadata");
  onlyKeys(metadata, new Set(["user_id"]), "metadata");
  const user = metadata.user_id == null ? undefined : string(metadata.user_id, "metadata.user_id");
  const stop = json.stop_sequences == null ? undefined
    : array(json.stop_sequences, "stop_sequences").map((s, i) => string(s, `stop_sequences[${i}]`));
  const fields: CanonicalRequest = {
    model, system: sys, messages: msgs, maxTokens,
    temperature: optNumber(json.temperature, "temperature"),
    topP: optNumber(json.top_p, "top_p"),
    topK: optInt(json.top_k, "top_k"),
    stop, tools: tls, toolChoice: choice, parallelToolCalls: parallel,
    reasoning: reasoning(json.thinking, out.effort),
    stream: optBool(json.stream, "stream") ?? false,
    user,
    responseFormat: out.format && { schema: out.format },
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as unknown as CanonicalRequest;
}
