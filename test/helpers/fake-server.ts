// The scaffolding the fake upstreams (fake-openai, fake-anthropic, fake-gemini,
// fake-responses) share: an HTTP server on 127.0.0.1 that collects each request body, parses
// it as JSON, records what it received and hands it to the fake's own `answer`; closing it
// destroys open sockets, so a hung or streaming request never holds a test up. Plus the
// small writers the fakes have in common.

import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What every fake records of a request, for assertions. */
export interface BaseReceived {
  readonly method: string;
  /** The raw request target, query included. */
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  /** The body parsed as JSON; `{}` when empty or not JSON. */
  readonly body: Record<string, unknown>;
  /** The body as received. */
  readonly raw: Buffer;
}

/** A running fake: its base URL, every request it received (in order), and `close`. */
export interface FakeServer<R> {
  readonly url: string;
  readonly received: R[];
  close(): Promise<void>;
}

export interface FakeServerOptions<R extends BaseReceived> {
  /** Port to listen on; default 0 (a free one). */
  readonly port?: number;
  /** Builds the fake's own record from the common one (e.g. adds what it parsed from the
   * headers or URL); default: the common record as is. */
  readonly describe?: (base: BaseReceived, req: http.IncomingMessage) => R;
}

/**
 * Starts a fake on 127.0.0.1. Each request is recorded in `received`, then answered by
 * `answer` with its sequence number (1 for the first request).
 */
export async function startFakeServer<R extends BaseReceived = BaseReceived>(
  answer: (r: R, res: http.ServerResponse, seq: number) => void,
  opts: FakeServerOptions<R> = {},
): Promise<FakeServer<R>> {
  const received: R[] = [];
  const sockets = new Set<Socket>();
  const describe = opts.describe ?? ((base: BaseReceived) => base as R);
  let seq = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> = {};
      try { body = JSON.parse(raw.toString("utf8") || "{}"); } catch { /* left empty */ }
      const r = describe({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, raw }, req);
      received.push(r);
      answer(r, res, ++seq);
    });
  });
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/**
 * How a fake upstream answers a request made with a given key, with the provider's real
 * error body: the key is not valid (OpenAI 401 invalid_api_key, Anthropic 401
 * authentication_error, Gemini 400 API_KEY_INVALID), forbidden (403: OpenAI
 * unsupported_country_region_territory, Anthropic permission_error, Gemini
 * PERMISSION_DENIED), its account is out of credit (OpenAI 429 insufficient_quota,
 * Anthropic 400 "credit balance is too low", Gemini 429 RESOURCE_EXHAUSTED on a per-day
 * quota), or it is merely rate limited (429 of an ordinary rate limit: the key stays good).
 */
export type KeyFaultScript = "invalid_key" | "forbidden" | "no_credit" | "rate_limited";

/** The key in `Authorization: Bearer …`; "" when there is none. */
export function bearerKey(headers: http.IncomingHttpHeaders): string {
  const auth = headers.authorization ?? "";
  return auth.startsWith("Bearer ") ? auth.slice(7) : "";
}

/** Answers with a JSON body (`indent` spaces per level, default none); `headers` may
 * override the `application/json` content type. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers?: http.OutgoingHttpHeaders, indent?: number): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body, null, indent));
}

/** Answers with an OpenAI error body (chat completions and the Responses API share it). */
export function sendOpenAIError(
  res: http.ServerResponse, status: number, message: string, type: string, code: string | null, headers?: Record<string, string>,
): void {
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
}

/** Writes `lines` (after the head) and ends: all at once, or one every `delayMs`, stopping
 * early if the response was destroyed. */
export function sendLines(res: http.ServerResponse, lines: readonly string[], delayMs = 0): void {
  if (delayMs === 0) {
    res.end(lines.join(""));
    return;
  }
  let i = 0;
  const tick = () => {
    if (res.destroyed) return;
    res.write(lines[i++]);
    if (i < lines.length) setTimeout(tick, delayMs);
    else res.end();
  };
  tick();
}

/** Splits `s` into `n` (≥1) roughly equal non-empty pieces (fewer if `s` is short; `[""]` if empty). */
export function splitText(s: string, n: number): string[] {
  const k = Math.max(1, Math.min(n, s.length));
  const size = Math.ceil(s.length / k);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out.length > 0 ? out : [""];
}
