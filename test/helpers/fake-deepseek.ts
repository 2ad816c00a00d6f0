// A fake OpenAI-compatible vendor speaking DeepSeek's real wire format: chat completions at
// /chat/completions (DeepSeek's documented path), `Authorization: Bearer` keys, answers whose
// thinking comes in `reasoning_content` (message and stream deltas), usage whose cache hits
// come as `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens` beside prompt_tokens (no
// prompt_tokens_details, as DeepSeek reported it), and DeepSeek's refusals: a tool-call turn
// sent back without its reasoning_content is a 400 (thinking mode needs it), an unknown key
// a 401 authentication_error, an account out of balance a 402. Also the same server without
// keys (`keys: []`): a local server (Ollama) at /v1/chat/completions that refuses any
// Authorization header it does not expect.

import type http from "node:http";
import { bearerKey, sendJson, sendLines, startFakeServer, type BaseReceived, type FakeServer } from "./fake-server.js";

export type DeepSeekKeyFault = "no_balance";

export interface FakeDeepSeekOptions {
  /** Keys it accepts; empty: it takes none, and refuses a request that carries one. */
  readonly keys: readonly string[];
  /** The path chat completions are served at (DeepSeek: /chat/completions). */
  readonly chatPath: string;
  /** Keys answered with that fault, read per request. */
  readonly keyFaults?: ReadonlyMap<string, DeepSeekKeyFault>;
}

export type FakeDeepSeek = FakeServer<BaseReceived>;

export const REASONING = "The user wants the weather; I should call get_weather for Paris.";
export const TOOL_CALL = { id: "call_00_ds1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" };
export const FINAL_TEXT = "It is sunny in Paris.";
/** Usage of every answer: 1000 prompt tokens, 640 of them cache hits; 200 completion, 150 reasoning. */
export const deepseekUsage = {
  prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200,
  completion_tokens_details: { reasoning_tokens: 150 },
  prompt_cache_hit_tokens: 640, prompt_cache_miss_tokens: 360,
};

export function startFakeDeepSeek(opts: FakeDeepSeekOptions): Promise<FakeDeepSeek> {
  return startFakeServer((r, res, seq) => answer(r, res, seq, opts));
}

function sendDeepSeekError(res: http.ServerResponse, status: number, message: string, type: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: "invalid_request_error" } });
}

type Msg = Record<string, unknown>;

function answer(r: BaseReceived, res: http.ServerResponse, seq: number, opts: FakeDeepSeekOptions): void {
  const key = bearerKey(r.headers);
  if (opts.keys.length === 0 ? r.headers.authorization !== undefined : !opts.keys.includes(key)) {
    sendDeepSeekError(res, 401, "Authentication Fails, Your api key is invalid", "authentication_error");
    return;
  }
  if (opts.keyFaults?.get(key) === "no_balance") {
    sendDeepSeekError(res, 402, "Insufficient Balance", "unknown_error");
    return;
  }
  if (r.method !== "POST" || r.path !== opts.chatPath) {
    sendJson(res, 404, { error: { message: "Not Found", type: "invalid_request_error", param: null, code: "invalid_request_error" } });
    return;
  }
  const messages = Array.isArray(r.body.messages) ? r.body.messages as Msg[] : [];
  // Thinking mode: every assistant tool-call message must come back with its reasoning.
  const lacking = messages.findIndex((m) => m.role === "assistant" && Array.isArray(m.tool_calls) && typeof m.reasoning_content !== "string");
  if (lacking !== -1) {
    sendDeepSeekError(res, 400, `Missing \`reasoning_content\` field in the assistant message at message index ${lacking}.`, "invalid_request_error");
    return;
  }
  // The first turn calls the tool; the turn after its result answers.
  const toolTurn = !messages.some((m) => m.role === "tool");
  const id = `ds-${seq}`;
  const base = { id, object: "chat.completion", created: 1_760_000_000, model: "deepseek-reasoner", system_fingerprint: "fp_ds" };
  if (r.body.stream !== true) {
    const message: Msg = toolTurn
      ? { role: "assistant", content: "", reasoning_content: REASONING, tool_calls: [{ index: 0, id: TOOL_CALL.id, type: "function", function: { name: TOOL_CALL.name, arguments: TOOL_CALL.arguments } }] }
      : { role: "assistant", content: FINAL_TEXT, reasoning_content: "The tool said sunny." };
    sendJson(res, 200, { ...base, choices: [{ index: 0, message, logprobs: null, finish_reason: toolTurn ? "tool_calls" : "stop" }], usage: deepseekUsage });
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
  const chunk = (delta: Msg, finish: string | null = null, usage: unknown = null) =>
    `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage })}\n\n`;
  const half = Math.floor(REASONING.length / 2);
  const lines = [
    chunk({ role: "assistant", content: null, reasoning_content: "" }),
    chunk({ content: null, reasoning_content: REASONING.slice(0, half) }),
    chunk({ content: null, reasoning_content: REASONING.slice(half) }),
    ...(toolTurn
      ? [
        chunk({ content: null, reasoning_content: null, tool_calls: [{ index: 0, id: TOOL_CALL.id, type: "function", function: { name: TOOL_CALL.name, arguments: "" } }] }),
        chunk({ content: null, reasoning_content: null, tool_calls: [{ index: 0, function: { arguments: TOOL_CALL.arguments } }] }),
        chunk({ content: null, reasoning_content: null }, "tool_calls", deepseekUsage),
      ]
      : [chunk({ content: FINAL_TEXT, reasoning_content: null }), chunk({ content: "", reasoning_content: null }, "stop", deepseekUsage)]),
    "data: [DONE]\n\n",
  ];
  sendLines(res, lines);
}
