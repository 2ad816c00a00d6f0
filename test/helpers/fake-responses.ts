// A tiny fake OpenAI Responses API upstream (`POST /v1/responses`) speaking the real wire
// format: a Response object, or the SSE stream of typed events (response.created, …,
// response.output_text.delta, …, response.completed with usage). Sibling of fake-openai.ts,
// which serves chat completions only.

import type http from "node:http";
import {
  bearerKey, sendJson, sendLines, sendOpenAIError, startFakeServer, type BaseReceived, type FakeServer,
} from "./fake-server.js";

export type Received = BaseReceived;

export type Script =
  | { readonly kind: "ok"; readonly text?: string; readonly chunks?: number }
  | { readonly kind: "error"; readonly status: number; readonly message?: string };

export interface FakeResponsesOptions {
  readonly keys?: readonly string[];
  readonly script?: (req: Received) => Script;
}

export type FakeResponses = FakeServer<Received>;

/** Usage on every reply: input 20 (4 cached), output 8 (3 reasoning). */
export const responsesFakeUsage = {
  input_tokens: 20, input_tokens_details: { cached_tokens: 4 },
  output_tokens: 8, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 28,
} as const;

export function startFakeResponses(opts: FakeResponsesOptions = {}): Promise<FakeResponses> {
  return startFakeServer((r, res, seq) => answer(r, res, opts, seq));
}

function error(res: http.ServerResponse, status: number, message: string, code: string | null = null): void {
  sendOpenAIError(res, status, message, status >= 500 ? "server_error" : "invalid_request_error", code);
}

function inputText(body: Record<string, unknown>): string {
  return typeof body.input === "string" ? body.input : "hello";
}

function responseObject(r: Received, id: string, msgId: string, status: "in_progress" | "completed", text: string | undefined) {
  const reasoning = (r.body.reasoning as { effort?: string } | undefined) ?? {};
  return {
    id, object: "response", created_at: 1_741_476_542, status, background: false, error: null, incomplete_details: null,
    instructions: r.body.instructions ?? null, max_output_tokens: r.body.max_output_tokens ?? null, model: String(r.body.model),
    output: text === undefined ? [] : [{
      id: msgId, type: "message", status: "completed", role: "assistant",
      content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
    }],
    parallel_tool_calls: true, previous_response_id: null,
    reasoning: { effort: reasoning.effort ?? null, summary: null }, service_tier: "default", store: true,
    temperature: 1, text: { format: { type: "text" }, verbosity: "medium" }, tool_choice: "auto", tools: [], top_p: 1,
    truncation: "disabled", usage: text === undefined ? null : responsesFakeUsage, user: null, metadata: {},
  };
}

function answer(r: Received, res: http.ServerResponse, opts: FakeResponsesOptions, seq: number): void {
  if (r.method !== "POST" || r.path !== "/v1/responses") return error(res, 404, `Unknown path ${r.path}`, "unknown_url");
  if (opts.keys?.length && !opts.keys.includes(bearerKey(r.headers))) {
    return error(res, 401, "Incorrect API key provided.", "invalid_api_key");
  }
  const script = opts.script?.(r) ?? { kind: "ok" };
  if (script.kind === "error") return error(res, script.status, script.message ?? `fake error ${script.status}`);
  const text = script.text ?? `resp says: ${inputText(r.body)}`;
  const id = `resp_fake${String(seq).padStart(6, "0")}`;
  const msgId = `msg_fake${String(seq).padStart(6, "0")}`;
  if (r.body.stream !== true) {
    return sendJson(res, 200, responseObject(r, id, msgId, "completed", text), { "openai-organization": "org-secret" });
  }
  let n = 0;
  const events: object[] = [];
  const ev = (type: string, data: object) => events.push({ type, sequence_number: n++, ...data });
  const started = responseObject(r, id, msgId, "in_progress", undefined);
  ev("response.created", { response: started });
  ev("response.in_progress", { response: started });
  ev("response.output_item.added", { output_index: 0, item: { id: msgId, type: "message", status: "in_progress", role: "assistant", content: [] } });
  ev("response.content_part.added", { item_id: msgId, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
  const k = Math.max(1, Math.min(script.chunks ?? 4, text.length));
  const size = Math.ceil(text.length / k);
  for (let i = 0; i < text.length; i += size) {
    ev("response.output_text.delta", { item_id: msgId, output_index: 0, content_index: 0, delta: text.slice(i, i + size), logprobs: [] });
  }
  ev("response.output_text.done", { item_id: msgId, output_index: 0, content_index: 0, text, logprobs: [] });
  ev("response.content_part.done", { item_id: msgId, output_index: 0, content_index: 0, part: { type: "output_text", text, annotations: [], logprobs: [] } });
  ev("response.output_item.done", { output_index: 0, item: { id: msgId, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] } });
  ev("response.completed", { response: responseObject(r, id, msgId, "completed", text) });
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  sendLines(res, events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`));
}
