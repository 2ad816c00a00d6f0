// The hub every protocol converts through: one request, response and stream-event shape.
// Each wire protocol has an inbound adapter (client speaks it) and an outbound adapter
// (channel speaks it); conversion is inbound.decode → canonical → outbound.encode and back.
// Field meanings follow the richest protocol (messages) so nothing is lost on the way.

import type { Usage } from "./usage.js";

/** A hint to cache the prompt up to and including this block (Anthropic cache_control). */
export interface CacheHint {
  readonly type: "ephemeral";
  readonly ttl?: string;
}

export type ImageSource =
  | { readonly kind: "base64"; readonly mediaType: string; readonly data: string }
  | { readonly kind: "url"; readonly url: string };

export interface TextBlock { readonly type: "text"; readonly text: string; readonly cache?: CacheHint }
export interface ImageBlock { readonly type: "image"; readonly source: ImageSource; readonly cache?: CacheHint }
/** A call the model made; `input` is the parsed JSON arguments (an object). */
export interface ToolUseBlock {
  readonly type: "tool_use";
  readonly id: string;
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly cache?: CacheHint;
}
/** The result of a tool call, sent back by the client. `name` is the called tool's name
 * (Gemini needs it; decoders fill it from the matching tool_use when they can). */
export interface ToolResultBlock {
  readonly type: "tool_result";
  readonly toolUseId: string;
  readonly name?: string;
  readonly content: readonly (TextBlock | ImageBlock)[];
  readonly isError?: boolean;
  readonly cache?: CacheHint;
}
/** Model reasoning. `signature` round-trips Anthropic's integrity signature. */
export interface ThinkingBlock { readonly type: "thinking"; readonly text: string; readonly signature?: string }
export interface RedactedThinkingBlock { readonly type: "redacted_thinking"; readonly data: string }

export type Block = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock;

export interface Message {
  /** "system": an instruction the client put partway through the conversation (leading ones
   * are CanonicalRequest.system), text blocks only. Encoders of protocols without such a
   * role carry it as a marked note in a user turn (system-note.ts). */
  readonly role: "user" | "assistant" | "system";
  readonly content: readonly Block[];
}

export interface Tool {
  readonly name: string;
  readonly description?: string;
  /** JSON Schema of the arguments (an object schema). */
  readonly parameters: Record<string, unknown>;
  readonly cache?: CacheHint;
  /** The group a responses client declared the tool in (a `namespace` tool): offered by
   * its own name, and given back on its calls. Other protocols ignore it. */
  readonly namespace?: string;
}

/** A tool the provider runs itself (a hosted or server tool), offered by the client. Only
 * web search exists at every provider; the decoders drop (and name) the others. */
export interface HostedTool {
  readonly kind: "web_search";
}

export type ToolChoice =
  | { readonly type: "auto" }
  | { readonly type: "none" }
  /** The model must call some tool. */
  | { readonly type: "any" }
  | { readonly type: "tool"; readonly name: string };

export type ReasoningEffort = "minimal" | "low" | "medium" | "high";

/** How much the model may think: an effort level, a token budget, or both. */
export interface Reasoning {
  readonly effort?: ReasoningEffort;
  readonly budgetTokens?: number;
}

export interface CanonicalRequest {
  /** The model as the client named it (adapters write the upstream name themselves). */
  readonly model: string;
  readonly system: readonly TextBlock[];
  readonly messages: readonly Message[];
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly topK?: number;
  readonly stop?: readonly string[];
  readonly frequencyPenalty?: number;
  readonly presencePenalty?: number;
  readonly seed?: number;
  /** Number of alternative answers (OpenAI n, Gemini candidateCount). */
  readonly candidates?: number;
  readonly tools?: readonly Tool[];
  readonly toolChoice?: ToolChoice;
  /** Hosted tools offered beside `tools` (field-policy.ts maps or drops them per target). */
  readonly hostedTools?: readonly HostedTool[];
  readonly parallelToolCalls?: boolean;
  /** The chat-completions client declared legacy `functions`: its answer carries the call as
   * `function_call` (one call: the legacy shape has room for no more). */
  readonly legacyFunctions?: boolean;
  readonly reasoning?: Reasoning;
  readonly stream: boolean;
  /** The client asked for usage in the stream (chat-completions include_usage). */
  readonly streamUsage?: boolean;
  /** End-user identifier for abuse tracking (OpenAI `user`, Anthropic metadata.user_id). */
  readonly user?: string;
  /** JSON-mode/structured output: a JSON Schema, or `{}` for "any JSON object". */
  readonly responseFormat?: { readonly schema?: Record<string, unknown>; readonly name?: string };
  /** Client fields a decoder left out because they only steer the client's own provider
   * (Anthropic context_management, Gemini safetySettings…), named as the client sent them:
   * reported in x-gateway-dropped-fields and the usage log, refused under conversion: strict. */
  readonly dropped?: readonly string[];
  /** The client's own names for a target feature (field-policy.ts TargetField) whose protocol
   * spells it several ways (chat-completions: `cache_control` or `prompt_cache_breakpoint`),
   * so a target that drops it names what the client actually sent. */
  readonly spelledAs?: Readonly<Record<string, readonly string[]>>;
}

export type StopReason =
  | "end_turn"
  | "max_tokens"
  | "stop_sequence"
  | "tool_use"
  /** Blocked by a safety or content filter. */
  | "content_filter"
  | "refusal"
  | "pause_turn"
  | "error";

export interface CanonicalResponse {
  readonly id: string;
  /** The model name to show the client (the gateway sets it to the client's name). */
  readonly model: string;
  readonly content: readonly Block[];
  readonly stopReason: StopReason;
  readonly stopSequence?: string;
  readonly usage: Usage;
}

/** Kinds of block a stream opens. Tool input arrives as JSON text deltas. An image (what an
 * image model such as Gemini's returns) arrives whole in its block_start: no protocol streams
 * an image in pieces, so the block takes no deltas and closes right after it opens. */
export type StreamBlockStart =
  | { readonly type: "text" }
  | { readonly type: "thinking" }
  | { readonly type: "redacted_thinking"; readonly data: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string }
  | { readonly type: "image"; readonly source: ImageSource };

/**
 * The canonical stream. Contract (checked in tests): exactly one message_start first;
 * every delta belongs to an open block (block_start before, block_stop after, indexes
 * counting from 0 in order); exactly one message_stop or one error last.
 */
export type CanonicalEvent =
  | { readonly type: "message_start"; readonly id: string; readonly model: string; readonly usage?: Usage }
  | { readonly type: "block_start"; readonly index: number; readonly block: StreamBlockStart }
  | { readonly type: "text_delta"; readonly index: number; readonly text: string }
  | { readonly type: "thinking_delta"; readonly index: number; readonly text: string }
  | { readonly type: "signature_delta"; readonly index: number; readonly signature: string }
  | { readonly type: "tool_input_delta"; readonly index: number; readonly partialJson: string }
  | { readonly type: "block_stop"; readonly index: number }
  | { readonly type: "message_stop"; readonly stopReason: StopReason; readonly stopSequence?: string; readonly usage: Usage }
  /** `code`: the gateway's catalogue code when the gateway ended the stream (default
   * upstream_error: the upstream's own failure). */
  | { readonly type: "error"; readonly status: number; readonly message: string; readonly code?: string };
