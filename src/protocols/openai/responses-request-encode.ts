// Writes a canonical request as a responses-protocol body, for models an OpenAI-protocol
// channel serves only on /v1/responses. The gateway keeps no conversations (store: false):
// the whole conversation goes as `input` items every turn. What the responses protocol
// drops or refuses is field-policy.ts's table ("responses" column).

import type { Block, CanonicalRequest, ImageSource, Message, ThinkingBlock, ToolChoice, ToolResultBlock } from "../canonical.js";
import { UnsupportedField } from "../adapter.js";
import { mapsWebSearch } from "../field-policy.js";
import { effortOf } from "../reasoning.js";
import { invalid } from "./chat-common.js";

/** The least max_output_tokens the responses API accepts (a lower one is a 400): a client
 * probing with max_tokens 1 gets at most this much instead of a refusal. */
const MIN_OUTPUT_TOKENS = 16;

type Item = Record<string, unknown>;
type Part = Record<string, unknown>;

/**
 * Whether a thinking block's signature is a responses-API reasoning blob (the
 * `encrypted_content` of a reasoning item, a Fernet token: "gAAAAA…"). Only those can go
 * back: the API decrypts them to restore the model's reasoning, and refuses anything else
 * (another vendor's signature would be a 400).
 */
export function isReasoningBlob(signature: string | undefined): signature is string {
  return signature !== undefined && signature.startsWith("gAAAAA");
}

function imageUrl(source: ImageSource): string {
  return source.kind === "base64" ? `data:${source.mediaType};base64,${source.data}` : source.url;
}

function inputImage(source: ImageSource): Part {
  return { type: "input_image", image_url: imageUrl(source), detail: "auto" };
}

/** A tool result as a function_call_output item: its text as a string, or parts when it
 * has images. The protocol has no error flag; the model learns it from the text. */
function toolOutput(b: ToolResultBlock): Item {
  let output: string | Part[];
  if (b.content.every((c) => c.type === "text")) {
    const text = b.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
    output = b.isError ? `Error: ${text}` : text;
  } else {
    output = b.content.map((c) => (c.type === "text" ? { type: "input_text", text: c.text } : inputImage(c.source)));
    if (b.isError) output.unshift({ type: "input_text", text: "Error:" });
  }
  return { type: "function_call_output", call_id: b.toolUseId, output };
}

function userItems(m: Message, where: string): Item[] {
  const items: Item[] = [];
  const parts: Part[] = [];
  // Tool results first: they answer the calls of the assistant turn just before.
  m.content.forEach((b, j) => {
    if (b.type === "tool_result") items.push(toolOutput(b));
    else if (b.type === "text") parts.push({ type: "input_text", text: b.text });
    else if (b.type === "image") parts.push(inputImage(b.source));
    else throw invalid(`${where}.content[${j}]: a ${b.type} block cannot appear in a user message.`);
  });
  if (parts.length > 0) items.push({ type: "message", role: "user", content: parts });
  return items;
}

/** A reasoning item for a thinking block the API can take back; undefined otherwise (its
 * summary alone would be new text the model never wrote, so it is left out). */
function reasoningItem(b: ThinkingBlock): Item | undefined {
  if (!isReasoningBlob(b.signature)) return undefined;
  return { type: "reasoning", summary: b.text === "" ? [] : [{ type: "summary_text", text: b.text }], encrypted_content: b.signature };
}

/** An assistant turn as items in its own order: text runs as one message item each,
 * tool calls as function_call items, carried reasoning as reasoning items. */
function assistantItems(m: Message, where: string): Item[] {
  const items: Item[] = [];
  let texts: Part[] | undefined;
  const push = (item: Item | undefined) => {
    texts = undefined;
    if (item) items.push(item);
  };
  m.content.forEach((b: Block, j) => {
    switch (b.type) {
      case "text":
        if (!texts) {
          texts = [];
          items.push({ type: "message", role: "assistant", content: texts });
        }
        texts.push({ type: "output_text", text: b.text, annotations: [] });
        return;
      case "tool_use":
        return push({ type: "function_call", call_id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
      case "thinking":
        return push(reasoningItem(b));
      case "redacted_thinking":
        return; // another vendor's ciphertext: nothing the responses API can read
      case "image":
        return; // an image of an earlier answer: input images are the user's only (the field table drops it)
      default:
        throw invalid(`${where}.content[${j}]: a ${b.type} block cannot appear in an assistant message sent to a responses channel.`);
    }
  });
  return items;
}

function toolChoice(c: ToolChoice): unknown {
  switch (c.type) {
    case "auto":
    case "none": return c.type;
    case "any": return "required";
    case "tool": return { type: "function", name: c.name };
  }
}

function textFormat(f: NonNullable<CanonicalRequest["responseFormat"]>): unknown {
  if (!f.schema) return { type: "json_object" };
  return { type: "json_schema", name: f.name ?? "response", schema: f.schema };
}

/** Refuses what the responses API has no field for and whose loss would change the answer
 * (field-policy.ts refuses these in the hub too). Top-k, penalties, seed and cache hints
 * are dropped there (named to the client) and simply not written here. */
function refuseInexpressible(r: CanonicalRequest): void {
  if (r.candidates !== undefined && r.candidates > 1) throw new UnsupportedField("candidates", "a converted answer carries one choice");
  if (r.stop && r.stop.length > 0) throw new UnsupportedField("stop", "the responses API has no stop sequences");
}

/** A system message partway through the conversation, kept in its place. */
function systemItem(m: Message): Item | undefined {
  const parts = m.content.flatMap((b) => (b.type === "text" ? [{ type: "input_text", text: b.text }] : []));
  return parts.length > 0 ? { type: "message", role: "system", content: parts } : undefined;
}

function itemsOf(m: Message, where: string): Item[] {
  if (m.role === "user") return userItems(m, where);
  if (m.role === "assistant") return assistantItems(m, where);
  const item = systemItem(m);
  return item ? [item] : [];
}

/** max_output_tokens for a limit: the API refuses one below MIN_OUTPUT_TOKENS. */
export function encodedMaxOutputTokens(maxTokens: number): number {
  return Math.max(maxTokens, MIN_OUTPUT_TOKENS);
}

/** The responses-protocol body for `req`, addressed to `upstreamModel`. */
export function encodeResponsesRequest(req: CanonicalRequest, upstreamModel: string): Record<string, unknown> {
  refuseInexpressible(req);
  const input: Item[] = [];
  req.messages.forEach((m, i) => {
    input.push(...itemsOf(m, `messages[${i}]`));
  });
  const body: Record<string, unknown> = { model: upstreamModel };
  if (req.system.length > 0) body.instructions = req.system.map((b) => b.text).join("\n\n");
  body.input = input;
  if (req.maxTokens !== undefined) body.max_output_tokens = encodedMaxOutputTokens(req.maxTokens);
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.tools && req.tools.length > 0) {
    // strict: false: the API makes function tools strict by default, which refuses the
    // loose schemas other protocols' clients send; chat-completions' default is loose too.
    body.tools = req.tools.map((t) => (t.description === undefined
      ? { type: "function", name: t.name, parameters: t.parameters, strict: false }
      : { type: "function", name: t.name, description: t.description, parameters: t.parameters, strict: false }));
  }
  // The client's hosted web search, as OpenAI's own (field-policy.ts).
  if (mapsWebSearch("responses", req)) body.tools = [...((body.tools as unknown[] | undefined) ?? []), { type: "web_search" }];
  if (req.toolChoice) body.tool_choice = toolChoice(req.toolChoice);
  if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  const r = req.reasoning;
  const reasons = r !== undefined && (r.effort !== undefined || r.budgetTokens !== undefined);
  if (reasons) body.reasoning = { effort: r.effort ?? effortOf(r.budgetTokens ?? 0) };
  // Reasoning comes back encrypted so a later turn can carry it (nothing is stored); asked
  // only of a model that reasons: others refuse the include.
  if (reasons || input.some((item) => item.type === "reasoning")) body.include = ["reasoning.encrypted_content"];
  if (req.responseFormat) body.text = { format: textFormat(req.responseFormat) };
  if (req.user !== undefined) body.user = req.user;
  body.store = false;
  if (req.stream) body.stream = true; // a responses stream always ends with its usage
  return body;
}
