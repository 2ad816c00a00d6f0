// A fake OpenAI realtime upstream: a WebSocket at /v1/realtime?model=… that checks the
// channel key, records what it received, and answers as the API does: `response.create`
// with the event sequence of a response ending in `response.done` with usage (text by
// default; audio on request, optionally cut after `response.output_audio.done`),
// `response.cancel` of a running response with its `response.done` (status cancelled, with
// the usage so far), `input_audio_buffer.commit` with an input transcription carrying usage
// (and, with server VAD, a response the fake starts by itself). It can also stall: never
// read what the client sends. As Azure OpenAI's resource (`azure`), it takes the session
// only at Azure's v1 path (/openai/v1/realtime?model=<deployment>) with the `api-key`
// header (or `Authorization: Bearer` with an Entra token it accepts, as Azure does), and
// answers a conversation.item.create with its conversation.item.created.

import http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

export const realtimeFakeUsage = {
  total_tokens: 60, input_tokens: 40, output_tokens: 20,
  input_token_details: { cached_tokens: 10, text_tokens: 30, audio_tokens: 10 },
  output_token_details: { text_tokens: 20, audio_tokens: 0 },
};

/** A gpt-4o-transcribe style transcription usage (billed in tokens). */
export const transcriptionFakeUsage = {
  type: "tokens", total_tokens: 150, input_tokens: 120, output_tokens: 30,
  input_token_details: { text_tokens: 0, audio_tokens: 120 },
};

export interface FakeRealtimeOptions {
  readonly keys: readonly string[];
  /**
   * How a response.create (or a server-VAD turn) is answered: `text` (default) ends in
   * response.done with `usage`; `audio` sends audio deltas and response.output_audio.done,
   * then response.done unless `cut` says what happens instead: `close` (the fake closes the
   * socket) or `hang` (nothing more; a response.cancel is answered with response.done).
   */
  readonly response?: { readonly kind?: "text" | "audio"; readonly cut?: "close" | "hang"; readonly usage?: object };
  /** Server VAD: each input_audio_buffer.commit also starts a response by itself. */
  readonly vad?: boolean;
  /** Never read what the client sends (its socket paused once the session is created). */
  readonly stalled?: boolean;
  /** Answer a response.create with this many bytes of audio deltas (1 MiB each), each sent
   * once the one before it has left the fake's socket. */
  readonly flood?: number;
  /** Azure's resource: its v1 path, its deployments (the `model` query), `api-key` for the
   * key, or a bearer token `acceptsToken` takes (a fake Entra's current tokens). */
  readonly azure?: { readonly deployments: readonly string[]; readonly acceptsToken?: (token: string) => boolean };
}

export interface FakeRealtime {
  readonly url: string;
  /** Handshake headers and the model of each session. */
  readonly sessions: { headers: http.IncomingHttpHeaders; model: string | null; protocol: string }[];
  /** Client events received, parsed. */
  readonly events: Record<string, unknown>[];
  /** Responses started (by a response.create or by VAD). */
  readonly responses: number;
  /** Bytes of `flood` deltas that have left the fake's socket. */
  readonly flushed: number;
  close(): Promise<void>;
}

/** 100 ms of pcm16 24 kHz audio, base64: 6,400 characters. */
const AUDIO_CHUNK = Buffer.alloc(4_800, 7).toString("base64");

export async function startFakeRealtime(opts: FakeRealtimeOptions): Promise<FakeRealtime> {
  const sessions: FakeRealtime["sessions"] = [];
  const events: Record<string, unknown>[] = [];
  let responses = 0;
  let flushed = 0;
  const server = http.createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 * 1024 });
  const send = (ws: WebSocket, event: object) => ws.send(JSON.stringify(event));

  /** Sends `total` bytes of audio deltas, two in flight at a time. */
  function flood(ws: WebSocket, total: number): void {
    const frame = JSON.stringify({ type: "response.output_audio.delta", response_id: "resp_flood", delta: "A".repeat(1024 * 1024) });
    let sent = 0;
    const pump = () => {
      if (sent >= total || ws.readyState !== ws.OPEN) return;
      sent += frame.length;
      ws.send(frame, (err) => {
        if (err) return;
        flushed += frame.length;
        pump();
      });
    };
    pump();
    pump();
  }

  /** Starts one response; returns what a response.cancel of it does. */
  function respond(ws: WebSocket): (() => void) | undefined {
    const id = `resp_${++responses}`;
    const spec = opts.response ?? {};
    const usage = spec.usage ?? realtimeFakeUsage;
    send(ws, { type: "response.created", event_id: `ev_${id}_0`, response: { id, status: "in_progress" } });
    if (spec.kind === "audio") {
      for (let i = 0; i < 10; i++) send(ws, { type: "response.output_audio.delta", response_id: id, delta: AUDIO_CHUNK });
      send(ws, { type: "response.output_audio_transcript.delta", response_id: id, delta: "Hello there" });
      send(ws, { type: "response.output_audio.done", response_id: id });
      if (spec.cut === "close") {
        ws.close(1000);
        return undefined;
      }
      const done = (status: string) => send(ws, { type: "response.done", response: { id, status, usage } });
      if (spec.cut === "hang") return () => done("cancelled");
      done("completed");
      return undefined;
    }
    for (const delta of ["Hel", "lo"]) send(ws, { type: "response.output_text.delta", delta });
    send(ws, { type: "response.done", response: { id, status: "completed", usage } });
    return undefined;
  }

  server.on("upgrade", (req, socket, head) => {
    const refuse = (status: string, body: object) => {
      socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify(body)}`);
    };
    const bearer = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    const key = opts.azure ? String(req.headers["api-key"] ?? "") : bearer;
    const byToken = opts.azure?.acceptsToken !== undefined && bearer !== "" && opts.azure.acceptsToken(bearer);
    if (!byToken && !opts.keys.includes(key)) {
      refuse("401 Unauthorized", { error: { message: "bad key" } });
      return;
    }
    if (opts.azure) {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname !== "/openai/v1/realtime") return refuse("404 Not Found", { error: { code: "404", message: "Resource not found" } });
      if (!opts.azure.deployments.includes(url.searchParams.get("model") ?? "")) {
        return refuse("404 Not Found", { error: { code: "DeploymentNotFound", message: "The API deployment for this resource does not exist." } });
      }
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sessions.push({ headers: req.headers, model: new URL(req.url ?? "/", "http://x").searchParams.get("model"), protocol: ws.protocol });
      send(ws, { type: "session.created", session: { id: "sess_fake" } });
      if (opts.stalled) {
        ws.pause();
        return;
      }
      let cancel: (() => void) | undefined;
      ws.on("message", (data) => {
        const event = JSON.parse(data.toString()) as Record<string, unknown>;
        events.push(event);
        if (opts.azure && event.type === "conversation.item.create") {
          send(ws, { type: "conversation.item.created", previous_item_id: null, item: { id: "item_azure", ...(event.item as object) } });
        } else if (event.type === "response.create" && opts.flood) flood(ws, opts.flood);
        else if (event.type === "response.create") cancel = respond(ws);
        else if (event.type === "response.cancel") {
          cancel?.();
          cancel = undefined;
        } else if (event.type === "input_audio_buffer.commit") {
          send(ws, { type: "input_audio_buffer.committed", item_id: "item_1" });
          send(ws, {
            type: "conversation.item.input_audio_transcription.completed", event_id: "ev_tr", item_id: "item_1",
            content_index: 0, transcript: "hello", usage: transcriptionFakeUsage,
          });
          if (opts.vad) cancel = respond(ws);
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`, sessions, events,
    get responses() { return responses; },
    get flushed() { return flushed; },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => wss.close(r));
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
