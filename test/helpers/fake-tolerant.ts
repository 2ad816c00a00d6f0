// A fake upstream for fuzzing: answers every path of every wire protocol (chat-completions,
// responses, messages, generate-content, embeddings, images, audio, rerank, moderations,
// videos) with a minimal success in that protocol's shape, whatever the body; it never
// throws on what the gateway forwards. Under the path prefix `/bad` it misbehaves on cue:
// the mode is named in the forwarded User-Agent (`fuzz-mode/<mode>`), which both pass-through
// and converted requests carry.

import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** How the `/bad` channels answer. */
export const misbehaviours = [
  "ok", "status-500", "status-503", "status-429", "status-400", "status-401", "garbage", "bad-sse", "cut-head",
  "cut-body", "cut-stream", "reset", "hang", "stall-body", "long-length", "not-json",
] as const;
export type Misbehaviour = (typeof misbehaviours)[number];

export interface FakeTolerant {
  readonly url: string;
  /** Requests received, by path (prefix included). */
  readonly paths: string[];
  close(): Promise<void>;
}

export async function startFakeTolerant(): Promise<FakeTolerant> {
  const paths: string[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => {});
    req.on("end", () => {
      const target = req.url ?? "/";
      paths.push(target);
      const bad = target.startsWith("/bad/");
      const path = (bad ? target.slice(4) : target).split("?")[0];
      const body = parseLoosely(Buffer.concat(chunks));
      const stream = body.stream === true || path.includes(":streamGenerateContent");
      const mode = bad ? modeOf(req.headers["user-agent"]) : "ok";
      misbehave(mode, path, stream, res, req.socket);
    });
  });
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });
  server.on("clientError", (_err, socket) => socket.destroy());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

function modeOf(userAgent: string | undefined): Misbehaviour {
  const m = /fuzz-mode\/([\w-]+)/.exec(userAgent ?? "")?.[1];
  return (misbehaviours as readonly string[]).includes(m ?? "") ? m as Misbehaviour : "ok";
}

function parseLoosely(raw: Buffer): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(raw.toString("utf8"));
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : {};
  } catch {
    return {};
  }
}

function misbehave(mode: Misbehaviour, path: string, stream: boolean, res: http.ServerResponse, socket: Socket): void {
  const good = answerFor(path, stream);
  switch (mode) {
    case "ok": return send(res, good);
    case "status-500": case "status-503": case "status-429": case "status-400": case "status-401": {
      const status = Number(mode.slice(7));
      return send(res, { status, type: "application/json", body: JSON.stringify({ error: { message: `fake ${status}`, type: "x" } }) });
    }
    case "garbage": return send(res, { status: 200, type: good.type, body: Buffer.from([0, 255, 123, 34, 10, 10, 0xc3, 0x28]) });
    case "not-json": return send(res, { status: 200, type: "application/json", body: "{\"choices\": [" });
    case "bad-sse":
      return send(res, { status: 200, type: "text/event-stream",
        body: "data: {broken\n\nevent: message_start\ndata: [1,2]\n\ndata: null\n\ndata: {\"choices\":7,\"candidates\":\"x\",\"type\":\"content_block_delta\",\"index\":\"a\"}\n\n" });
    case "cut-head": socket.end("HTTP/1.1 200 OK\r\nContent-Ty"); return void socket.destroy();
    case "cut-body": {
      const body = Buffer.from(good.body);
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: ${good.type}\r\ncontent-length: ${body.length + 100}\r\n\r\n`);
      socket.write(body.subarray(0, Math.floor(body.length / 2)));
      return void setTimeout(() => socket.destroy(), 5);
    }
    case "cut-stream":
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(String(good.body).split("\n\n")[0] + "\n\n");
      return void setTimeout(() => socket.destroy(), 5);
    case "reset": return void socket.resetAndDestroy();
    case "hang": return;
    case "stall-body":
      res.writeHead(200, { "content-type": good.type });
      res.write(String(good.body).slice(0, 10));
      return;
    case "long-length":
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: ${good.type}\r\ncontent-length: 3\r\n\r\n${String(good.body)}`);
      return;
  }
}

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly body: string | Buffer;
}

function send(res: http.ServerResponse, a: Answer): void {
  if (res.destroyed) return;
  res.writeHead(a.status, { "content-type": a.type });
  res.end(a.body);
}

const json = (v: unknown): Answer => ({ status: 200, type: "application/json", body: JSON.stringify(v) });
const sse = (events: readonly unknown[], named = false): Answer => ({
  status: 200, type: "text/event-stream",
  body: events.map((e) => {
    const name = named && typeof e === "object" && e !== null ? `event: ${(e as { type: string }).type}\n` : "";
    return `${name}data: ${typeof e === "string" ? e : JSON.stringify(e)}\n\n`;
  }).join(""),
});

const chatUsage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };

/** A minimal success for `path` in its protocol's wire shape. */
function answerFor(path: string, stream: boolean): Answer {
  if (path === "/v1/chat/completions") {
    const base = { id: "c1", object: "chat.completion.chunk", created: 1, model: "m" };
    return stream
      ? sse([
        { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "hi" }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
        { ...base, choices: [], usage: chatUsage }, "[DONE]"])
      : json({ id: "c1", object: "chat.completion", created: 1, model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }], usage: chatUsage });
  }
  if (path === "/v1/responses") {
    const response = { id: "r1", object: "response", status: "completed", model: "m",
      output: [{ type: "message", id: "m1", role: "assistant", content: [{ type: "output_text", text: "hi" }] }],
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } };
    return stream
      ? sse([{ type: "response.created", response: { ...response, status: "in_progress" } },
        { type: "response.output_text.delta", delta: "hi" }, { type: "response.completed", response }], true)
      : json(response);
  }
  if (path === "/v1/messages") {
    const usage = { input_tokens: 3, output_tokens: 2 };
    return stream
      ? sse([
        { type: "message_start", message: { id: "msg1", type: "message", role: "assistant", model: "m", content: [], usage: { input_tokens: 3, output_tokens: 1 } } },
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hi" } },
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } },
        { type: "message_stop" }], true)
      : json({ id: "msg1", type: "message", role: "assistant", model: "m", content: [{ type: "text", text: "hi" }],
        stop_reason: "end_turn", stop_sequence: null, usage });
  }
  if (path.startsWith("/v1beta/models/")) {
    const chunk = { candidates: [{ content: { role: "model", parts: [{ text: "hi" }] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 }, modelVersion: "m" };
    return stream ? sse([chunk]) : json(chunk);
  }
  switch (path) {
    case "/v1/embeddings":
      return json({ object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }], model: "m", usage: { prompt_tokens: 3, total_tokens: 3 } });
    case "/v1/images/generations": case "/v1/images/edits":
      return json({ created: 1, data: [{ b64_json: "AAAA" }] });
    case "/v1/audio/transcriptions":
      return json({ text: "hi", usage: { type: "duration", seconds: 1 } });
    case "/v1/audio/speech":
      return { status: 200, type: "audio/mpeg", body: Buffer.alloc(64, 1) };
    case "/v1/rerank":
      return json({ model: "m", results: [{ index: 0, relevance_score: 0.5 }], usage: { total_tokens: 3 } });
    case "/v1/moderations":
      return json({ id: "modr1", model: "m", results: [{ flagged: false, categories: {}, category_scores: {} }] });
    case "/v1/videos":
      return json({ id: "video_fuzz1", object: "video", model: "m", status: "queued", progress: 0, seconds: "8", size: "1280x720" });
  }
  if (path.startsWith("/v1/videos/")) {
    return path.endsWith("/content")
      ? { status: 200, type: "video/mp4", body: Buffer.alloc(64, 7) }
      : json({ id: path.split("/")[3], object: "video", status: "completed", progress: 100, seconds: "8" });
  }
  return { status: 404, type: "application/json", body: JSON.stringify({ error: { message: `no ${path}`, type: "invalid_request_error" } }) };
}
