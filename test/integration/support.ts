// Shared pieces of the integration suites: a config builder (JS object → gateway.yaml
// text), raw HTTP helpers, and a capturing UsageSink. Not a test file itself.

import http from "node:http";
import net from "node:net";
import { stringify } from "yaml";
import type { UsageSink } from "../../src/pipeline/usage-sink.js";
import type { Usage } from "../../src/protocols/usage.js";
import { copyUsage } from "../../src/state/entry.js";

/** The client access token most suites use. */
export const TOKEN = "sk-gw-test-alice-0123456789";
/** A channel key; must never reach the client. */
export const CHANNEL_KEY = "sk-upstream-SECRET-abcdef123456";

export type Obj = Record<string, unknown>;

/** A channel entry for `base_url` serving `models` in group default. */
export function channel(name: string, baseUrl: string, extra: Obj = {}): Obj {
  return {
    name, protocol: "openai", base_url: baseUrl, keys: [CHANNEL_KEY],
    groups: ["default"], models: ["gpt-4o-mini"], ...extra,
  };
}

/** A token entry for user alice in group default. */
export function token(name: string, key: string, extra: Obj = {}): Obj {
  return { name, key, user: "alice", group: "default", ...extra };
}

/** Builds a full gateway.yaml from parts; listen is always 127.0.0.1:0. */
export function config(parts: {
  server?: Obj;
  tokens?: Obj[];
  channels?: Obj[];
  users?: Obj;
  groups?: Obj;
  models?: Obj;
  limits?: Obj;
  routing?: Obj;
  store?: string;
} = {}): string {
  return stringify({
    ...(parts.routing ? { routing: parts.routing } : {}),
    ...(parts.store ? { store: parts.store } : {}),
    ...(parts.limits ? { limits: parts.limits } : {}),
    server: { listen: "127.0.0.1:0", upstream_timeout: "3s", ...parts.server },
    groups: parts.groups ?? { default: { multiplier: 0.7 }, video: { multiplier: 1 } },
    users: parts.users ?? { alice: { credit: 100, groups: ["default", "video"] } },
    tokens: parts.tokens ?? [token("alice-main", TOKEN)],
    channels: parts.channels ?? [],
    models: parts.models ?? {
      "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
      "gpt-4o-2024-08-06": { endpoint: "chat", price: { input: 2.5, output: 10 } },
      "claude-sonnet-4-5": { price: { input: 3, output: 15 } },
      "gemini-2.5-flash": { price: { input: 0.3, output: 2.5 } },
    },
  });
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** One raw HTTP request with node:http (so headers go out byte-exact, no normalising). */
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string | number>; body?: string | Buffer; localAddress?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: opts.method ?? "GET",
      headers: opts.headers,
      agent: false,
      localAddress: opts.localAddress,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** POSTs a JSON chat body with a bearer token. */
export function postChat(base: string, body: Obj, headers: Record<string, string> = {}): Promise<RawResponse> {
  const text = JSON.stringify(body);
  return rawRequest(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    body: text,
  });
}

export const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] };

/** A usage record as the sink saw it. */
export interface Recorded {
  id: string;
  status: number;
  modelName?: string;
  upstreamModel?: string;
  channel?: string;
  token?: string;
  /** The usage as the usage log keeps it: the five counts and tool calls (the parts a
   * provider reports apart, and the service tier, are priced in the entry's breakdown). */
  usage?: Usage;
  /** The usage as the gateway read it from the answer, parts and service tier included. */
  reported?: Usage;
  attempts: number;
}

/** A UsageSink that keeps every record. */
export function capturingSink(): UsageSink & { records: Recorded[] } {
  const records: Recorded[] = [];
  return {
    records,
    record({ entry, attempts }) {
      const counted = entry.estimated || entry.status >= 400 ? undefined : entry.usage;
      records.push({
        id: entry.requestId, status: entry.status, modelName: entry.model || undefined, upstreamModel: entry.upstreamModel,
        channel: entry.channel, token: entry.token, usage: counted ? copyUsage(counted) : undefined, reported: counted, attempts,
      });
    },
  };
}

/** A port nothing listens on (bound then released). */
export async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Answers one upstream request; `body` is the parsed JSON the gateway sent. */
export type UpstreamHandler = (body: Obj, res: http.ServerResponse) => void;

/** A hand-written OpenAI-protocol upstream whose answer is whatever `handler` does; it
 * counts requests and responses cut off before they finished (cancellation reached it). */
export async function startRawUpstream(handler: UpstreamHandler) {
  const state = { requests: 0, closedEarly: 0, handler, bodies: [] as Obj[] };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      state.requests++;
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Obj;
      state.bodies.push(body);
      res.on("close", () => { if (!res.writableFinished) state.closedEarly++; });
      state.handler(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    url, state,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

export type RawUpstream = Awaited<ReturnType<typeof startRawUpstream>>;

/** Writes a chat.completion JSON answer with `text` and (unless null) `usage`. */
export function completionAnswer(res: http.ServerResponse, model: unknown, text: string, usage: Obj | null): void {
  const body: Obj = {
    id: "chatcmpl-raw", object: "chat.completion", created: 1, model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
  };
  if (usage) body.usage = usage;
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Writes a whole SSE chat stream of `words`; a usage-only chunk at the end unless usage is null. */
export function streamAnswer(res: http.ServerResponse, model: unknown, words: readonly string[], usage: Obj | null): void {
  const base = { id: "chatcmpl-raw", object: "chat.completion.chunk", created: 1, model };
  const events: Obj[] = [
    ...words.map((w) => ({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  ];
  if (usage) events.push({ ...base, choices: [], usage });
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n");
}
