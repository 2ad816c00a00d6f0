// Writes a canonical answer as the Response object the openai SDK types: output items
// (reasoning, message, function_call, image_generation_call), status, usage, and the echo
// of the request's settings the real API returns beside them.

import type { Block, CanonicalRequest, CanonicalResponse, ImageSource, Tool, ToolChoice } from "../canonical.js";
import { encryptedContentOf, responsesEndOf, responsesWireUsage, ResponsesIds, type ResponsesWireUsage } from "./responses-common.js";

/** One output item, in wire shape. */
export type OutputItem = Record<string, unknown>;

/** The fields of a Response that change while it is made; the rest echo the request. */
export interface ResponseState {
  readonly id: string;
  readonly createdAt: number;
  readonly model: string;
  readonly status: "in_progress" | "completed" | "incomplete" | "failed";
  readonly output: readonly OutputItem[];
  readonly incompleteDetails?: { reason: string } | null;
  readonly error?: { code: string; message: string } | null;
  readonly usage?: ResponsesWireUsage | null;
  /** The service tier that served the answer, when the upstream named one. */
  readonly serviceTier?: string;
}

function wireTool(t: Tool): Record<string, unknown> {
  return { type: "function", name: t.name, description: t.description ?? null, parameters: t.parameters, strict: null };
}

/** The request's tools as the client declared them: namespaced ones inside their namespace. */
function wireTools(tools: readonly Tool[] = []): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const spaces = new Map<string, Record<string, unknown>[]>();
  for (const t of tools) {
    if (t.namespace === undefined) {
      out.push(wireTool(t));
      continue;
    }
    let inner = spaces.get(t.namespace);
    if (!inner) {
      spaces.set(t.namespace, inner = []);
      out.push({ type: "namespace", name: t.namespace, description: "", tools: inner });
    }
    inner.push(wireTool(t));
  }
  return out;
}

function wireToolChoice(c: ToolChoice | undefined): unknown {
  if (c === undefined) return "auto";
  if (c.type === "any") return "required";
  if (c.type === "tool") return { type: "function", name: c.name };
  return c.type;
}

function wireFormat(f: CanonicalRequest["responseFormat"]): Record<string, unknown> {
  if (f === undefined) return { type: "text" };
  if (f.schema === undefined) return { type: "json_object" };
  return { type: "json_schema", name: f.name ?? "response", schema: f.schema, strict: null, description: null };
}

/** The whole Response object: the state, and the request's settings as the API echoes them. */
export function responseObject(req: CanonicalRequest, s: ResponseState): Record<string, unknown> {
  const instructions = req.system.map((b) => b.text).join("\n\n");
  const body: Record<string, unknown> = {
    id: s.id,
    object: "response",
    created_at: s.createdAt,
    status: s.status,
    background: false,
    error: s.error ?? null,
    incomplete_details: s.incompleteDetails ?? null,
    instructions: instructions === "" ? null : instructions,
    max_output_tokens: req.maxTokens ?? null,
    max_tool_calls: null,
    model: s.model,
    output: s.output,
    parallel_tool_calls: req.parallelToolCalls ?? true,
    previous_response_id: null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: null },
    service_tier: s.serviceTier ?? "default",
    store: false,
    temperature: req.temperature ?? 1,
    text: { format: wireFormat(req.responseFormat), verbosity: "medium" },
    tool_choice: wireToolChoice(req.toolChoice),
    tools: wireTools(req.tools),
    top_logprobs: 0,
    top_p: req.topP ?? 1,
    truncation: "disabled",
    usage: s.usage ?? null,
    user: req.user ?? null,
    metadata: {},
  };
  if (s.status === "completed" || s.status === "incomplete") body.completed_at = Math.floor(Date.now() / 1000);
  return body;
}

/** The output item of an image the model made: an image_generation_call with the base64
 * result, or (for an image only linked) a message with a markdown link. */
export function imageItem(source: ImageSource, ids: ResponsesIds, index: number): OutputItem {
  return source.kind === "base64"
    ? items.image(ids.item("ig", index), source.data)
    : items.message(ids.item("msg", index), `![image](${source.url})`);
}

/** Output items builders, shared with the stream encoder so both give the same items. */
export const items = {
  message(id: string, text: string, refusal = false): OutputItem {
    const part = refusal ? { type: "refusal", refusal: text } : { type: "output_text", text, annotations: [], logprobs: [] };
    return { id, type: "message", status: "completed", role: "assistant", content: [part] };
  },
  reasoning(id: string, text: string, encrypted: string | null): OutputItem {
    return { id, type: "reasoning", summary: text === "" ? [] : [{ type: "summary_text", text }], encrypted_content: encrypted, status: "completed" };
  },
  functionCall(id: string, callId: string, name: string, args: string, namespace?: string): OutputItem {
    const item: OutputItem = { id, type: "function_call", status: "completed", arguments: args, call_id: callId, name };
    if (namespace !== undefined) item.namespace = namespace;
    return item;
  },
  image(id: string, base64: string): OutputItem {
    return { id, type: "image_generation_call", status: "completed", result: base64 };
  },
};

/** The namespace a called tool was declared in, if any (given back on its calls). */
export function namespaceOf(req: CanonicalRequest, name: string): string | undefined {
  return req.tools?.find((t) => t.name === name && t.namespace !== undefined)?.namespace;
}

/** The output items of a canonical answer's content. */
export function outputItems(content: readonly Block[], refusal: boolean, ids: ResponsesIds, req: CanonicalRequest): OutputItem[] {
  const out: OutputItem[] = [];
  for (const b of content) {
    const i = out.length;
    switch (b.type) {
      case "text":
        out.push(items.message(ids.item("msg", i), b.text, refusal));
        break;
      case "thinking":
      case "redacted_thinking":
        out.push(items.reasoning(ids.item("rs", i), b.type === "thinking" ? b.text : "", encryptedContentOf(b)));
        break;
      case "tool_use":
        out.push(items.functionCall(ids.item("fc", i), b.id, b.name, JSON.stringify(b.input), namespaceOf(req, b.name)));
        break;
      case "image":
        out.push(imageItem(b.source, ids, i));
        break;
      // tool_result never appears in an answer.
    }
  }
  return out;
}

/** Writes a canonical response as a Response object. */
export function encodeResponsesResponse(res: CanonicalResponse, req: CanonicalRequest): Record<string, unknown> {
  const ids = new ResponsesIds();
  const end = responsesEndOf(res.stopReason);
  return responseObject(req, {
    id: ids.response(res.id),
    createdAt: Math.floor(Date.now() / 1000),
    model: res.model,
    status: end.status,
    incompleteDetails: end.incompleteDetails,
    output: outputItems(res.content, res.stopReason === "refusal", ids, req),
    usage: responsesWireUsage(res.usage),
    serviceTier: res.usage.serviceTier,
  });
}
