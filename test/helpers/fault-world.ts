// The world of the upstream-faults suites: one gateway (stream_idle_timeout 1 s, a SQLite
// usage log) in front of two fake-faulty upstreams, one that breaks on cue and one that never
// does, each reached through a channel of every protocol. A model per (channel protocol,
// backed or not) picks the route; raw clients speak each client protocol and never wait
// past a deadline; the usage log and the billing arithmetic are read back for assertions.
// What the answers look like to a client is read by client-wire.ts.

import http from "node:http";
import { randomUUID } from "node:crypto";
import { openSqliteStore } from "../../src/state/sqlite.js";
import type { UsageEntry } from "../../src/state/store.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFaultyUpstream, type Fault, type FaultExchange, type FaultyUpstream } from "./fake-faulty.js";
import { entryOf, eventually, forgetHealthEverywhere, startTestGateway, type TestGateway } from "./gateway.js";
import { CHANNEL_KEY, TOKEN, config, token, type Obj } from "../integration/support.js";

/** The client protocols, by route. */
export type Client = "chat" | "responses" | "messages" | "generate";
export type Protocol = "openai" | "anthropic" | "gemini";

/** The channel protocol each client protocol passes through to. */
export const PASSTHROUGH: Readonly<Record<Client, Protocol>> = {
  chat: "openai", responses: "openai", messages: "anthropic", generate: "gemini",
};

/** Every (client protocol, channel protocol) pair the gateway serves: each model client
 * protocol with its own channel (pass-through) and the two others (converted); responses
 * only passed through. */
export const PAIRS: readonly { readonly client: Client; readonly channel: Protocol }[] = [
  ...(["chat", "messages", "generate"] as const).flatMap((client) =>
    (["openai", "anthropic", "gemini"] as const).map((channel) => ({ client, channel }))),
  { client: "responses", channel: "openai" },
];

export function pairName(p: { client: Client; channel: Protocol }): string {
  return `${p.client} → ${p.channel} (${PASSTHROUGH[p.client] === p.channel ? "pass-through" : "converted"})`;
}

/** Prices of every model here (per 1M tokens) and the default group's multiplier. */
const PRICE = { input: 1, output: 4 } as const;
/** Output cap every request asks for (it bounds the pre-deduction). */
export const MAX_TOKENS = 1000;
/** server.stream_idle_timeout of the world's gateway. */
export const IDLE_MS = 1000;

/** Nano-units for `input` and `output` tokens: tokens × price per 1M × 10^9 / 10^6 × 0.7. */
export function nanoFor(input: number, output: number): bigint {
  return 700n * (BigInt(input) * BigInt(PRICE.input) + BigInt(output) * BigInt(PRICE.output));
}

/** The pre-deduction of a request of `bodyBytes` (3 bytes per token, the output cap). */
export function worstCase(bodyBytes: number): bigint {
  return nanoFor(Math.ceil(bodyBytes / 3), MAX_TOKENS);
}

/** The documented estimate: input ceil(bytes / 4), output ceil(characters delivered / 4). */
export function estimate(bodyBytes: number, outputChars: number): bigint {
  return nanoFor(Math.ceil(bodyBytes / 4), Math.ceil(outputChars / 4));
}

/** The model a request names: served by the faulty upstream on a `channel` channel alone,
 * or (backed) with a healthy channel of the same protocol at a lower priority. */
export function modelFor(client: Client, channel: Protocol, backed: boolean): string {
  if (client === "responses") return backed ? "resp-backed" : "resp-solo";
  return `${backed ? "backed" : "solo"}-${channel}`;
}

/** Channel names: the faulty channel of solo models, the faulty one tried first for backed
 * models (its own, so failures of solo requests never cool it down), the healthy fallback. */
export const CHANNEL = {
  solo: (p: Protocol) => `faulty-${p}`,
  backedFirst: (p: Protocol) => `faulty-${p}-first`,
  fallback: (p: Protocol) => `healthy-${p}`,
} as const;

export interface FaultWorld {
  readonly gw: TestGateway;
  readonly faulty: FaultyUpstream;
  readonly healthy: FaultyUpstream;
  /** Sends one request (bounded by `timeoutMs`) whose prompt names `fault`. */
  call(o: CallOptions): Promise<Call>;
  /** The usage-log entry of a request id, once written. */
  entry(requestId: string): Promise<UsageEntry>;
  close(): Promise<void>;
}

export interface CallOptions {
  readonly client: Client;
  readonly model: string;
  readonly fault: Fault;
  readonly stream: boolean;
  /** Give up (the call resolves `timedOut`) after this long; default 8 s. */
  readonly timeoutMs?: number;
}

export interface Call {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  readonly json: any;
  readonly requestId: string;
  /** The tag in the prompt: finds the upstream's side of the exchange. */
  readonly tag: string;
  /** Bytes of the request body as sent (the estimate's input). */
  readonly bodyBytes: number;
  /** The response ended by its framing (not cut off, not timed out). */
  readonly complete: boolean;
  readonly timedOut: boolean;
  /** Date.now() when the response ended (or gave up). */
  readonly endedAt: number;
  readonly tookMs: number;
}

export async function startFaultWorld(): Promise<FaultWorld> {
  const faulty = await startFaultyUpstream();
  const healthy = await startFaultyUpstream({ healthy: true });
  const protocols = ["openai", "anthropic", "gemini"] as const;
  const ch = (name: string, protocol: Protocol, url: string, models: string[], priority: number): Obj => ({
    name, protocol, base_url: url, keys: [CHANNEL_KEY], groups: ["default"], models, priority,
  });
  const served = (p: Protocol, backed: boolean) =>
    [modelFor("chat", p, backed), ...(p === "openai" ? [modelFor("responses", p, backed)] : [])];
  const models: Obj = {};
  for (const p of protocols) for (const backed of [false, true]) for (const m of served(p, backed)) {
    models[m] = { ...(m.startsWith("resp-") && { endpoint: "responses" }), price: PRICE };
  }
  const store = openSqliteStore(":memory:");
  const gw = await startTestGateway(config({
    server: { stream_idle_timeout: "1s", upstream_timeout: "3s", upstream_attempts: 3 },
    users: { alice: { credit: 1000, groups: ["default"] } },
    tokens: [token("alice-main", TOKEN)],
    channels: protocols.flatMap((p) => [
      ch(CHANNEL.solo(p), p, faulty.url, served(p, false), 10),
      ch(CHANNEL.backedFirst(p), p, faulty.url, served(p, true), 10),
      ch(CHANNEL.fallback(p), p, healthy.url, served(p, true), 0),
    ]),
    models,
  }), { store });
  return {
    gw, faulty, healthy,
    call: (o) => call(gw.url, o),
    entry: (requestId) => entryOf(gw.store, requestId),
    async close() {
      await gw.close();
      await Promise.all([faulty.close(), healthy.close()]);
      destroyAgents();
      store.close();
    },
  };
}

/** The request of a client protocol: path, auth headers and body. */
function requestOf(o: CallOptions, prompt: string): { path: string; headers: Record<string, string>; body: Obj } {
  const bearer = { authorization: `Bearer ${TOKEN}` };
  switch (o.client) {
    case "chat":
      return { path: "/v1/chat/completions", headers: bearer,
        body: { model: o.model, messages: [{ role: "user", content: prompt }], max_tokens: MAX_TOKENS, ...(o.stream && { stream: true }) } };
    case "responses":
      return { path: "/v1/responses", headers: bearer,
        body: { model: o.model, input: prompt, max_output_tokens: MAX_TOKENS, ...(o.stream && { stream: true }) } };
    case "messages":
      return { path: "/v1/messages", headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01" },
        body: { model: o.model, max_tokens: MAX_TOKENS, messages: [{ role: "user", content: prompt }], ...(o.stream && { stream: true }) } };
    case "generate":
      return {
        path: `/v1beta/models/${o.model}:${o.stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
        headers: { "x-goog-api-key": TOKEN },
        body: { contents: [{ role: "user", parts: [{ text: prompt }] }], generationConfig: { maxOutputTokens: MAX_TOKENS } },
      };
  }
}

/** One request over a fresh connection, never waiting past its deadline. */
function call(base: string, o: CallOptions): Promise<Call> {
  const tag = randomUUID().replaceAll("-", "");
  const r = requestOf(o, `Say hello. fault:${o.fault}#${tag}`);
  const body = Buffer.from(JSON.stringify(r.body));
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let done = false;
    let head: http.IncomingMessage | undefined;
    const finish = (complete: boolean, timedOut = false) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try { json = JSON.parse(text); } catch { json = undefined; }
      const endedAt = Date.now();
      resolve({
        status: head?.statusCode ?? 0, headers: head?.headers ?? {}, text, json,
        requestId: String(head?.headers["x-gateway-request-id"] ?? ""), tag, bodyBytes: body.length,
        complete, timedOut, endedAt, tookMs: endedAt - started,
      });
    };
    const req = http.request(`${base}${r.path}`, {
      method: "POST", agent: false,
      headers: { "content-type": "application/json", "content-length": body.length, ...r.headers },
    }, (res) => {
      head = res;
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => finish(true));
      res.on("error", () => finish(false));
      res.on("close", () => finish(false));
    });
    const timer = setTimeout(() => { finish(false, true); req.destroy(); }, o.timeoutMs ?? 8000);
    req.on("error", (err) => { if (head) finish(false); else if (!done) { done = true; clearTimeout(timer); reject(err); } });
    req.end(body);
  });
}

/** Waits until the upstream's side of a call has ended, and returns it. */
export async function upstreamSide(up: FaultyUpstream, c: Call, timeoutMs = 3000): Promise<FaultExchange> {
  let ex: FaultExchange | undefined;
  await eventually(() => (ex = up.find(c.tag)) !== undefined && ex.end !== "open", timeoutMs, `the upstream connection of ${c.tag} to close`);
  return ex!;
}

/** Forgets channel health, so a channel that failed in an earlier test is tried first again. */
export const forgetHealth = forgetHealthEverywhere;
