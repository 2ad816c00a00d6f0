// Reads a client's messages-protocol request into the canonical request. Every field is
// carried, dropped (named in `dropped`) or refused with a 400 naming it, as the field
// policy's table says (field-policy.ts).

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Block, CacheHint, CanonicalRequest, HostedTool, Message, Reasoning, ReasoningEffort, TextBlock, Tool, ToolChoice } from "../canonical.js";
import { forcedHostedRefusal, hostedToolName, noteDropped, screenKeys, TOP } from "../field-policy.js";
import { decodeContent } from "./blocks.js";
import { array, invalid, object, onlyKeys, optBool, optInt, optNumber, readCache, string, type Json } from "./fields.js";

const WIRE = "messages";

/** Anthropic's `output_config.effort` as a canonical effort; xhigh and max exceed the
 * canonical scale and become its top level, high. */
const EFFORTS: Readonly<Record<string, ReasoningEffort>> = { low: "low", medium: "medium", high: "high", xhigh: "high", max: "high" };

function required(json: Json, key: string, field = key): unknown {
  if (json[key] === undefined || json[key] === null) throw new GatewayError(errors.missingParameter, `${field}: is required`);
  return json[key];
}

function system(v: unknown, field: string, dropped: string[]): TextBlock[] {
  if (v === undefined || v === null) return [];
  const blocks = decodeContent(v, field, new Map(), dropped);
  blocks.forEach((b, i) => b.type !== "text" && invalid(`${field}[${i}].type`, 'system blocks must be "text"'));
  return blocks as TextBlock[];
}

/** Messages, with leading `system`-role messages moved into the system prompt; later ones
 * (clients send them for non-Claude models) stay in place as system turns. */
function messages(v: unknown, sys: TextBlock[], dropped: string[]): Message[] {
  const names = new Map<string, string>();
  const out: Message[] = [];
  array(v, "messages").forEach((raw, i) => {
    const field = `messages[${i}]`;
    const m = object(raw, field);
    onlyKeys(m, new Set(["role", "content"]), field, dropped);
    if (m.role === "system") {
      const text = system(m.content, `${field}.content`, dropped);
      if (out.length === 0) sys.push(...text);
      else if (out.at(-1)!.role === "system") out[out.length - 1] = { role: "system", content: [...out.at(-1)!.content, ...text] };
      else out.push({ role: "system", content: text });
      return;
    }
    if (m.role !== "user" && m.role !== "assistant") invalid(`${field}.role`, 'must be "user" or "assistant"');
    out.push({ role: m.role, content: decodeContent(m.content, `${field}.content`, names, dropped) });
  });
  return out;
}

/** The client's tools: custom tools; web search (any version) as a hosted tool the target
 * maps to its own; any other typed tool (a server tool, or an Anthropic-defined client tool
 * such as bash_… whose schema only Claude knows) dropped and named, its name kept in
 * `typed` so a tool_choice forcing it is refused. */
interface DecodedTools { tools?: Tool[]; hostedTools?: HostedTool[]; typed: Set<string> }

function tools(v: unknown, dropped: string[]): DecodedTools {
  const out: DecodedTools = { typed: new Set() };
  if (v === undefined || v === null) return out;
  const custom: Tool[] = [];
  array(v, "tools").forEach((raw, i) => {
    const field = `tools[${i}]`;
    const t = object(raw, field);
    if (t.type != null && t.type !== "custom") {
      const type = string(t.type, `${field}.type`);
      if (typeof t.name === "string") out.typed.add(t.name);
      if (/^web_search_\d+$/.test(type)) out.hostedTools = [{ kind: "web_search" }];
      else noteDropped(dropped, hostedToolName("tools[]", type));
      return;
    }
    screenKeys(WIRE, t, { path: "tools[]", where: field }, dropped);
    const cache = readCache(t.cache_control, `${field}.cache_control`, dropped);
    const description = t.description == null ? undefined : string(t.description, `${field}.description`);
    custom.push({
      name: string(t.name, `${field}.name`), parameters: object(t.input_schema, `${field}.input_schema`),
      ...(description !== undefined && { description }), ...(cache && { cache }),
    });
  });
  if (custom.length > 0 || out.hostedTools === undefined) out.tools = custom;
  return out;
}

function toolChoice(v: unknown, dropped: string[], typed: ReadonlySet<string>): { choice?: ToolChoice; parallel?: boolean } {
  if (v === undefined || v === null) return {};
  const c = object(v, "tool_choice");
  onlyKeys(c, new Set(["type", "name", "disable_parallel_tool_use"]), "tool_choice", dropped);
  const disable = optBool(c.disable_parallel_tool_use, "tool_choice.disable_parallel_tool_use");
  const parallel = disable === undefined ? undefined : !disable;
  switch (c.type) {
    case "auto": case "any": case "none":
      return { choice: { type: c.type }, parallel };
    case "tool": {
      const name = string(c.name, "tool_choice.name");
      if (typed.has(name)) throw forcedHostedRefusal("tool_choice.name", name);
      return { choice: { type: "tool", name }, parallel };
    }
    default:
      return invalid("tool_choice.type", 'must be "auto", "any", "tool" or "none"');
  }
}

/** `thinking` and `output_config.effort` as canonical reasoning. Adaptive thinking without
 * an effort gets Anthropic's default effort, high. */
function reasoning(v: unknown, effort: ReasoningEffort | undefined, dropped: string[]): Reasoning | undefined {
  if (v === undefined || v === null) return effort && { effort };
  const t = object(v, "thinking");
  screenKeys(WIRE, t, { path: "thinking", where: "thinking" }, dropped);
  if (t.type === "disabled") return undefined;
  if (t.type === "adaptive") return { effort: effort ?? "high" };
  if (t.type !== "enabled") invalid("thinking.type", 'must be "enabled", "adaptive" or "disabled"');
  const budgetTokens = optInt(required(t, "budget_tokens", "thinking.budget_tokens"), "thinking.budget_tokens") as number;
  return { budgetTokens, ...(effort && { effort }) };
}

function outputConfig(v: unknown, dropped: string[]): { effort?: ReasoningEffort; format?: Record<string, unknown> } {
  if (v === undefined || v === null) return {};
  const o = object(v, "output_config");
  onlyKeys(o, new Set(["effort", "format"]), "output_config", dropped);
  let effort: ReasoningEffort | undefined;
  if (o.effort != null) effort = EFFORTS[string(o.effort, "output_config.effort")] ?? invalid("output_config.effort", "unknown effort level");
  return o.format == null ? { effort } : { effort, format: schemaFormat(o.format, "output_config.format", dropped) };
}

/** A `{type: "json_schema", schema}` output format (output_config.format, or the beta's
 * older top-level output_format): its schema. */
function schemaFormat(v: unknown, field: string, dropped: string[]): Record<string, unknown> {
  const f = object(v, field);
  onlyKeys(f, new Set(["type", "schema"]), field, dropped);
  if (f.type !== "json_schema") invalid(`${field}.type`, 'must be "json_schema"');
  return object(f.schema, `${field}.schema`);
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
  const dropped: string[] = [];
  screenKeys(WIRE, json, TOP, dropped);
  const model = string(required(json, "model"), "model");
  const maxTokens = optInt(required(json, "max_tokens"), "max_tokens");
  const sys = system(json.system, "system", dropped);
  const msgs = messages(required(json, "messages"), sys, dropped);
  const { tools: tls, hostedTools, typed } = tools(json.tools, dropped);
  const { choice, parallel } = toolChoice(json.tool_choice, dropped, typed);
  const out = outputConfig(json.output_config, dropped);
  if (json.output_format != null && out.format === undefined) out.format = schemaFormat(json.output_format, "output_format", dropped);
  const topCache = readCache(json.cache_control, "cache_control", dropped);
  if (topCache) markLast(topCache, msgs, sys, tls);
  const metadata = json.metadata == null ? {} : object(json.metadata, "metadata");
  screenKeys(WIRE, metadata, { path: "metadata", where: "metadata" }, dropped);
  const user = metadata.user_id == null ? undefined : string(metadata.user_id, "metadata.user_id");
  const stop = json.stop_sequences == null ? undefined
    : array(json.stop_sequences, "stop_sequences").map((s, i) => string(s, `stop_sequences[${i}]`));
  const fields: CanonicalRequest = {
    model, system: sys, messages: msgs, maxTokens,
    temperature: optNumber(json.temperature, "temperature"),
    topP: optNumber(json.top_p, "top_p"),
    topK: optInt(json.top_k, "top_k"),
    stop, tools: tls, toolChoice: choice, hostedTools, parallelToolCalls: parallel,
    reasoning: reasoning(json.thinking, out.effort, dropped),
    stream: optBool(json.stream, "stream") ?? false,
    user,
    responseFormat: out.format && { schema: out.format },
    dropped: dropped.length > 0 ? dropped : undefined,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as unknown as CanonicalRequest;
}
