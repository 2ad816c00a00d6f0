// A client's generate-content request → canonical, for conversion to another protocol's
// channel (same-protocol traffic passes through untouched and never comes here). Every body
// field is carried, dropped (named in `dropped`: safetySettings, labels…) or a 400 naming
// it, as the field policy's table says (field-policy.ts). A Gemini → gemini request passes
// through with its safetySettings untouched; a converted one is answered under the target's
// own safety behaviour, and a block by the target still comes back as finishReason SAFETY.

import type { Block, CanonicalRequest, HostedTool, Message, TextBlock, Tool, ToolChoice } from "../canonical.js";
import { dropUnknownKeys, noteDropped, noteUnknown, screenKeys, TOP } from "../field-policy.js";
import { decodeGenerationConfig, type Draft } from "./config-decode.js";
import { jsonSchemaOf } from "./mapping.js";
import { decodeParts } from "./parts-decode.js";
import { array, CallIds, invalid, missing, object, setKeys, string, type JsonObject } from "./wire.js";

const WIRE = "generate-content";
const DECLARATION_KEYS = new Set(["name", "description", "parameters", "parametersJsonSchema", "response", "responseJsonSchema"]);
const CONTENT_KEYS = new Set(["role", "parts"]);
const CALLING_KEYS = new Set(["mode", "allowedFunctionNames"]);

/** Decodes a generate-content body; the model and stream flag come from the URL. */
export function decodeGeminiRequest(json: JsonObject, from: { readonly pathModel?: string; readonly pathStream?: boolean }): CanonicalRequest {
  if (!from.pathModel) throw missing("model");
  const dropped: string[] = [];
  screenKeys(WIRE, json, TOP, dropped);
  if (json.contents == null) throw missing("contents");
  const stream = from.pathStream === true;
  const draft: Draft = {
    model: from.pathModel,
    system: json.systemInstruction == null ? [] : decodeSystem(json.systemInstruction),
    messages: decodeContents(json.contents, dropped),
    stream,
    // Gemini streams always end with usageMetadata, so the client expects usage.
    ...(stream && { streamUsage: true }),
  };
  if (json.tools != null) Object.assign(draft, decodeTools(json.tools, dropped));
  if (json.toolConfig != null) Object.assign(draft, decodeToolConfig(json.toolConfig, dropped));
  if (json.generationConfig != null) Object.assign(draft, decodeGenerationConfig(object(json.generationConfig, "generationConfig"), dropped));
  if (dropped.length > 0) draft.dropped = dropped;
  return draft as CanonicalRequest;
}

/** `systemInstruction`: a Content whose parts are text. */
function decodeSystem(v: unknown): TextBlock[] {
  const content = object(v, "systemInstruction");
  return array(content.parts, "systemInstruction.parts").map((p, i) => {
    const part = object(p, `systemInstruction.parts[${i}]`);
    const extra = setKeys(part).find((k) => k !== "text");
    if (extra !== undefined) throw invalid(`systemInstruction.parts[${i}].${extra}`, "system instructions can only be text when converted");
    return { type: "text", text: string(part.text, `systemInstruction.parts[${i}].text`) };
  });
}

/**
 * `contents` as messages. Consecutive contents of one role are one turn (the SDK's chat
 * history stores a streamed answer as one Content per chunk; other protocols want turns
 * to alternate), so they merge into one message.
 */
function decodeContents(v: unknown, dropped: string[]): Message[] {
  const ids = new CallIds();
  const messages: { role: Message["role"]; content: Block[] }[] = [];
  array(v, "contents").forEach((c, i) => {
    const field = `contents[${i}]`;
    const content = object(c, field);
    dropUnknownKeys(content, CONTENT_KEYS, field, dropped);
    const role = content.role == null || content.role === "user" ? "user" : content.role === "model" ? "assistant" : undefined;
    if (role === undefined) throw invalid(`${field}.role`, 'must be "user" or "model"');
    const last = messages.at(-1);
    if (last?.role === role) decodeParts(content.parts, { strict: true, role, field, ids, dropped }, last.content);
    else messages.push({ role, content: decodeParts(content.parts, { strict: true, role, field, ids, dropped }) });
  });
  return messages;
}

/** Google Search, in both its forms: the target's own web search serves it. */
const WEB_SEARCH_KEYS = new Set(["googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval"]);

/** `tools`: function declarations; Google Search as a hosted tool the target maps to its own;
 * Gemini's other server-side tools (codeExecution, urlContext…) dropped and named: they can
 * only be offered (toolConfig forces functions alone). */
function decodeTools(v: unknown, dropped: string[]): { tools: Tool[]; hostedTools?: HostedTool[] } {
  const tools: Tool[] = [];
  let hostedTools: HostedTool[] | undefined;
  array(v, "tools").forEach((t, i) => {
    const tool = object(t, `tools[${i}]`);
    for (const key of setKeys(tool)) {
      if (key === "functionDeclarations") continue;
      if (WEB_SEARCH_KEYS.has(key)) hostedTools = [{ kind: "web_search" }];
      else noteUnknown(dropped, "tools[]", key);
    }
    array(tool.functionDeclarations ?? [], `tools[${i}].functionDeclarations`).forEach((d, j) => {
      tools.push(decodeDeclaration(object(d, `tools[${i}].functionDeclarations[${j}]`), `tools[${i}].functionDeclarations[${j}]`, dropped));
    });
  });
  return hostedTools ? { tools, hostedTools } : { tools };
}

/**
 * One function declaration. `response`/`responseJsonSchema` describe what the function
 * returns; no other protocol takes that, and it does not constrain the answer, so it is
 * dropped. OpenAPI-style `parameters` become JSON Schema.
 */
function decodeDeclaration(d: JsonObject, field: string, dropped: string[]): Tool {
  dropUnknownKeys(d, DECLARATION_KEYS, field, dropped);
  for (const key of ["response", "responseJsonSchema"]) if (d[key] != null) noteDropped(dropped, `tools[].functionDeclarations[].${key}`);
  if (d.parameters != null && d.parametersJsonSchema != null) {
    throw invalid(`${field}.parametersJsonSchema`, "cannot be combined with parameters");
  }
  const schema = d.parametersJsonSchema ?? (d.parameters == null ? undefined : jsonSchemaOf(d.parameters));
  const parameters = schema === undefined ? { type: "object", properties: {} } : object(schema, `${field}.parameters`);
  const description = d.description == null ? undefined : string(d.description, `${field}.description`);
  return { name: string(d.name, `${field}.name`), ...(description !== undefined && { description }), parameters };
}

/** `toolConfig.functionCallingConfig` as a tool choice. */
function decodeToolConfig(v: unknown, dropped: string[]): Draft {
  const config = object(v, "toolConfig");
  screenKeys(WIRE, config, { path: "toolConfig", where: "toolConfig" }, dropped);
  if (config.functionCallingConfig == null) return {};
  const fc = object(config.functionCallingConfig, "toolConfig.functionCallingConfig");
  const field = "toolConfig.functionCallingConfig";
  dropUnknownKeys(fc, CALLING_KEYS, field, dropped);
  const mode = fc.mode == null ? "AUTO" : string(fc.mode, `${field}.mode`);
  const names = fc.allowedFunctionNames == null ? [] : array(fc.allowedFunctionNames, `${field}.allowedFunctionNames`);
  if (names.length > 0 && mode !== "ANY") throw invalid(`${field}.allowedFunctionNames`, "is only allowed with mode ANY");
  if (names.length > 1) throw invalid(`${field}.allowedFunctionNames`, "can name only one function when converted");
  let toolChoice: ToolChoice;
  if (mode === "ANY") {
    toolChoice = names.length === 1 ? { type: "tool", name: string(names[0], `${field}.allowedFunctionNames[0]`) } : { type: "any" };
  } else if (mode === "NONE") {
    toolChoice = { type: "none" };
  } else if (mode === "AUTO" || mode === "MODE_UNSPECIFIED" || mode === "VALIDATED") {
    // VALIDATED is AUTO with schema-checked calls; every target already checks call shapes.
    toolChoice = { type: "auto" };
  } else {
    throw invalid(`${field}.mode`, "must be AUTO, ANY, NONE or VALIDATED");
  }
  return { toolChoice };
}

