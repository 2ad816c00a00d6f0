// The HTTP server: raw node:http, a request id on every response, health and metrics
// endpoints outside the chain, and a graceful drain on shutdown.

import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { billingSink } from "../billing/billing-sink.js";
import { Ledger } from "../billing/ledger.js";
import { logUsageSink, type UsageSink } from "../billing/usage-sink.js";
import { SlidingLogLimiter } from "../limits/sliding-log.js";
import { createMemoryStore } from "../state/memory.js";
import type { Store } from "../state/store.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { log } from "../observability/log.js";
import { registry } from "../observability/metrics.js";
import { buildChain } from "../pipeline/chain.js";
import type { RequestContext, Upgrade } from "../pipeline/context.js";
import { sendError } from "../pipeline/respond.js";
import { RuntimeBox } from "../runtime/box.js";
import type { Runtime } from "../runtime/types.js";
import { newRequestId } from "./request-id.js";
import { familyOfPath } from "./routes.js";
import { tuneHeapForServing } from "./gc-tuning.js";

export const requestIdHeader = "X-Gateway-Request-Id";

export interface GatewayServerOptions {
  /** The live config holder; the server reads `box.current` once per request. */
  readonly box: RuntimeBox;
  /** Spend and usage log; default an in-memory store (tests). `gateway serve` opens gateway.yaml's. */
  readonly store?: Store;
  /** Also told about every finished request, after billing (default: a log line each). */
  readonly usage?: UsageSink;
}

export interface GatewayServer {
  readonly server: http.Server;
  readonly box: RuntimeBox;
  readonly store: Store;
  readonly ledger: Ledger;
  /** Base URL the server listens on, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish up to `timeoutMs`, then closes. */
  drain(timeoutMs?: number): Promise<{ forced: number }>;
}

/** Starts the gateway on the Runtime's listen address (port 0 picks a free port). */
export async function startGateway(opts: GatewayServerOptions): Promise<GatewayServer> {
  const { box } = opts;
  tuneHeapForServing();
  const store = opts.store ?? createMemoryStore();
  const ledger = new Ledger(store);
  const billing = billingSink(ledger);
  const observer = opts.usage ?? logUsageSink;
  const usage: UsageSink = {
    record(ctx, status, durationMs) {
      billing.record(ctx, status, durationMs);
      observer.record(ctx, status, durationMs);
    },
  };
  const chain = buildChain({ usage, ledger, limiter: new SlidingLogLimiter() });
  // Requests in flight are counted, not kept in a Set: a long-lived Set whose table has
  // reached V8's old generation allocates every later table there too, and each table it
  // replaces keeps pointers to the requests it held, which minor GCs cannot see are dead.
  // That kept every request alive until the next full GC (measured: ~1.4 MB promoted per
  // scavenge, 3-4 ms pauses). WebSocket sessions, few and long, are kept so a drain can
  // close them.
  let inflight = 0;
  const sessions = new Set<Duplex>();
  let draining = false;

  /** Serves one request; for a WebSocket upgrade, `upgrade` holds the raw socket (and `res`
   * is bound to it, so a refusal is still an ordinary HTTP answer). */
  const handle = (req: http.IncomingMessage, res: http.ServerResponse, upgrade?: Upgrade) => {
    const id = newRequestId();
    res.setHeader(requestIdHeader, id);
    if (draining) res.setHeader("connection", "close");
    const runtime = box.current;
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    if (!upgrade && (path === "/healthz" || (path === runtime.metricsPath && req.method === "GET"))) {
      void serveOps(path, res, draining);
      return;
    }
    // Every field present from the start: one object shape for all requests, no
    // hidden-class transitions as stages fill it in.
    const ctx: RequestContext = {
      id, req, res, runtime, path, startNs: process.hrtime.bigint(),
      query: q === -1 ? "" : url.slice(q + 1), family: familyOfPath(path), attempts: 0,
      route: undefined, pathModel: undefined, pathAction: undefined, clientIp: undefined, token: undefined,
      user: undefined, group: undefined, body: undefined, json: undefined, files: undefined, modelName: undefined, model: undefined,
      channel: undefined, upstreamModel: undefined, upstreamStatus: undefined, outputChars: undefined,
      reservation: undefined, units: undefined, unitsEstimated: undefined, jobId: undefined, error: undefined, usage: undefined,
      firstByteNs: undefined, upgrade,
    };
    if (draining) {
      sendError(ctx, new GatewayError(errors.shuttingDown));
      return;
    }
    inflight++;
    if (upgrade) sessions.add(upgrade.socket);
    const done = () => {
      inflight--;
      if (upgrade) sessions.delete(upgrade.socket);
    };
    chain(ctx).then(
      done,
      (err) => {
        done();
        log.error("request failed outside the chain", { requestId: id, error: String(err) });
        if (upgrade) upgrade.socket.destroy();
        else if (!res.writableEnded) res.destroy();
      },
    );
  };
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => handle(req, res));
  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as Socket);
    // A refusal ends the connection: after an upgrade request there is no keep-alive, and
    // nothing in node:http ends a socket a hand-made response was bound to.
    res.shouldKeepAlive = false;
    res.once("finish", () => socket.end());
    handle(req, res, { socket, head });
  });
  server.headersTimeout = 30_000;
  server.on("clientError", answerMalformed);

  const { host, port } = box.current.server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    server, box, store, ledger, port: address.port, url: `http://${shownHost}:${address.port}`,
    async drain(timeoutMs = box.current.server.drainTimeoutMs) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + timeoutMs;
      while (inflight > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        server.closeIdleConnections();
      }
      const forced = inflight;
      if (forced > 0) log.warn("drain deadline passed; closing open requests", { forced });
      for (const socket of sessions) socket.destroy(); // WebSocket sessions are not server connections
      server.closeAllConnections();
      await closed;
      return { forced };
    },
  };
}

/** Requests node cannot parse (bad framing, oversized headers) still get a JSON error
 * with a request id, not a bare socket close. */
function answerMalformed(err: NodeJS.ErrnoException, socket: import("node:stream").Duplex): void {
  if (!socket.writable || (err as { code?: string }).code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === "HPE_HEADER_OVERFLOW";
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({ error: {
    message: tooLarge ? "The request headers are too large." : "The request could not be parsed as HTTP.",
    type: "invalid_request_error", code: tooLarge ? "headers_too_large" : "malformed_request", param: null,
  } });
  socket.end(`HTTP/1.1 ${status} ${tooLarge ? "Request Header Fields Too Large" : "Bad Request"}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `${requestIdHeader}: ${newRequestId()}\r\nconnection: close\r\n\r\n${body}`);
}

/** /healthz (503 while draining, so load balancers stop sending) and /metrics. */
async function serveOps(path: string, res: http.ServerResponse, draining: boolean): Promise<void> {
  try {
    const isHealth = path === "/healthz";
    const body = isHealth ? (draining ? '{"status":"draining"}' : '{"status":"ok"}') : await registry.metrics();
    const status = isHealth && draining ? 503 : 200;
    res.writeHead(status, { "content-type": isHealth ? "application/json" : registry.contentType });
    res.end(body);
  } catch (err) {
    log.error("metrics failed", { error: String(err) });
    res.writeHead(500).end();
  }
}

export { RuntimeBox };
export type { Runtime };
