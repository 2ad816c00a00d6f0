// Estimates for billing when exact usage is not known: the pre-deduction before a request
// (deliberately high: it must cover the worst case), the fallback charge when an
// upstream reports no usage (documented, and marked `estimated` in the usage log), and the
// input count the token-counting routes answer when no channel can count exactly.

import { isAscii } from "node:buffer";
import type { Block, CanonicalRequest } from "../protocols/canonical.js";
import type { InputEstimate } from "../protocols/count-tokens.js";
import { positiveCount, type Usage } from "../protocols/usage.js";

/**
 * Bytes per token assumed for ASCII input. Real text averages about 4 bytes per token in
 * English, and a JSON body's own structure (keys, quotes) is no input at all, so 3
 * over-estimates nearly everything, as a pre-deduction must.
 */
const RESERVE_BYTES_PER_TOKEN = 3;
/** Characters per token assumed when billing without reported usage (the common average). */
const BILL_CHARS_PER_TOKEN = 4;
/** Input tokens reserved per image (or other media part) a request names: at least what
 * any provider charges for one image at its largest (Gemini tiles a 3072-px image into
 * 16 × 258 tokens; OpenAI's patch models cap near 3,800; Anthropic ~1,600). An image sent
 * as base64 is reserved for its bytes too. */
export const IMAGE_RESERVE_TOKENS = 4200;
/** Input tokens reserved once for a request that declares tools: the system prompt a
 * provider adds for tool use (a few hundred tokens) with room to spare. */
export const TOOLS_RESERVE_TOKENS = 1024;

/** generationConfig under each spelling proto3 JSON accepts (a client may send both). */
function generationConfigs(json: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const c of [json.generationConfig, json.generation_config]) {
    if (c !== null && typeof c === "object") out.push(c as Record<string, unknown>);
  }
  return out;
}

/** The largest positive count among `values`, or undefined. */
function largest(values: readonly unknown[], floor?: number): number | undefined {
  let max = floor;
  for (const v of values) {
    const n = positiveCount(v);
    if (n !== undefined && (max === undefined || n > max)) max = n;
  }
  return max;
}

/** The output-token cap a request asked for, under any protocol's field name: the largest
 * one it sets (an upstream honours whichever it knows, so the reservation covers all). */
export function requestedMaxTokens(json: Record<string, unknown> | undefined): number | undefined {
  if (!json) return undefined;
  const configs = generationConfigs(json).flatMap((c) => [c.maxOutputTokens, c.max_output_tokens]);
  return largest([json.max_completion_tokens, json.max_tokens, json.max_output_tokens, ...configs]);
}

/** How many answers a request asks for (chat-completions `n`, generate-content
 * `candidateCount`): each may be as long as the output cap. */
export function requestedAnswers(json: Record<string, unknown> | undefined): number {
  if (!json) return 1;
  const configs = generationConfigs(json).flatMap((c) => [c.candidateCount, c.candidate_count]);
  return largest([json.n, ...configs], 1)!;
}

/** Worst-case usage of a request: its input (reserveInputTokens, or bytes/3 for a body
 * that is not JSON), plus its output cap. */
export function reserveUsage(input: number, maxOutputTokens: number): Usage {
  return { input, cacheRead: 0, cacheWrite: 0, output: maxOutputTokens, reasoning: 0 };
}

/** Input tokens reserved for a body of `bytes` bytes whose content is not read (uploads). */
export function reserveBytesTokens(bytes: number): number {
  return Math.ceil(bytes / RESERVE_BYTES_PER_TOKEN);
}

/**
 * Input tokens reserved for a JSON request body, erring high where a byte count can
 * undercount: ASCII at RESERVE_BYTES_PER_TOKEN bytes a token; every non-ASCII byte a token
 * of its own (CJK text runs 1–2 tokens a character, 3 bytes each; a byte-level tokenizer
 * never makes more tokens than bytes); IMAGE_RESERVE_TOKENS per image or media part
 * named (an image by URL is a few bytes here, up to thousands of tokens upstream); and
 * TOOLS_RESERVE_TOKENS when tools are declared. One native scan for an ASCII body, the
 * common case; a byte loop only for one with non-ASCII text.
 */
export function reserveInputTokens(body: Buffer): number {
  const nonAscii = isAscii(body) ? 0 : countNonAscii(body);
  let tokens = Math.ceil((body.length - nonAscii) / RESERVE_BYTES_PER_TOKEN) + nonAscii;
  let tools = false;
  // One scan of the body as one-byte text (no decoding): each mark as a key or a value.
  const text = body.toString("latin1");
  for (const m of text.matchAll(MARKS)) {
    const key = m[2] !== "";
    if (m[1] === "tools") tools ||= key;
    else if (key === MEDIA_KEYS.has(m[1])) tokens += IMAGE_RESERVE_TOKENS;
  }
  return tools ? tokens + TOOLS_RESERVE_TOKENS : tokens;
}

/** How each protocol names a media part: by a key (followed by ':') or by a type value;
 * and the tools key. */
const MEDIA_KEYS: ReadonlySet<string> = new Set([
  "image_url", "input_audio", // chat-completions
  "inlineData", "inline_data", "fileData", "file_data", // generate-content
]);
const MEDIA_VALUES = ["input_image", "input_file", "image", "document"]; // responses, messages
const MARKS = new RegExp(`"(${[...MEDIA_KEYS, ...MEDIA_VALUES, "tools"].join("|")})"[ \\t\\r\\n]*(:?)`, "g");

function countNonAscii(body: Buffer): number {
  let n = 0;
  for (let i = 0; i < body.length; i++) if (body[i] >= 0x80) n++;
  return n;
}

/** Usage billed when the upstream reported none: input from the request size, output from
 * the characters of generated text the gateway saw. */
export function fallbackUsage(bodyBytes: number, outputChars: number): Usage {
  return {
    input: Math.ceil(bodyBytes / BILL_CHARS_PER_TOKEN),
    cacheRead: 0,
    cacheWrite: 0,
    output: Math.ceil(outputChars / BILL_CHARS_PER_TOKEN),
    reasoning: 0,
  };
}

/**
 * Output tokens per second billed for the time the upstream was read after an answer's
 * head, when the client left before any final usage came: about the pace of today's fast
 * models (50–250 tokens a second), so hidden reasoning the client did not wait for is not
 * free. Bounded by the request's reserved output, so never more than the pre-deduction.
 */
export const CUT_OUTPUT_TOKENS_PER_SECOND = 200;

/** What is known of an answer that stopped before its final usage. */
export interface CutAnswer {
  readonly bodyBytes: number;
  /** Characters of generated text seen. */
  readonly outputChars: number;
  /** Usage the upstream reported before it stopped (a message_start's input, a running
   * usageMetadata), if any: each count it gives counts over the guess. */
  readonly reported?: Usage;
  /** When the client left: how long the upstream was read after its head. */
  readonly readMs?: number;
  /** The output tokens the request reserved for: the most the answer could produce. */
  readonly reservedOutput?: number;
}

/**
 * Usage billed for an answer that stopped before its final usage (marked `estimated`):
 * input as reported, else from the request's size; output the larger of what was
 * reported and a guess: the text seen (fallbackUsage) or, when the client left, the time
 * the upstream was read at CUT_OUTPUT_TOKENS_PER_SECOND, whichever is more, at most the
 * reserved output.
 *
 * Why time: after a client leaves, the gateway reads on for the final usage
 * (server.usage_drain_timeout); when none comes in time, the model was still generating,
 * most likely reasoning the client never sees, whose only trace is the time it took.
 * Billing the whole reservation instead would charge a client that left a stalled answer
 * for output never produced.
 */
export function cutAnswerUsage(a: CutAnswer): Usage {
  const guess = fallbackUsage(a.bodyBytes, a.outputChars);
  const r = a.reported;
  const inputReported = r !== undefined && r.input + r.cacheRead + r.cacheWrite > 0;
  // Guesses stay within the reservation; what the provider reported is billed whole.
  const capped = (tokens: number) => (a.reservedOutput === undefined ? tokens : Math.min(tokens, a.reservedOutput));
  const timed = a.readMs === undefined ? 0 : Math.ceil((a.readMs / 1000) * CUT_OUTPUT_TOKENS_PER_SECOND);
  const output = Math.max(capped(Math.max(guess.output, timed)), r?.output ?? 0);
  const usage: Usage = {
    input: inputReported ? r.input : guess.input,
    cacheRead: inputReported ? r.cacheRead : 0,
    cacheWrite: inputReported ? r.cacheWrite : 0,
    output,
    reasoning: Math.min(r?.reasoning ?? 0, output),
  };
  if (r !== undefined) reportedParts(usage, r, inputReported);
  return usage;
}

/** The parts a cut answer reported, kept where its counts are: the input's with the
 * reported input, the output's (never more than the output billed, which is at least the
 * reported), the service tier that served it. */
function reportedParts(usage: Usage, r: Usage, inputReported: boolean): void {
  if (inputReported) {
    if (r.audioInput) usage.audioInput = r.audioInput;
    if (r.imageInput) usage.imageInput = r.imageInput;
    if (r.audioCacheRead) usage.audioCacheRead = r.audioCacheRead;
    if (r.cacheWrite1h) usage.cacheWrite1h = r.cacheWrite1h;
  }
  if (r.audioOutput) usage.audioOutput = r.audioOutput;
  if (r.imageOutput) usage.imageOutput = r.imageOutput;
  if (r.serviceTier !== undefined) usage.serviceTier = r.serviceTier;
}

/** Tokens counted per image, whatever its size: about what Anthropic charges for a
 * full-size image (~1.15 megapixels); OpenAI and Gemini charge less, so counts err high. */
export const IMAGE_TOKENS = 1600;
/** Tokens added per message for its role and turn framing. */
export const MESSAGE_OVERHEAD_TOKENS = 3;

/**
 * Input tokens of a canonical request, estimated without a tokenizer: its characters of
 * text (system, message text and thinking, tool calls as name and JSON arguments, tool
 * results, tool names, descriptions and JSON schemas) at BILL_CHARS_PER_TOKEN characters
 * a token, plus MESSAGE_OVERHEAD_TOKENS per message, plus IMAGE_TOKENS per image.
 */
export function estimateInputTokens(request: CanonicalRequest): InputEstimate {
  let chars = 0;
  let images = 0;
  const add = (blocks: readonly Block[]) => {
    for (const b of blocks) {
      switch (b.type) {
        case "text": chars += b.text.length; break;
        case "thinking": chars += b.text.length; break;
        case "image": images++; break;
        case "tool_use": chars += b.name.length + JSON.stringify(b.input).length; break;
        case "tool_result": add(b.content); break;
        case "redacted_thinking": break; // encrypted: its length says nothing of its tokens
      }
    }
  };
  add(request.system);
  for (const m of request.messages) add(m.content);
  for (const t of request.tools ?? []) chars += t.name.length + (t.description?.length ?? 0) + JSON.stringify(t.parameters).length;
  return {
    text: Math.ceil(chars / BILL_CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS * request.messages.length,
    image: IMAGE_TOKENS * images,
  };
}
