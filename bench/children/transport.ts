// Child process: the transport floor. The gateway's transport and nothing else: a node:http
// server that buffers the request body and forwards it with an undici Agent (the settings
// of src/upstream/agents.ts) via agent.request, then relays status, headers (minus
// hop-by-hop) and body chunks with backpressure. No auth, JSON, routing, billing or metrics:
// the gateway's CPU per request minus this one's is the cost of the gateway's own logic.

import http from "node:http";
import { Agent } from "undici";
import { serveProxy } from "../lib/ipc.js";

const target = process.argv[2];
if (!target) throw new Error("usage: transport.ts <upstream url>");
const origin = new URL(target).origin;

/** Request headers not forwarded (hop-by-hop, and the ones the body buffering replaces). */
const dropUpstream = new Set([
  "host", "connection", "keep-alive", "proxy-authorization", "proxy-connection", "te", "trailer",
  "transfer-encoding", "upgrade", "content-length", "expect",
]);
/** Response headers not relayed (hop-by-hop). */
const dropDownstream = new Set(["connection", "keep-alive", "transfer-encoding", "trailer", "upgrade", "proxy-authenticate"]);

function copy(from: Record<string, string | string[] | undefined>, drop: Set<string>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in from) {
    if (drop.has(name)) continue;
    const value = from[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

const agent = new Agent({ connections: 512, pipelining: 1, keepAliveTimeout: 15_000, keepAliveMaxTimeout: 60_000 });

async function forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  const headers = copy(req.headers, dropUpstream);
  headers["content-length"] = String(body.length);
  const up = await agent.request({ origin, path: req.url ?? "/", method: "POST", headers, body, headersTimeout: 30_000, bodyTimeout: 30_000 });
  res.writeHead(up.statusCode, copy(up.headers, dropDownstream));
  await new Promise<void>((resolve) => {
    const done = () => { res.off("close", onClose); resolve(); };
    const onClose = () => { up.body.destroy(); done(); };
    res.on("close", onClose);
    up.body.on("data", (chunk: Buffer) => {
      if (!res.write(chunk)) {
        up.body.pause();
        res.once("drain", () => up.body.resume());
      }
    });
    up.body.on("end", () => res.end(done));
    up.body.on("error", () => { res.destroy(); done(); });
  });
}

await serveProxy(forward, () => agent.destroy().catch(() => {}));
