// A tiny fake OpenAI Responses API upstream (`POST /v1/responses`) speaking the real wire
// format: a Response object, or the SSE stream of typed events the API sends
// (response.created, response.in_progress, per output item: output_item.added, its parts
// and deltas, output_item.done; then response.completed or .incomplete with usage), every
// event numbered by sequence_number. An answer may hold a reasoning item (summary and
// encrypted content), a message, and function calls. Sibling of fake-openai.ts, which
// serves chat completions only; it records every request it received.

import type http from "node:http";
import {
  bearerKey, sendJson, sendLines, sendOpenAIError, splitText, startFakeServer, type BaseReceived, type FakeServer,
} from "./fake-server.js";

export type Received = BaseReceived;

/** What the answer holds, in output order: reasoning, then the message, then the calls. */
export interface Answer {
  /** The message text; default "resp says: <the last user text>". Omitted with `calls`
   * unless given. */
  readonly text?: string;
  /** A refusal part instead of the text. */
  readonly refusal?: string;
  /** Deltas per text (and per arguments, per summary part); default 4. */
  readonly chunks?: number;
  /** A reasoning item first: its summary parts and its encrypted content. */
  readonly reasoning?: { readonly summary?: readonly string[]; readonly encrypted?: string };
  /** function_call items, arguments as JSON text. */
  readonly calls?: readonly { readonly name: string; readonly args: string; readonly callId?: string }[];
  /** The answer was cut short: status incomplete with this reason. */
  readonly incomplete?: "max_output_tokens" | "content_filter";
  /** Usage instead of responsesFakeUsage. */
  readonly usage?: Record<string, unknown>;
  /** Stream only: stop after this many events, without response.completed (connection ends). */
  readonly cutAfter?: number;
  /** Stream only: end with response.failed (after the items) carrying this message. */
  readonly failed?: string;
  /** Stream only: keep the connection open after the last event (as a slow proxy may). */
  readonly linger?: boolean;
}

export type Script =
  | ({ readonly kind: "ok" } & Answer)
  | { readonly kind: "error"; readonly status: number; readonly message?: string };

export interface FakeResponsesOptions {
  readonly keys?: readonly string[];
  readonly script?: (req: Received) => Script;
  /** Refuse a reasoning item whose encrypted_content OpenAI did not issue (its own are
   * Fernet tokens, "gAAAAA…"), as the API does. Off by default. */
  readonly verifyEncryptedContent?: boolean;
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

/** The prompt to echo: the input string, or the last user message item's text. */
function inputText(body: Record<string, unknown>): string {
  if (typeof body.input === "string") return body.input;
  const items = Array.isArray(body.input) ? body.input as Record<string, unknown>[] : [];
  const user = items.filter((i) => i.role === "user").at(-1);
  const content = user?.content;
  if (typeof content === "string") return content;
  const part = Array.isArray(content) ? (content as Record<string, unknown>[]).find((p) => p.type === "input_text") : undefined;
  return typeof part?.text === "string" ? part.text : "hello";
}

type Item = Record<string, unknown>;

/** The output items of an answer, completed, with their ids. */
function outputItems(r: Received, a: Answer, seq: number): Item[] {
  const n = String(seq).padStart(6, "0");
  const items: Item[] = [];
  if (a.reasoning) {
    items.push({
      id: `rs_fake${n}`, type: "reasoning",
      summary: (a.reasoning.summary ?? []).map((text) => ({ type: "summary_text", text })),
      ...(a.reasoning.encrypted !== undefined && { encrypted_content: a.reasoning.encrypted }),
    });
  }
  const text = a.text ?? (a.calls || a.refusal !== undefined ? undefined : `resp says: ${inputText(r.body)}`);
  if (text !== undefined || a.refusal !== undefined) {
    const part = a.refusal !== undefined ? { type: "refusal", refusal: a.refusal } : { type: "output_text", text, annotations: [], logprobs: [] };
    items.push({ id: `msg_fake${n}`, type: "message", status: "completed", role: "assistant", content: [part] });
  }
  (a.calls ?? []).forEach((c, k) => items.push({
    id: `fc_fake${n}${k}`, type: "function_call", status: "completed", arguments: c.args,
    call_id: c.callId ?? `call_fake${n}${k}`, name: c.name,
  }));
  return items;
}

function responseObject(r: Received, id: string, status: string, output: Item[], a: Answer, final: boolean) {
  const reasoning = (r.body.reasoning as { effort?: string } | undefined) ?? {};
  return {
    id, object: "response", created_at: 1_741_476_542, status, background: false, error: null,
    incomplete_details: status === "incomplete" ? { reason: a.incomplete } : null,
    instructions: r.body.instructions ?? null, max_output_tokens: r.body.max_output_tokens ?? null, model: String(r.body.model),
    output, parallel_tool_calls: true, previous_response_id: null,
    reasoning: { effort: reasoning.effort ?? null, summary: null }, service_tier: "default", store: r.body.store ?? true,
    temperature: 1, text: { format: { type: "text" }, verbosity: "medium" }, tool_choice: "auto", tools: [], top_p: 1,
    truncation: "disabled", usage: final ? a.usage ?? responsesFakeUsage : null, user: null, metadata: {},
  };
}

/** OpenAI's refusal of the first reasoning item it cannot decrypt; undefined when all are its own. */
function foreignReasoning(body: Record<string, unknown>): string | undefined {
  const items = Array.isArray(body.input) ? body.input as Item[] : [];
  for (const item of items) {
    if (item.type !== "reasoning" || item.encrypted_content === undefined) continue;
    if (typeof item.encrypted_content !== "string" || !item.encrypted_content.startsWith("gAAAAA")) {
      return `The encrypted content for item ${String(item.id ?? "rs_unknown")} could not be verified.`;
    }
  }
  return undefined;
}

function answer(r: Received, res: http.ServerResponse, opts: FakeResponsesOptions, seq: number): void {
  if (r.method !== "POST" || r.path !== "/v1/responses") return error(res, 404, `Unknown path ${r.path}`, "unknown_url");
  if (opts.keys?.length && !opts.keys.includes(bearerKey(r.headers))) {
    return error(res, 401, "Incorrect API key provided.", "invalid_api_key");
  }
  const forged = opts.verifyEncryptedContent ? foreignReasoning(r.body) : undefined;
  if (forged !== undefined) return error(res, 400, forged, "invalid_encrypted_content");
  const script = opts.script?.(r) ?? { kind: "ok" };
  if (script.kind === "error") return error(res, script.status, script.message ?? `fake error ${script.status}`);
  const id = `resp_fake${String(seq).padStart(6, "0")}`;
  const output = outputItems(r, script, seq);
  const status = script.incomplete ? "incomplete" : "completed";
  if (r.body.stream !== true) {
    return sendJson(res, 200, responseObject(r, id, status, output, script, true), { "openai-organization": "org-secret" });
  }
  const events = streamEvents(r, id, output, script);
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  const lines = events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`);
  if (script.linger) res.write(lines.join(""));
  else sendLines(res, lines);
}

/** The API's event sequence for an answer of `output` items. */
function streamEvents(r: Received, id: string, output: Item[], a: Answer): object[] {
  let n = 0;
  const events: object[] = [];
  const ev = (type: string, data: object) => events.push({ type, sequence_number: n++, ...data });
  const k = a.chunks ?? 4;
  const started = responseObject(r, id, "in_progress", [], a, false);
  ev("response.created", { response: started });
  ev("response.in_progress", { response: started });
  output.forEach((item, at) => {
    const base = { item_id: item.id, output_index: at };
    if (item.type === "reasoning") {
      ev("response.output_item.added", { output_index: at, item: { id: item.id, type: "reasoning", summary: [] } });
      (item.summary as { text: string }[]).forEach((s, si) => {
        ev("response.reasoning_summary_part.added", { ...base, summary_index: si, part: { type: "summary_text", text: "" } });
        for (const d of splitText(s.text, k)) ev("response.reasoning_summary_text.delta", { ...base, summary_index: si, delta: d, obfuscation: "x1" });
        ev("response.reasoning_summary_text.done", { ...base, summary_index: si, text: s.text });
        ev("response.reasoning_summary_part.done", { ...base, summary_index: si, part: { type: "summary_text", text: s.text } });
      });
    } else if (item.type === "message") {
      const part = (item.content as Item[])[0];
      ev("response.output_item.added", { output_index: at, item: { ...item, status: "in_progress", content: [] } });
      const empty = part.type === "refusal" ? { type: "refusal", refusal: "" } : { type: "output_text", text: "", annotations: [], logprobs: [] };
      ev("response.content_part.added", { ...base, content_index: 0, part: empty });
      if (part.type === "refusal") {
        for (const d of splitText(String(part.refusal), k)) ev("response.refusal.delta", { ...base, content_index: 0, delta: d });
        ev("response.refusal.done", { ...base, content_index: 0, refusal: part.refusal });
      } else {
        for (const d of splitText(String(part.text), k)) {
          ev("response.output_text.delta", { ...base, content_index: 0, delta: d, logprobs: [], obfuscation: "x1" });
        }
        ev("response.output_text.done", { ...base, content_index: 0, text: part.text, logprobs: [] });
      }
      ev("response.content_part.done", { ...base, content_index: 0, part });
    } else {
      ev("response.output_item.added", { output_index: at, item: { ...item, status: "in_progress", arguments: "" } });
      for (const d of splitText(String(item.arguments), k)) ev("response.function_call_arguments.delta", { ...base, delta: d, obfuscation: "x1" });
      ev("response.function_call_arguments.done", { ...base, name: item.name, arguments: item.arguments });
    }
    ev("response.output_item.done", { output_index: at, item });
  });
  if (a.failed !== undefined) {
    ev("response.failed", { response: { ...responseObject(r, id, "failed", output, a, false), error: { code: "server_error", message: a.failed } } });
  } else {
    ev(a.incomplete ? "response.incomplete" : "response.completed", { response: responseObject(r, id, a.incomplete ? "incomplete" : "completed", output, a, true) });
  }
  return a.cutAfter === undefined ? events : events.slice(0, a.cutAfter);
}
