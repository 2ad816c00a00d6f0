// A Converse answer as an Anthropic message: output.message.content's text, toolUse and
// reasoningContent blocks as text, tool_use and thinking blocks; stopReason as stop_reason;
// usage (inputTokens, outputTokens, cache reads and writes) as Anthropic's usage, which
// the usage reader bills. Converse names no message id: the request id stands in.

import { randomUUID } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Converse stop reasons by Anthropic's; another (a newer one) is end_turn. */
const STOP_REASONS: Readonly<Record<string, string>> = Object.freeze({
  end_turn: "end_turn",
  tool_use: "tool_use",
  max_tokens: "max_tokens",
  stop_sequence: "stop_sequence",
  model_context_window_exceeded: "model_context_window_exceeded",
  // A guardrail or the model's content filter stopped the answer: Anthropic's refusal.
  guardrail_intervened: "refusal",
  content_filtered: "refusal",
});

export function anthropicStopReason(reason: unknown): string {
  return (typeof reason === "string" && STOP_REASONS[reason]) || "end_turn";
}

/** A count Converse gave, or 0. */
function count(v: unknown): number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0;
}

/** Converse's usage as Anthropic's (input_tokens excludes cache reads and writes in both). */
export function anthropicUsage(usage: unknown): Json {
  const u = isObject(usage) ? usage : {};
  return {
    input_tokens: count(u.inputTokens),
    cache_creation_input_tokens: count(u.cacheWriteInputTokens),
    cache_read_input_tokens: count(u.cacheReadInputTokens),
    output_tokens: count(u.outputTokens),
  };
}

/** The id of an answer: Anthropic-like, from Bedrock's request id when it sent one. */
export function messageId(requestId: string | string[] | undefined): string {
  const id = Array.isArray(requestId) ? requestId[0] : requestId;
  return `msg_bdrk_${(id || randomUUID()).replace(/[^A-Za-z0-9]/g, "")}`;
}

/** One Converse answer block as an Anthropic one; undefined for one it has no block for
 * (citations, images an answer carries). */
function answerBlock(b: unknown): Json | undefined {
  if (!isObject(b)) return undefined;
  if (typeof b.text === "string") return { type: "text", text: b.text };
  if (isObject(b.toolUse)) {
    const t = b.toolUse;
    return { type: "tool_use", id: String(t.toolUseId ?? ""), name: String(t.name ?? ""), input: isObject(t.input) ? t.input : {} };
  }
  if (isObject(b.reasoningContent)) {
    const r = b.reasoningContent;
    if (isObject(r.reasoningText)) {
      return { type: "thinking", thinking: String(r.reasoningText.text ?? ""), signature: String(r.reasoningText.signature ?? "") };
    }
    if (typeof r.redactedContent === "string") return { type: "redacted_thinking", data: r.redactedContent };
  }
  return undefined;
}

/** The Anthropic message for a Converse answer `parsed`. */
export function anthropicMessage(parsed: Json, model: string, id: string): Json {
  const message = isObject(parsed.output) && isObject(parsed.output.message) ? parsed.output.message : {};
  const content = (Array.isArray(message.content) ? message.content : []).map(answerBlock).filter((b): b is Json => b !== undefined);
  return {
    id, type: "message", role: "assistant", model, content,
    stop_reason: anthropicStopReason(parsed.stopReason), stop_sequence: null, usage: anthropicUsage(parsed.usage),
  };
}

/** The most of a Converse answer held (a long answer is well under it); a longer one
 * errors the body. */
export const CONVERSE_ANSWER_LIMIT = 32 * 1024 * 1024;

/** Reads a Converse JSON answer whole and gives the Anthropic message in its place; a body
 * that is not a Converse answer goes on as it came, for the exchange to find broken. */
export function converseAnswerRewriter(model: string, requestId: string | string[] | undefined): Transform {
  const chunks: Buffer[] = [];
  let held = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      held += chunk.length;
      if (held > CONVERSE_ANSWER_LIMIT) return done(new Error(`a Converse answer over ${CONVERSE_ANSWER_LIMIT} bytes`));
      chunks.push(chunk);
      done();
    },
    flush(done: TransformCallback) {
      const body = Buffer.concat(chunks);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString("utf8"));
      } catch {
        return done(null, body);
      }
      if (!isObject(parsed) || !isObject(parsed.output)) return done(null, body);
      done(null, Buffer.from(JSON.stringify(anthropicMessage(parsed, model, messageId(requestId)))));
    },
  });
}
