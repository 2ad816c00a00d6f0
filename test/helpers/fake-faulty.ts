// A fake upstream that speaks every model wire protocol (chat-completions, responses,
// messages, generate-content) in its real shape and breaks on cue: a JSON answer that does
// not parse or is cut short, an HTML page, a stream that goes silent, ends early, carries an
// event that does not decode, loses its connection or lingers after its end. The fault is
// named in the prompt (`fault:<name>#<tag>`), which both pass-through and converted requests
// carry, so one fake serves every channel protocol and tests can run their requests side by side.

import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** Faults of a whole (non-stream) answer. */
export const jsonFaults = ["truncated-json", "html-200", "cut-body", "stall-body", "html-502", "cut-502", "stall-502"] as const;
/** Faults of a streamed answer. */
export const streamFaults = [
  "idle", "idle-at-start", "unterminated", "unterminated-late", "undecodable", "undecodable-braced", "cut", "html-200",
  "linger",
] as const;
export type Fault = "ok" | (typeof jsonFaults)[number] | (typeof streamFaults)[number];

/** The upstream wire protocol of a request, from its path. */
export type Wire = "chat" | "responses" | "messages" | "generate";

/** The generated text every answer starts with: what a broken stream delivered before it broke. */
export const PREFIX_TEXT = ["Hello", " world"] as const;
/** The rest of a whole answer's text. */
const REST_TEXT = "!";
/** Usage every whole answer reports, in each wire's own fields (canonical input 12, output 5). */
export const REPORTED = { input: 12, output: 5 } as const;

/** One request the fake received and how its connection ended. */
export interface FaultExchange {
  readonly wire: Wire;
  readonly stream: boolean;
  readonly fault: Fault;
  readonly tag: string;
  /** Date.now() when the fake wrote its last byte before going silent (idle faults). */
  silentSince?: number;
  /** How the response's connection ended: the fake finished it, the fake cut it, or the
   * gateway closed it while the fake still held it open. */
  end: "open" | "finished" | "cut-by-fake" | "closed-by-gateway";
}

export interface FaultyUpstream {
  readonly url: string;
  readonly exchanges: FaultExchange[];
  /** The exchange of the request whose prompt carried `tag`, if it arrived. */
  find(tag: string): FaultExchange | undefined;
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1:0. `healthy`: ignore faults and always answer whole. */
export async function startFaultyUpstream(opts: { healthy?: boolean } = {}): Promise<FaultyUpstream> {
  const exchanges: FaultExchange[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Record<string, unknown> = {};
      try { body = JSON.parse(raw) as Record<string, unknown>; } catch { /* not JSON: left empty */ }
      const path = req.url ?? "/";
      const wire = wireOf(path);
      if (wire === undefined) {
        res.writeHead(404, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ error: { message: `no route ${path}`, type: "invalid_request_error" } }));
      }
      const m = /fault:([a-z0-9-]+)#(\w+)/.exec(raw);
      const stream = wire === "generate" ? path.includes(":streamGenerateContent") : body.stream === true;
      const ex: FaultExchange = {
        wire, stream, fault: opts.healthy || !m ? "ok" : m[1] as Fault, tag: m?.[2] ?? "", end: "open",
      };
      exchanges.push(ex);
      res.on("close", () => { if (ex.end === "open") ex.end = res.writableFinished ? "finished" : "closed-by-gateway"; });
      const later = (ms: number, f: () => void) => {
        const t = setTimeout(() => { timers.delete(t); f(); }, ms);
        timers.add(t);
      };
      const answer = { wire, model: modelOf(path, body), includeUsage: includeUsage(body) };
      if (stream) streamAnswer(ex, answer, res, later);
      else jsonAnswer(ex, answer, res);
    });
  });
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    find: (tag) => exchanges.find((e) => e.tag === tag),
    close: () => new Promise<void>((r) => {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

function wireOf(path: string): Wire | undefined {
  const p = path.split("?")[0];
  if (p === "/v1/chat/completions") return "chat";
  if (p === "/v1/responses") return "responses";
  if (p === "/v1/messages") return "messages";
  if (/^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/.test(p)) return "generate";
  return undefined;
}

function modelOf(path: string, body: Record<string, unknown>): string {
  const m = /^\/v1beta\/models\/([^/:]+):/.exec(path);
  return m ? decodeURIComponent(m[1]) : String(body.model ?? "");
}

function includeUsage(body: Record<string, unknown>): boolean {
  return (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
}

interface Answer {
  readonly wire: Wire;
  readonly model: string;
  readonly includeUsage: boolean;
}

const HTML_PAGE = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
  + "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n";

/** A whole answer in the wire's shape, or its fault. */
function jsonAnswer(ex: FaultExchange, a: Answer, res: http.ServerResponse): void {
  const body = Buffer.from(JSON.stringify(wholeBody(a)));
  switch (ex.fault) {
    case "truncated-json": {
      const cut = body.subarray(0, Math.floor(body.length / 2));
      res.writeHead(200, { "content-type": "application/json", "content-length": cut.length });
      return void res.end(cut);
    }
    case "html-200":
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(HTML_PAGE) });
      return void res.end(HTML_PAGE);
    case "html-502":
      res.writeHead(502, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(HTML_PAGE) });
      return void res.end(HTML_PAGE);
    case "cut-502":
    case "stall-502": {
      // An error page whose body is cut, or stalls: the gateway fails over without reading it.
      const page = Buffer.from(HTML_PAGE);
      res.writeHead(502, { "content-type": "text/html; charset=utf-8", "content-length": page.length });
      res.write(page.subarray(0, 40), () => {
        ex.silentSince = Date.now();
        if (ex.fault === "cut-502") cut(ex, res);
      });
      return;
    }
    case "cut-body":
    case "stall-body": {
      // The head promises the whole body; half of it comes, then the socket is cut (or
      // nothing more comes at all).
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => {
        ex.silentSince = Date.now();
        if (ex.fault === "cut-body") cut(ex, res);
      });
      return;
    }
    default:
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
      res.end(body);
  }
}

function cut(ex: FaultExchange, res: http.ServerResponse): void {
  ex.end = "cut-by-fake";
  res.socket?.destroy();
}

/** A streamed answer: the prefix events, then the fault (or the rest of a whole stream). */
function streamAnswer(ex: FaultExchange, a: Answer, res: http.ServerResponse, later: (ms: number, f: () => void) => void): void {
  if (ex.fault === "html-200") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    return void res.end(HTML_PAGE);
  }
  const s = streamOf(a);
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  const write = (events: readonly string[], then?: () => void) => {
    if (events.length === 0) {
      // Headers only: flush them so the gateway sees the stream begin.
      res.flushHeaders();
      ex.silentSince = Date.now();
      then?.();
      return;
    }
    res.write(events.join(""), () => { ex.silentSince = Date.now(); then?.(); });
  };
  switch (ex.fault) {
    case "idle":
      return write(s.prefix); // and nothing more, the connection held open
    case "idle-at-start":
      return write([]);
    case "unterminated":
      return write(s.prefix, () => res.end());
    case "unterminated-late":
      return write([...s.prefix, ...s.beforeTerminal], () => res.end());
    case "undecodable":
      // Then keep-alive comments, so only the bad event can end the stream early.
      return write([...s.prefix, s.undecodable], () => keepAlive(ex, res, later));
    case "undecodable-braced":
      // An event that is not JSON but looks like an object; the upstream then carries on.
      return write([...s.prefix, s.undecodableBraced, ...s.beforeTerminal, ...s.terminal], () => res.end());
    case "cut":
      return write(s.prefix, () => cut(ex, res));
    case "linger":
      // A whole stream, terminal event included, but the connection is held open after it.
      return write([...s.prefix, ...s.beforeTerminal, ...s.terminal]);
    default:
      write([...s.prefix, ...s.beforeTerminal, ...s.terminal], () => res.end());
  }
}

function keepAlive(ex: FaultExchange, res: http.ServerResponse, later: (ms: number, f: () => void) => void): void {
  later(200, () => {
    if (res.destroyed || ex.end !== "open") return;
    res.write(": keep-alive\n\n");
    keepAlive(ex, res, later);
  });
}

/** A stream in parts: what every answer starts with, what comes before its terminal event,
 * the terminal event(s), and an event that does not decode. */
interface StreamParts {
  readonly prefix: readonly string[];
  readonly beforeTerminal: readonly string[];
  readonly terminal: readonly string[];
  readonly undecodable: string;
  /** Not JSON either, but it starts with `{` and ends with `}`. */
  readonly undecodableBraced: string;
}

const data = (v: unknown, eol = "\n") => `data: ${JSON.stringify(v)}${eol}${eol}`;
/** A named event whose data repeats its name as `type` (responses, messages). */
const named = (type: string, fields: object = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

function streamOf(a: Answer): StreamParts {
  switch (a.wire) {
    case "chat": return chatStream(a);
    case "responses": return responsesStream(a);
    case "messages": return messagesStream(a);
    case "generate": return generateStream(a);
  }
}

const CHAT_USAGE = { prompt_tokens: REPORTED.input, completion_tokens: REPORTED.output, total_tokens: REPORTED.input + REPORTED.output };
const GEMINI_USAGE = {
  promptTokenCount: REPORTED.input, candidatesTokenCount: REPORTED.output, totalTokenCount: REPORTED.input + REPORTED.output,
};

/** The responses output item of a whole answer. */
function outputItem(text: string) {
  return { id: "msg_faulty", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] };
}

function chatStream(a: Answer): StreamParts {
  const base = { id: "chatcmpl-faulty", object: "chat.completion.chunk", created: 1_700_000_000, model: a.model, system_fingerprint: "fp_f" };
  const u = a.includeUsage ? { usage: null } : {};
  const chunk = (delta: object, finish: string | null) =>
    data({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...u });
  return {
    prefix: [chunk({ role: "assistant", content: "", refusal: null }, null), ...PREFIX_TEXT.map((t) => chunk({ content: t }, null))],
    beforeTerminal: [
      chunk({ content: REST_TEXT }, null), chunk({}, "stop"),
      ...(a.includeUsage ? [data({ ...base, choices: [], usage: CHAT_USAGE })] : []),
    ],
    terminal: ["data: [DONE]\n\n"],
    undecodable: 'data: {"choices": [tru\n\n',
    undecodableBraced: 'data: {"choices": [tru}\n\n',
  };
}

function responsesStream(a: Answer): StreamParts {
  let n = 0;
  const ev = (type: string, fields: object) => named(type, { sequence_number: n++, ...fields });
  const response = (status: string, output: object[], usage: object | null) => ({
    id: "resp_faulty", object: "response", created_at: 1_700_000_000, status, model: a.model, output, usage,
  });
  const text = PREFIX_TEXT.join("") + REST_TEXT;
  const item = outputItem(text);
  const prefix = [
    ev("response.created", { response: response("in_progress", [], null) }),
    ev("response.in_progress", { response: response("in_progress", [], null) }),
    ev("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } }),
    ev("response.content_part.added", {
      item_id: "msg_faulty", output_index: 0, content_index: 0, part: { type: "output_text", annotations: [] },
    }),
    ...PREFIX_TEXT.map((t) => ev("response.output_text.delta", { item_id: "msg_faulty", output_index: 0, content_index: 0, delta: t })),
  ];
  return {
    prefix,
    beforeTerminal: [
      ev("response.output_text.delta", { item_id: "msg_faulty", output_index: 0, content_index: 0, delta: REST_TEXT }),
      ev("response.output_item.done", { output_index: 0, item }),
    ],
    terminal: [ev("response.completed", {
      response: response("completed", [item], { input_tokens: REPORTED.input, input_tokens_details: { cached_tokens: 0 },
        output_tokens: REPORTED.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 17 }),
    })],
    undecodable: 'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": "tru\n\n',
    undecodableBraced: 'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": tru}\n\n',
  };
}

function messagesStream(a: Answer): StreamParts {
  const usage = { input_tokens: REPORTED.input, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  return {
    prefix: [
      named("message_start", { message: { id: "msg_faulty", type: "message", role: "assistant", model: a.model, content: [],
        stop_reason: null, stop_sequence: null, usage } }),
      named("ping"),
      named("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ...PREFIX_TEXT.map((t) => named("content_block_delta", { index: 0, delta: { type: "text_delta", text: t } })),
    ],
    beforeTerminal: [
      named("content_block_delta", { index: 0, delta: { type: "text_delta", text: REST_TEXT } }),
      named("content_block_stop", { index: 0 }),
      named("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: REPORTED.output } }),
    ],
    terminal: [named("message_stop")],
    undecodable: 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "tru\n\n',
    undecodableBraced: 'event: content_block_delta\ndata: {"type": "content_block_delta", "delta": tru}\n\n',
  };
}

function generateStream(a: Answer): StreamParts {
  const meta = { modelVersion: a.model, responseId: "faultyResp" };
  // Every chunk carries the running usage, as Gemini's do; the last one the final counts.
  const running = { promptTokenCount: REPORTED.input, totalTokenCount: REPORTED.input };
  const chunk = (text: string, finish?: string) => data({
    candidates: [{ content: { parts: [{ text }], role: "model" }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
    usageMetadata: finish ? GEMINI_USAGE : running,
    ...meta,
  }, "\r\n");
  return {
    prefix: PREFIX_TEXT.map((t) => chunk(t)),
    beforeTerminal: [],
    terminal: [chunk(REST_TEXT, "STOP")],
    undecodable: 'data: {"candidates": [tru\r\n\r\n',
    undecodableBraced: 'data: {"candidates": [tru}\r\n\r\n',
  };
}

/** A whole answer body in the wire's shape. */
function wholeBody(a: Answer): object {
  const text = PREFIX_TEXT.join("") + REST_TEXT;
  switch (a.wire) {
    case "chat":
      return {
        id: "chatcmpl-faulty", object: "chat.completion", created: 1_700_000_000, model: a.model,
        choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, logprobs: null, finish_reason: "stop" }],
        usage: CHAT_USAGE,
      };
    case "responses":
      return {
        id: "resp_faulty", object: "response", created_at: 1_700_000_000, status: "completed", model: a.model,
        output: [outputItem(text)],
        usage: { input_tokens: REPORTED.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: REPORTED.output,
          output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 17 },
      };
    case "messages":
      return {
        id: "msg_faulty", type: "message", role: "assistant", model: a.model, content: [{ type: "text", text }],
        stop_reason: "end_turn", stop_sequence: null,
        usage: { input_tokens: REPORTED.input, output_tokens: REPORTED.output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      };
    case "generate":
      return {
        candidates: [{ content: { parts: [{ text }], role: "model" }, finishReason: "STOP", index: 0 }],
        usageMetadata: GEMINI_USAGE,
        modelVersion: a.model, responseId: "faultyResp",
      };
  }
}
