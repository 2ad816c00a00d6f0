// A fake OpenAI realtime upstream: a WebSocket at /v1/realtime?model=… that checks the
// channel key, records what it received, and answers `response.create` with the event
// sequence of a text response ending in `response.done` with usage.

import http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

export const realtimeFakeUsage = {
  total_tokens: 60, input_tokens: 40, output_tokens: 20,
  input_token_details: { cached_tokens: 10, text_tokens: 30, audio_tokens: 10 },
  output_token_details: { text_tokens: 20, audio_tokens: 0 },
};

export interface FakeRealtime {
  readonly url: string;
  /** Handshake headers and the model of each session. */
  readonly sessions: { headers: http.IncomingHttpHeaders; model: string | null; protocol: string }[];
  /** Client events received, parsed. */
  readonly events: Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startFakeRealtime(opts: { keys: readonly string[] }): Promise<FakeRealtime> {
  const sessions: FakeRealtime["sessions"] = [];
  const events: Record<string, unknown>[] = [];
  const server = http.createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const key = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (!opts.keys.includes(key)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{\"error\":{\"message\":\"bad key\"}}");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sessions.push({ headers: req.headers, model: new URL(req.url ?? "/", "http://x").searchParams.get("model"), protocol: ws.protocol });
      ws.send(JSON.stringify({ type: "session.created", session: { id: "sess_fake" } }));
      ws.on("message", (data) => {
        const event = JSON.parse(data.toString()) as Record<string, unknown>;
        events.push(event);
        if (event.type !== "response.create") return;
        ws.send(JSON.stringify({ type: "response.created", response: { id: "resp_1", status: "in_progress" } }));
        for (const delta of ["Hel", "lo"]) ws.send(JSON.stringify({ type: "response.output_text.delta", delta }));
        ws.send(JSON.stringify({ type: "response.done", response: { id: "resp_1", status: "completed", usage: realtimeFakeUsage } }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`, sessions, events,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => wss.close(r));
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
