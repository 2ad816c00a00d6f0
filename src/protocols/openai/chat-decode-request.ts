// Reads a client's chat-completions request into the canonical request, for conversion
// to a channel of another protocol. Every top-level field is carried, dropped (named in
// `dropped`) or refused with a 400 naming it, as the field policy's table says.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { CanonicalRequest, Tool, ToolChoice } from "../canonical.js";
import { screenKeys, TOP } from "../field-policy.js";
import { invalid, isObject, onlyKnown, optInt, optNumber, optString, reasoningEffort } from "./chat-common.js";
import { decodeMessages } from "./chat-decode-messages.js";
import { decodeFunctionCall, decodeFunctions } from "./chat-legacy-functions.js";

const WIRE = "chat-completions";
const functionKeys = new Set(["name", "description", "parameters", "strict"]);

function decodeTools(v: unknown, dropped: string[]): Tool[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid("tools must be an array.");
  return v.map((t: unknown, i): Tool => {
    const at = `tools[${i}]`;
    if (!isObject(t) || t.type !== "function") throw invalid(`${at}.type must be "function"; other tool types cannot be converted.`);
    onlyKnown(t, new Set(["type", "function"]), at, dropped);
    const fn = t.function;
    if (!isObject(fn) || typeof fn.name !== "string" || fn.name === "") throw invalid(`${at}.function.name must be a non-empty string.`);
    // `strict` asks for exact schema adherence; channels that enforce schemas do so anyway.
    onlyKnown(fn, functionKeys, `${at}.function`, dropped);
    const description = optString(fn, "description", `${at}.function.`);
    if (fn.parameters !== undefined && !isObject(fn.parameters)) throw invalid(`${at}.function.parameters must be a JSON Schema object.`);
    const parameters = (fn.parameters as Record<string, unknown> | undefined) ?? { type: "object", properties: {} };
    return description === undefined ? { name: fn.name, parameters } : { name: fn.name, description, parameters };
  });
}

function decodeToolChoice(v: unknown): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === "auto" || v === "none") return { type: v };
  if (v === "required") return { type: "any" };
  if (isObject(v) && v.type === "function" && isObject(v.function) && typeof v.function.name === "string") {
    return { type: "tool", name: v.function.name };
  }
  throw invalid('tool_choice must be "auto", "none", "required" or {"type":"function","function":{"name":…}}.');
}


function decodeResponseFormat(v: unknown, dropped: string[]): CanonicalRequest["responseFormat"] {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid("response_format must be an object.");
  if (v.type === "text") return undefined;
  if (v.type === "json_object") return {};
  const js = v.json_schema;
  if (v.type !== "json_schema" || !isObject(js) || typeof js.name !== "string") {
    throw invalid('response_format must be {"type":"text"}, {"type":"json_object"} or {"type":"json_schema","json_schema":{name,schema}}.');
  }
  // description and strict are hints to the model/decoder; the schema itself is carried.
  onlyKnown(js, new Set(["name", "schema", "description", "strict"]), "response_format.json_schema", dropped);
  if (js.schema !== undefined && !isObject(js.schema)) throw invalid("response_format.json_schema.schema must be an object.");
  return js.schema === undefined ? { name: js.name } : { schema: js.schema as Record<string, unknown>, name: js.name };
}

function decodeStop(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return [v];
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) throw invalid("stop must be a string or an array of strings.");
  return v.length === 0 ? undefined : (v as string[]);
}

/** Decodes a chat-completions request body; throws GatewayError 400 naming the field. */
export function decodeChatRequest(json: Record<string, unknown>): CanonicalRequest {
  if (typeof json.model !== "string" || json.model === "") throw new GatewayError(errors.missingParameter, "model is required.");
  if (!Array.isArray(json.messages) || json.messages.length === 0) {
    throw new GatewayError(errors.missingParameter, "messages is required and must be a non-empty array.");
  }
  const dropped: string[] = [];
  screenKeys(WIRE, json, TOP, dropped);
  for (const key of ["stream", "parallel_tool_calls"]) {
    if (json[key] !== undefined && json[key] !== null && typeof json[key] !== "boolean") throw invalid(`${key} must be a boolean.`);
  }
  const stream = json.stream === true;
  const opts = json.stream_options;
  if (opts !== undefined && opts !== null) {
    if (!isObject(opts)) throw invalid("stream_options must be an object.");
    screenKeys(WIRE, opts, { path: "stream_options", where: "stream_options" }, dropped);
  }
  if (json.web_search_options != null && !isObject(json.web_search_options)) throw invalid("web_search_options must be an object.");
  optInt(json, "n", ""); // n above 1 is refused by the screen; 1 is the only answer anyway
  const cacheNames: string[] = [];
  const { system, messages } = decodeMessages(json.messages, dropped, cacheNames);
  // Legacy functions are tools by another name; a request may use one form or the other.
  const functions = decodeFunctions(json.functions, dropped);
  const functionChoice = decodeFunctionCall(json.function_call, dropped);
  if (functions && json.tools !== undefined && json.tools !== null) throw invalid("functions and tools cannot both be set; use tools.");
  if (functionChoice && json.tool_choice !== undefined && json.tool_choice !== null) {
    throw invalid("function_call and tool_choice cannot both be set; use tool_choice.");
  }
  const req: Record<string, unknown> = {
    model: json.model,
    system,
    messages,
    maxTokens: optInt(json, "max_completion_tokens", "") ?? optInt(json, "max_tokens", ""),
    temperature: optNumber(json, "temperature", ""),
    topP: optNumber(json, "top_p", ""),
    stop: decodeStop(json.stop),
    frequencyPenalty: optNumber(json, "frequency_penalty", ""),
    presencePenalty: optNumber(json, "presence_penalty", ""),
    seed: optNumber(json, "seed", ""),
    tools: functions ?? decodeTools(json.tools, dropped),
    toolChoice: functionChoice ?? decodeToolChoice(json.tool_choice),
    legacyFunctions: functions ? true : undefined,
    parallelToolCalls: typeof json.parallel_tool_calls === "boolean" ? json.parallel_tool_calls : undefined,
    reasoning: reasoningEffort(json.reasoning_effort, "reasoning_effort"),
    stream,
    streamUsage: stream && isObject(opts) && opts.include_usage === true ? true : undefined,
    // safety_identifier replaced `user`; both identify the end user for abuse tracking.
    user: optString(json, "user", "") ?? optString(json, "safety_identifier", ""),
    responseFormat: decodeResponseFormat(json.response_format, dropped),
    // web_search_options asks a search model to search: the target's own web search (field-policy.ts).
    hostedTools: isObject(json.web_search_options) ? [{ kind: "web_search" }] : undefined,
    dropped: dropped.length > 0 ? dropped : undefined,
    spelledAs: cacheNames.length > 0 ? { cache: cacheNames } : undefined,
  };
  for (const key of Object.keys(req)) if (req[key] === undefined) delete req[key];
  return req as unknown as CanonicalRequest;
}
