// A fake Anthropic Messages upstream speaking the real wire format (Message objects, named
// SSE events, Anthropic error bodies; text blocks without `citations`, as the real API and the
// AI SDK's parser have them). Sibling of fake-openai.ts: tests drive the gateway
// against it; a script per request makes it fail, stall, think, call tools or stream on cue.

import type http from "node:http";
import { anthropicProvider } from "../../src/providers/anthropic/manifest.js";
import {
  bearerKey, sendJson, sendLines, splitText, startFakeServer, type BaseReceived, type FakeServer, type KeyFaultScript,
} from "./fake-server.js";

/** What the fake received, for assertions. */
export interface Received extends BaseReceived {
  /** The `anthropic-beta` header split on commas (trimmed); empty when absent. */
  readonly betas: readonly string[];
}

/** Anthropic's stop reasons the fake can report for text replies. */
export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "pause_turn" | "refusal";

/** How to answer one request. Default: a normal message, streamed if `body.stream` is true. */
export type Script =
  | { readonly kind: "ok"; readonly text?: string; readonly chunks?: number; readonly chunkDelayMs?: number; readonly stopReason?: StopReason }
  /** A tool_use block (optionally after a text block); stop_reason `tool_use`. Streamed as input_json_delta fragments. */
  | { readonly kind: "tool_use"; readonly name: string; readonly input: Record<string, unknown>; readonly text?: string; readonly id?: string }
  /** A thinking block (with signature) followed by a text block. */
  | { readonly kind: "thinking"; readonly thinking?: string; readonly text?: string; readonly signature?: string }
  /** Usage with cache_creation_input_tokens / cache_read_input_tokens set (see `anthropicFakeCacheUsage`). */
  | { readonly kind: "cache"; readonly text?: string }
  /**
   * An Anthropic error body. `type` defaults from the status (529 → overloaded_error, …).
   * `inStream`: for stream requests, answer 200 and send `event: error` after message_start instead.
   */
  | { readonly kind: "error"; readonly status: number; readonly type?: string; readonly message?: string; readonly headers?: Record<string, string>; readonly inStream?: boolean }
  /** As long as the request allows, as a model that always writes to its limit: output
   * tokens = max_tokens; input tokens = `input` + `perImage` per image block. Streamed:
   * message_start (with the input usage) and the start of a thinking block at once, then
   * nothing until `stallMs` passes (never, when absent), then the rest. */
  | { readonly kind: "metered"; readonly input: number; readonly perImage?: number; readonly stallMs?: number }
  | { readonly kind: "hang" }
  | { readonly kind: "destroy" };

export interface FakeAnthropicOptions {
  /** Keys the fake accepts (`x-api-key` or `Authorization: Bearer`); others get Anthropic's 401. Empty: any key. */
  readonly keys?: readonly string[];
  /** Keys answered with Anthropic's error for that fault, read per request (a test may change it). */
  readonly keyFaults?: ReadonlyMap<string, KeyFaultScript>;
  /** Name echoed in replies, to tell channels apart. */
  readonly name?: string;
  /** Port to listen on; default 0 (a free one). */
  readonly port?: number;
  /** Chooses the answer per request; default `{kind:"ok"}`. */
  readonly script?: (req: Received) => Script;
  /**
   * Betas this "subscription" lacks: a request whose `anthropic-beta` names one gets a 400
   * invalid_request_error (for `context-1m-2025-08-07`, Anthropic's long-context message).
   */
  readonly refuseBetas?: readonly string[];
  /**
   * Under `anthropic-version: 2026-10-21` the real API rejects `temperature`, `top_p` and
   * `top_k` with a 400; the fake does too unless this is set. (2023-06-01 accepts them.)
   */
  readonly allowSamplingParams?: boolean;
  /**
   * Reject what the real API rejects while thinking is on (`thinking.type` enabled or
   * adaptive): `temperature` other than 1, any `top_k`, `top_p` below 0.95. Off by default
   * (older suites send them).
   */
  readonly thinkingSamplingRules?: boolean;
  /**
   * Refuse a body with a top-level field the API does not know, as the real API does: 400
   * invalid_request_error "<field>: Extra inputs are not permitted", quoting the field's
   * name (whatever it says). Off by default (older suites send extra fields).
   */
  readonly rejectUnknownFields?: boolean;
  /**
   * Refuse a thinking block whose signature Anthropic did not issue, as the real API does:
   * 400 invalid_request_error "messages.N.content.M: Invalid `signature` in `thinking` block".
   * The fake's own signatures (like Anthropic's, protobuf in base64) start with "E"; anything
   * else (another provider's, or the gateway's seal) is foreign. Off by default.
   */
  readonly verifySignatures?: boolean;
}

export type FakeAnthropic = FakeServer<Received>;

/** Usage reported by every reply except `cache` (stream: input in message_start, output in message_delta). */
export const anthropicFakeUsage = {
  input_tokens: 12, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
} as const;

/** Usage reported by the `cache` script. */
export const anthropicFakeCacheUsage = {
  input_tokens: 12, output_tokens: 5, cache_creation_input_tokens: 7, cache_read_input_tokens: 30,
} as const;

/** What the fake's `/v1/messages/count_tokens` answers (`input_tokens`), whatever it is sent. */
export const ANTHROPIC_FAKE_COUNT = 2718;

/** The long-context beta the fake can refuse, and the message it refuses with. */
export const LONG_CONTEXT_BETA = "context-1m-2025-08-07";
export const LONG_CONTEXT_REFUSAL = "The long context beta is not yet available for this subscription.";

/** Starts the fake on 127.0.0.1 with a free port. */
export function startFakeAnthropic(opts: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  return startFakeServer((r, res, seq) => answer(r, res, opts, seq), {
    port: opts.port,
    describe: (base): Received => {
      const beta = base.headers["anthropic-beta"];
      const betas = (Array.isArray(beta) ? beta.join(",") : beta ?? "").split(",").map((s) => s.trim()).filter(Boolean);
      return { ...base, betas };
    },
  });
}

/** The key presented: `x-api-key`, else `Authorization: Bearer …` (SDK ≥1.0 / API 2026-10-21 sends the latter). */
export function apiKeyOf(r: Pick<Received, "headers">): string {
  const x = r.headers["x-api-key"];
  if (typeof x === "string" && x !== "") return x;
  return bearerKey(r.headers);
}

/** Whether a request is the gateway's own key probe (providers/anthropic.ts), not a client's. */
export function isKeyProbe(r: BaseReceived): boolean {
  const probe = anthropicProvider.keyFaults.probe!.request(String(r.body.model));
  return r.path.split("?")[0] === probe.path && r.raw.toString("utf8") === probe.body;
}

/** The top-level fields of a Messages request and of a token count. */
const MESSAGES_FIELDS = new Set([
  "model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream", "temperature", "top_p", "top_k",
  "tools", "tool_choice", "thinking", "service_tier", "container", "mcp_servers", "context_management",
]);
const COUNT_FIELDS = new Set(["model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers", "context_management"]);

const API_VERSION_2026 = "2026-10-21";
const SAMPLING_PARAMS = ["temperature", "top_p", "top_k"] as const;

const pad = (n: number) => String(n).padStart(6, "0");
const requestId = (seq: number) => `req_011Fake${pad(seq)}`;

function errorType(status: number): string {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 402: return "billing_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 504: return "timeout_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

function errorBody(type: string, message: string, seq: number): object {
  return { type: "error", error: { type, message }, request_id: requestId(seq) };
}

function anthropicError(res: http.ServerResponse, seq: number, status: number, type: string, message: string, headers?: Record<string, string>) {
  sendJson(res, status, errorBody(type, message, seq), { "request-id": requestId(seq), ...headers });
}

/** Anthropic's answers for a key at fault, as the API sends them. */
function anthropicKeyFault(res: http.ServerResponse, seq: number, fault: KeyFaultScript): void {
  switch (fault) {
    case "invalid_key": return anthropicError(res, seq, 401, "authentication_error", "invalid x-api-key");
    case "forbidden": return anthropicError(res, seq, 403, "permission_error", "Your API key does not have permission to use the specified resource.");
    case "no_credit":
      return anthropicError(res, seq, 400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.");
    case "rate_limited":
      return anthropicError(res, seq, 429, "rate_limit_error", "This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.", { "retry-after": "20" });
  }
}

function answer(r: Received, res: http.ServerResponse, opts: FakeAnthropicOptions, seq: number): void {
  const path = r.path.split("?")[0];
  const count = path === "/v1/messages/count_tokens";
  if ((path !== "/v1/messages" && !count) || r.method !== "POST") {
    return anthropicError(res, seq, 404, "not_found_error", "Not found");
  }
  const fault = opts.keyFaults?.get(apiKeyOf(r));
  if (fault) return anthropicKeyFault(res, seq, fault);
  if (opts.keys && opts.keys.length > 0) {
    const key = apiKeyOf(r);
    if (key === "") return anthropicError(res, seq, 401, "authentication_error", "x-api-key header is required");
    if (!opts.keys.includes(key)) return anthropicError(res, seq, 401, "authentication_error", "invalid x-api-key");
  }
  const version = r.headers["anthropic-version"];
  if (!version) {
    return anthropicError(res, seq, 400, "invalid_request_error", "anthropic-version: header is required");
  }
  const unknown = opts.rejectUnknownFields ? Object.keys(r.body).find((f) => !(count ? COUNT_FIELDS : MESSAGES_FIELDS).has(f)) : undefined;
  if (unknown !== undefined) return anthropicError(res, seq, 400, "invalid_request_error", `${unknown}: Extra inputs are not permitted`);
  // API version 2026-10-21 removed the sampling parameters: sending any is a 400.
  const sampling = SAMPLING_PARAMS.find((p) => r.body[p] !== undefined);
  if (version === API_VERSION_2026 && sampling !== undefined && !opts.allowSamplingParams) {
    return anthropicError(res, seq, 400, "invalid_request_error",
      `${sampling}: This parameter is not supported in API version ${API_VERSION_2026}.`);
  }
  const badTool = toolTypeRefusal(r.body.tools);
  if (badTool !== undefined) return anthropicError(res, seq, 400, "invalid_request_error", badTool);
  const forged = opts.verifySignatures ? foreignSignature(r.body) : undefined;
  if (forged !== undefined) return anthropicError(res, seq, 400, "invalid_request_error", forged);
  const thinkingConflict = opts.thinkingSamplingRules ? samplingWhileThinking(r.body) : undefined;
  if (thinkingConflict !== undefined) return anthropicError(res, seq, 400, "invalid_request_error", thinkingConflict);
  const unpaired = unpairedToolResult(r.body);
  if (unpaired !== undefined) return anthropicError(res, seq, 400, "invalid_request_error", unpaired);
  const refused = r.betas.find((b) => opts.refuseBetas?.includes(b));
  if (refused !== undefined) {
    return anthropicError(res, seq, 400, "invalid_request_error",
      refused === LONG_CONTEXT_BETA ? LONG_CONTEXT_REFUSAL : `Unexpected value(s) \`${refused}\` for the \`anthropic-beta\` header.`);
  }
  if (!count) {
    const contentFault = cacheControlFault(r.body) ?? assistantImageFault(r.body);
    if (contentFault !== undefined) return anthropicError(res, seq, 400, "invalid_request_error", contentFault);
  }
  const script = opts.script?.(r) ?? { kind: "ok" };
  switch (script.kind) {
    case "hang": return;
    case "destroy": res.socket?.destroy(); return;
    case "error":
      if (!(script.inStream && r.body.stream === true)) {
        return anthropicError(res, seq, script.status, script.type ?? errorType(script.status),
          script.message ?? (script.status === 529 ? "Overloaded" : `fake error ${script.status}`), script.headers);
      }
      return streamAnswer(r, res, script, opts, seq);
    case "metered":
      if (count) return sendJson(res, 200, { input_tokens: ANTHROPIC_FAKE_COUNT }, headersFor(seq, "application/json"));
      return meteredAnswer(r, res, script, seq);
    default:
      // Anthropic's MessageTokensCount; every other script answers the count too.
      if (count) return sendJson(res, 200, { input_tokens: ANTHROPIC_FAKE_COUNT }, headersFor(seq, "application/json"));
      return r.body.stream === true ? streamAnswer(r, res, script, opts, seq) : jsonAnswer(r, res, script, opts, seq);
  }
}

/** Why the API refuses a tool_result: its tool_use_id names no tool_use of the assistant turn
 * right before it (the API's own words); undefined when every result is paired. */
function unpairedToolResult(body: Record<string, unknown>): string | undefined {
  const messages = (body.messages as { role?: string; content?: unknown }[] | undefined) ?? [];
  const blocksOf = (m: { content?: unknown } | undefined) =>
    (Array.isArray(m?.content) ? m.content : []) as { type?: string; id?: unknown; tool_use_id?: unknown }[];
  for (const [i, m] of messages.entries()) {
    const ids = new Set(blocksOf(messages[i - 1]).filter((b) => b?.type === "tool_use").map((b) => b.id));
    for (const [j, b] of blocksOf(m).entries()) {
      if (b?.type !== "tool_result" || ids.has(b.tool_use_id)) continue;
      return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(b.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return undefined;
}

/** Anthropic's refusal of the first thinking block it did not sign; undefined when all are its own. */
function foreignSignature(body: Record<string, unknown>): string | undefined {
  const messages = Array.isArray(body.messages) ? body.messages as { content?: unknown }[] : [];
  for (const [i, m] of messages.entries()) {
    if (!Array.isArray(m?.content)) continue;
    for (const [j, b] of (m.content as { type?: unknown; signature?: unknown }[]).entries()) {
      if (b?.type !== "thinking") continue;
      if (typeof b.signature !== "string" || !/^E[A-Za-z0-9+/]+=*$/.test(b.signature)) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
    }
  }
  return undefined;
}

/** Tool types the real API knows: custom tools (no type, or "custom") and its versioned
 * server and Anthropic-defined tools. */
const ANTHROPIC_TOOL_TYPE = /^(custom|(web_search|web_fetch|code_execution|bash|text_editor|computer|memory|tool_search_tool_(regex|bm25))_\d{8})$/;

/** The API's 400 for a tool whose `type` it does not know (an OpenAI or Gemini tool sent as
 * is), or a custom tool without input_schema; undefined when the tools are valid. */
function toolTypeRefusal(tools: unknown): string | undefined {
  if (!Array.isArray(tools)) return undefined;
  for (const [i, t] of tools.entries()) {
    const type = (t as { type?: unknown })?.type;
    if (type !== undefined && (typeof type !== "string" || !ANTHROPIC_TOOL_TYPE.test(type))) {
      return `tools.${i}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags`;
    }
    if ((type === undefined || type === "custom") && typeof (t as { input_schema?: unknown })?.input_schema !== "object") {
      return `tools.${i}.custom.input_schema: Field required`;
    }
  }
  return undefined;
}

/** Every cache_control in a body, in prompt order (tools, system, messages, tool results' content). */
export function cacheControlsOf(body: Record<string, unknown>): { type?: unknown; ttl?: unknown }[] {
  const out: { type?: unknown; ttl?: unknown }[] = [];
  const visit = (b: unknown): void => {
    if (typeof b !== "object" || b === null) return;
    const o = b as { content?: unknown; cache_control?: unknown };
    if (Array.isArray(o.content)) o.content.forEach(visit);
    if (typeof o.cache_control === "object" && o.cache_control !== null) out.push(o.cache_control as { type?: unknown; ttl?: unknown });
  };
  if (Array.isArray(body.tools)) body.tools.forEach(visit);
  if (Array.isArray(body.system)) body.system.forEach(visit);
  for (const m of (body.messages as { content?: unknown }[] | undefined) ?? []) if (Array.isArray(m?.content)) m.content.forEach(visit);
  return out;
}

/** The API's rules on cache breakpoints: at most four, each ephemeral with a 5m or 1h ttl. */
function cacheControlFault(body: Record<string, unknown>): string | undefined {
  const controls = cacheControlsOf(body);
  if (controls.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${controls.length}.`;
  const bad = controls.find((c) => c.type !== "ephemeral" || (c.ttl !== undefined && c.ttl !== "5m" && c.ttl !== "1h"));
  return bad ? "cache_control: Input tag does not match the expected tags 'ephemeral' with ttl '5m' or '1h'" : undefined;
}

/** The API takes images from the user only (an image model's earlier picture cannot be sent back). */
function assistantImageFault(body: Record<string, unknown>): string | undefined {
  const messages = (body.messages as { role?: unknown; content?: unknown }[] | undefined) ?? [];
  const at = messages.findIndex((m) => m?.role === "assistant" && Array.isArray(m.content)
    && m.content.some((b: { type?: unknown }) => b?.type === "image"));
  return at < 0 ? undefined : `messages.${at}.content: 'image' blocks are not permitted within assistant turns.`;
}

/** Why the API refuses `body`'s sampling parameters alongside thinking; undefined when it does not. */
function samplingWhileThinking(body: Record<string, unknown>): string | undefined {
  const type = (body.thinking as { type?: unknown } | undefined)?.type;
  if (type !== "enabled" && type !== "adaptive") return undefined;
  if (body.temperature !== undefined && body.temperature !== 1) return "`temperature` may only be set to 1 when thinking is enabled.";
  if (body.top_k !== undefined) return "`top_k` is not supported when thinking is enabled.";
  if (typeof body.top_p === "number" && body.top_p < 0.95) return "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.";
  // With thinking enabled (not adaptive, where the model may not think at all), the turn
  // whose tool calls the last user turn answers must start with its thinking.
  if (type !== "enabled") return undefined;
  const messages = (body.messages as { role?: string; content?: unknown }[] | undefined) ?? [];
  const answers = (m: { content?: unknown } | undefined) => Array.isArray(m?.content) && m.content.some((b: { type?: string }) => b?.type === "tool_result");
  const turn = messages.at(-2);
  if (answers(messages.at(-1)) && turn?.role === "assistant" && Array.isArray(turn.content)) {
    const first = (turn.content[0] as { type?: string } | undefined)?.type;
    if (first !== "thinking" && first !== "redacted_thinking") {
      return `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
    }
  }
  return undefined;
}

function lastUserText(r: Received): string {
  const messages = (r.body.messages as { content?: unknown }[] | undefined) ?? [];
  const last = messages[messages.length - 1]?.content;
  if (typeof last === "string") return last;
  if (Array.isArray(last)) {
    const texts = last.filter((b): b is { type: "text"; text: string } =>
      typeof b === "object" && b !== null && (b as { type?: unknown }).type === "text" && typeof (b as { text?: unknown }).text === "string");
    if (texts.length > 0) return texts.map((b) => b.text).join("");
  }
  return "hello";
}

function replyText(r: Received, script: Script, opts: FakeAnthropicOptions): string {
  if ((script.kind === "ok" || script.kind === "cache" || script.kind === "thinking") && script.text !== undefined) return script.text;
  return `${opts.name ?? "fake"} says: ${lastUserText(r)}`;
}

type Block =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

function blocks(r: Received, script: Script, opts: FakeAnthropicOptions): Block[] {
  switch (script.kind) {
    case "tool_use": {
      const tool: Block = { type: "tool_use", id: script.id ?? "toolu_01FakeToolUse0001", name: script.name, input: script.input };
      return script.text !== undefined ? [{ type: "text", text: script.text }, tool] : [tool];
    }
    case "thinking":
      return [
        { type: "thinking", thinking: script.thinking ?? "Let me think about this step by step.", signature: script.signature ?? "EqQBCkYIBRgCKkDfakeSignature==" },
        { type: "text", text: replyText(r, script, opts) },
      ];
    default:
      return [{ type: "text", text: replyText(r, script, opts) }];
  }
}

function stopReason(script: Script): string {
  if (script.kind === "tool_use") return "tool_use";
  if (script.kind === "ok" && script.stopReason) return script.stopReason;
  return "end_turn";
}

/** The usage of an answer: a request with cache breakpoints (or the `cache` script) reports
 * cache writes and reads, as the API does. */
function usageFor(r: Received, script: Script, outputTokens: number) {
  const u = script.kind === "cache" || cacheControlsOf(r.body).length > 0 ? anthropicFakeCacheUsage : anthropicFakeUsage;
  return {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    cache_creation: cacheControlsOf(r.body).some((c) => c.ttl === "1h")
      ? { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: u.cache_creation_input_tokens }
      : { ephemeral_5m_input_tokens: u.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: "standard",
  };
}

const headersFor = (seq: number, contentType: string) => ({
  "content-type": contentType, "request-id": requestId(seq), "anthropic-organization-id": "org-secret",
});

function messageBase(r: Received, seq: number) {
  return { id: `msg_01Fake${pad(seq)}`, type: "message", role: "assistant", model: String(r.body.model) };
}

function jsonAnswer(r: Received, res: http.ServerResponse, script: Script, opts: FakeAnthropicOptions, seq: number): void {
  sendJson(res, 200, {
    ...messageBase(r, seq), content: blocks(r, script, opts),
    stop_reason: stopReason(script), stop_sequence: null, usage: usageFor(r, script, anthropicFakeUsage.output_tokens),
  }, headersFor(seq, "application/json"));
}

function streamAnswer(r: Received, res: http.ServerResponse, script: Script, opts: FakeAnthropicOptions, seq: number): void {
  const events: [string, object][] = [];
  const ev = (name: string, data: object) => events.push([name, { type: name, ...data }]);
  ev("message_start", { message: { ...messageBase(r, seq), content: [], stop_reason: null, stop_sequence: null, usage: usageFor(r, script, 1) } });
  if (script.kind === "error") {
    ev("ping", {});
    events.push(["error", errorBody(script.type ?? errorType(script.status), script.message ?? (script.status === 529 ? "Overloaded" : `fake error ${script.status}`), seq)]);
  } else {
    ev("ping", {});
    blocks(r, script, opts).forEach((b, index) => {
      switch (b.type) {
        case "text":
          ev("content_block_start", { index, content_block: { type: "text", text: "" } });
          for (const piece of splitText(b.text, script.kind === "ok" && script.chunks ? script.chunks : 4)) {
            ev("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
          }
          break;
        case "thinking":
          ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
          for (const piece of splitText(b.thinking, 2)) ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } });
          ev("content_block_delta", { index, delta: { type: "signature_delta", signature: b.signature } });
          break;
        case "tool_use": {
          ev("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
          const json = JSON.stringify(b.input);
          ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
          for (const piece of splitText(json, Math.max(2, Math.min(3, json.length)))) {
            ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } });
          }
          break;
        }
      }
      ev("content_block_stop", { index });
    });
    ev("message_delta", { delta: { stop_reason: stopReason(script), stop_sequence: null }, usage: { output_tokens: anthropicFakeUsage.output_tokens } });
    ev("message_stop", {});
  }
  res.writeHead(200, { ...headersFor(seq, "text/event-stream; charset=utf-8"), "cache-control": "no-cache" });
  const lines = events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  sendLines(res, lines, script.kind === "ok" ? script.chunkDelayMs ?? 0 : 0);
}

/** The `metered` script: usage as long as max_tokens allows, streamed with a stall. */
function meteredAnswer(r: Received, res: http.ServerResponse, script: Script & { kind: "metered" }, seq: number): void {
  const images = (JSON.stringify(r.body.messages ?? []).match(/"type":"image"/g) ?? []).length;
  const input = script.input + (script.perImage ?? 0) * images;
  const output = Number(r.body.max_tokens);
  const usage = (out: number) => ({ input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: out });
  const text = "As long as allowed.";
  if (r.body.stream !== true) {
    return sendJson(res, 200, { ...messageBase(r, seq), content: [{ type: "text", text }], stop_reason: "max_tokens", stop_sequence: null,
      usage: usage(output) }, headersFor(seq, "application/json"));
  }
  const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  res.writeHead(200, { ...headersFor(seq, "text/event-stream; charset=utf-8"), "cache-control": "no-cache" });
  res.write(ev("message_start", { message: { ...messageBase(r, seq), content: [], stop_reason: null, stop_sequence: null, usage: usage(1) } })
    + ev("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } })
    + ev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "Let me think." } }));
  if (script.stallMs === undefined) return; // the connection held open, silent
  const rest = () => {
    if (res.destroyed) return;
    res.end(ev("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "c2ln" } })
      + ev("content_block_stop", { index: 0 })
      + ev("content_block_start", { index: 1, content_block: { type: "text", text: "" } })
      + ev("content_block_delta", { index: 1, delta: { type: "text_delta", text } })
      + ev("content_block_stop", { index: 1 })
      + ev("message_delta", { delta: { stop_reason: "max_tokens", stop_sequence: null }, usage: { output_tokens: output } })
      + ev("message_stop", {}));
  };
  setTimeout(rest, script.stallMs);
}
