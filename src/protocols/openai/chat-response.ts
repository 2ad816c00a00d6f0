// Complete (non-stream) chat-completions answers: read a channel's ChatCompletion into the
// canonical response, and write a canonical response as the ChatCompletion a client expects.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Block, CanonicalRequest, CanonicalResponse, StopReason } from "../canonical.js";
import { emptyUsage } from "../usage.js";
import { chatId, finishReasonOf, isObject, parseArguments, stopReasonOf, wireUsage, type FinishReason, type WireUsage } from "./chat-common.js";
import { chatImage, imageBlocksOf, type ChatImage } from "./chat-images.js";
import { chatAnswerUsage } from "./usage.js";

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
  content.push(...imageBlocksOf(msg.images));
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
    usage: chatAnswerUsage(json) ?? emptyUsage(),
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
  /** The service tier that served the answer, when the upstream named one. */
  service_tier?: string;
}

/** Writes a canonical response as a ChatCompletion (for a client of legacy `functions`, its
 * first call as `function_call`: the only call that shape can carry). */
export function encodeChatResponse(res: CanonicalResponse, req: CanonicalRequest): ChatCompletionBody {
  let text: string | null = null;
  let reasoning = "";
  const images: ChatImage[] = [];
  const calls: Record<string, unknown>[] = [];
  for (const b of res.content) {
    if (b.type === "text") text = (text ?? "") + b.text;
    else if (b.type === "image") images.push(chatImage(b.source));
    else if (b.type === "thinking") reasoning += b.text;
    else if (b.type === "tool_use") {
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } });
    }
    // redacted_thinking is opaque ciphertext with nothing to show, and so is a thinking
    // block's signature; tool_result never appears in an answer.
  }
  const message: Record<string, unknown> = { role: "assistant", content: text, refusal: null };
  // reasoning_content: DeepSeek's field, which LiteLLM and new-api emit too and most chat
  // clients read (OpenRouter's `reasoning` is read by fewer). Left out when there is none.
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (images.length > 0) message.images = images;
  let finish = finishReasonOf(res.stopReason);
  if (calls.length > 0 && req.legacyFunctions === true) {
    message.function_call = calls[0].function;
    if (finish === "tool_calls") finish = "function_call";
  } else if (calls.length > 0) {
    message.tool_calls = calls;
  }
  const body: ChatCompletionBody = {
    id: chatId(res.id),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: res.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: wireUsage(res.usage),
  };
  if (res.usage.serviceTier !== undefined) body.service_tier = res.usage.serviceTier;
  return body;
}
