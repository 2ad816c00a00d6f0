// Complete (non-stream) chat-completions answers: read a channel's ChatCompletion into the
// canonical response, and write a canonical response as the ChatCompletion a client expects.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Block, CanonicalRequest, CanonicalResponse, StopReason, TextBlock } from "../canonical.js";
import { emptyUsage } from "../usage.js";
import { chatId, finishReasonOf, isObject, parseArguments, stopReasonOf, wireUsage, type FinishReason, type WireUsage } from "./chat-common.js";
import { normalizeOpenAIUsage } from "./usage.js";

function upstreamFault(message: string): GatewayError {
  return new GatewayError(errors.upstreamError, `The upstream answer could not be read: ${message}`);
}

function toolUse(id: string, name: unknown, args: unknown): Block {
  if (typeof name !== "string") throw upstreamFault("a tool call has no function name.");
  const input = parseArguments(typeof args === "string" ? args : "");
  if (!input) throw upstreamFault(`the arguments of tool call ${id} are not a JSON object.`);
  return { type: "tool_use", id, name, input };
}

/** Reads a ChatCompletion body (first choice) into the canonical response. */
export function decodeChatResponse(json: unknown): CanonicalResponse {
  if (!isObject(json) || !Array.isArray(json.choices)) throw upstreamFault("no choices.");
  const choice: unknown = json.choices.find((c: unknown) => isObject(c) && (c.index ?? 0) === 0) ?? json.choices[0];
  const msg = isObject(choice) && isObject(choice.message) ? choice.message : {};
  const content: Block[] = [];
  // reasoning_content (DeepSeek, vLLM) or reasoning (OpenRouter): OpenAI-compatible upstreams' thinking.
  const thinking = msg.reasoning_content ?? msg.reasoning;
  if (typeof thinking === "string" && thinking !== "") content.push({ type: "thinking", text: thinking });
  if (typeof msg.content === "string" && msg.content !== "") content.push({ type: "text", text: msg.content });
  const refused = typeof msg.refusal === "string" && msg.refusal !== "";
  if (refused) content.push({ type: "text", text: msg.refusal as string });
  if (Array.isArray(msg.tool_calls)) {
    msg.tool_calls.forEach((tc: unknown, i) => {
      if (!isObject(tc) || !isObject(tc.function)) throw upstreamFault(`tool_calls[${i}] has no function.`);
      content.push(toolUse(typeof tc.id === "string" ? tc.id : `call_${i}`, tc.function.name, tc.function.arguments));
    });
  } else if (isObject(msg.function_call)) {
    content.push(toolUse("call_0", msg.function_call.name, msg.function_call.arguments));
  }
  const finish = isObject(choice) ? choice.finish_reason : undefined;
  const stopReason: StopReason = refused && finish !== "content_filter" ? "refusal" : stopReasonOf(finish);
  return {
    id: typeof json.id === "string" ? json.id : chatId(undefined),
    model: typeof json.model === "string" ? json.model : "",
    content,
    stopReason,
    usage: normalizeOpenAIUsage(json.usage) ?? emptyUsage(),
  };
}

/** The ChatCompletion a client receives. */
export interface ChatCompletionBody {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: {
    index: 0;
    message: Record<string, unknown>;
    logprobs: null;
    finish_reason: FinishReason;
  }[];
  usage: WireUsage;
}

/** Markdown for an image the model produced: chat-completions messages carry text only. */
function imageMarkdown(b: Block): string {
  if (b.type !== "image") return "";
  const url = b.source.kind === "base64" ? `data:${b.source.mediaType};base64,${b.source.data}` : b.source.url;
  return `![image](${url})`;
}

/** Writes a canonical response as a ChatCompletion. */
export function encodeChatResponse(res: CanonicalResponse, _req: CanonicalRequest): ChatCompletionBody {
  let text: string | null = null;
  let reasoning: string | undefined;
  const calls: Record<string, unknown>[] = [];
  for (const b of res.content) {
    if (b.type === "text" || b.type === "image") text = (text ?? "") + (b.type === "text" ? (b as TextBlock).text : imageMarkdown(b));
    else if (b.type === "thinking") reasoning = (reasoning ?? "") + b.text;
    else if (b.type === "tool_use") {
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } });
    }
    // redacted_thinking is opaque ciphertext with nothing to show; tool_result never
    // appears in an answer.
  }
  const message: Record<string, unknown> = { role: "assistant", content: text, refusal: null };
  if (reasoning !== undefined) message.reasoning_content = reasoning;
  if (calls.length > 0) message.tool_calls = calls;
  return {
    id: chatId(res.id),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: res.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(res.stopReason) }],
    usage: wireUsage(res.usage),
  };
}
