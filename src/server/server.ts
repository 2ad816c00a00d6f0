// The HTTP server: raw node:http, a request id on every response, health and metrics
// endpoints outside the chain, and a graceful drain on shutdown.

import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { noUsageSink, type UsageSink } from "../billing/usage-sink.js";
import { JobOutcomes } from "../routing/job-outcomes.js";
import { JobWatch, type JobWatchTiming } from "../routing/job-watch.js";
import { keyReportSource } from "../routing/key-report.js";
import { routingState } from "../routing/routing-state.js";
import { inProcessState } from "../state/in-process.js";
import type { State } from "../state/interfaces.js";
import { createMemoryStore } from "../state/memory.js";
import { StoreUsageLog } from "../state/store-usage-log.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { errorText, log } from "../observability/log.js";
import { countConfigGeneration, countReservations, registry, reportKeys } from "../observability/metrics.js";
import { RequestLog } from "../observability/request-log.js";
import { buildChain } from "../pipeline/chain.js";
import type { RequestContext, Upgrade } from "../pipeline/context.js";
import { boundUnreadBody } from "../pipeline/read-body.js";
import { sendError } from "../pipeline/respond.js";
import { renderError } from "../protocols/render-error.js";
import { RuntimeBox } from "../runtime/box.js";
import type { Runtime } from "../runtime/types.js";
import { BodyBudget } from "../pipeline/body-budget.js";
import { newRequestId, requestIdHeader } from "../pipeline/request-id.js";
import { familyOfPath } from "../pipeline/routes.js";
import { tuneHeapForServing } from "./gc-tuning.js";
import { answerOps, healthAnswer, isOpsRequest, startOpsServer, type OpsEndpoints, type OpsServer } from "./ops.js";

export { requestIdHeader };

export interface GatewayServerOptions {
  /** The live config holder; the server reads `box.current` once per request. */
  readonly box: RuntimeBox;
  /** Accounts, usage log, limiter and keyed store; default all in memory (tests).
   * `gateway serve` opens gateway.yaml's (state/open.ts); whoever opened it closes it. */
  readonly state?: State;
  /** Also told about every finished request, after billing (default: a log line each). */
  readonly usage?: UsageSink;
  /** When the background check looks at pending jobs (default: 30 s after creation, then
   * doubling up to 10 min); tests shorten it. */
  readonly jobWatch?: JobWatchTiming;
  /** What /metrics answers (default: this process's registry; a cluster worker asks its
   * primary for the whole group's). */
  readonly metricsText?: () => Promise<string>;
  /** True in a cluster worker: the primary serves metrics.listen, once for the group. */
  readonly opsServedElsewhere?: boolean;
  /** Where the per-request JSON lines go (default: stdout). */
  readonly requestLog?: RequestLog;
}

export interface GatewayServer {
  readonly server: http.Server;
  readonly box: RuntimeBox;
  readonly state: State;
  /** Memory held by request bodies in flight, against server.max_body_memory. */
  readonly bodyBudget: BodyBudget;
  /** Base URL the server listens on, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly port: number;
  /** Base URL of the metrics.listen address, when this process serves it. */
  readonly opsUrl?: string;
  /** Stops accepting, lets in-flight requests finish up to `timeoutMs`, then closes. */
  drain(timeoutMs?: number): Promise<{ forced: number }>;
}

/** Starts the gateway on the Runtime's listen address (port 0 picks a free port). */
export async function startGateway(opts: GatewayServerOptions): Promise<GatewayServer> {
  const { box } = opts;
  const metricsText = opts.metricsText ?? (() => registry.metrics());
  tuneHeapForServing();
  const state = opts.state ?? inProcessState(new StoreUsageLog(createMemoryStore()));
  const { accounts, usageLog, limiter, admitter, keyed } = state;
  const uncountReservations = countReservations(() => accounts.reservationsHeld);
  const uncountGeneration = countConfigGeneration(() => box.current.generation);
  const requestLog = opts.requestLog ?? new RequestLog();
  const usage: UsageSink = opts.usage ?? noUsageSink;
  // server.* applies at start only, so the budget's limit is fixed for the server's life.
  const bodyBudget = new BodyBudget(box.current.server.maxBodyMemoryBytes);
  // Failed jobs are refunded when a client poll or the background check sees them.
  const routing = routingState(keyed, { shared: state.shared });
  const unreportKeys = reportKeys(keyReportSource(routing, () => box.current));
  const jobs = new JobOutcomes({ accounts, usageLog, keyed });
  const jobWatch = new JobWatch({ box, outcomes: jobs, jobs: routing.jobs, keys: routing.keys, keyHealth: routing.keyHealth, timing: opts.jobWatch });
  const chain = buildChain({ usage, accounts, usageLog, limiter, admitter, routing, bodyBudget, jobs, requestLog, live: () => box.current });
  // Requests in flight are counted, not kept in a Set: a long-lived Set whose table has
  // reached V8's old generation allocates every later table there too, and each table it
  // replaces keeps pointers to the requests it held, which minor GCs cannot see are dead.
  // That kept every request alive until the next full GC (measured: ~1.4 MB promoted per
  // scavenge, 3-4 ms pauses). WebSocket sessions, few and long, are kept so a drain can
  // close them.
  let inflight = 0;
  const sessions = new Set<Duplex>();
  let draining = false;
  const ops: OpsEndpoints = {
    metricsPath: box.current.metricsPath, metricsText, health: () => healthAnswer(draining, state.health().degraded),
  };
  // metrics.listen (restart-only, like metrics.path): the operator endpoints move off the main listener.
  const metricsListen = box.current.metricsListen;

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
    if (!upgrade && !metricsListen && isOpsRequest(path, req.method, ops.metricsPath)) {
      void answerOps(path, res, ops);
      return;
    }
    // Every field present from the start: one object shape for all requests, no
    // hidden-class transitions as stages fill it in.
    const ctx: RequestContext = {
      id, req, res, runtime, path, startNs: process.hrtime.bigint(),
      query: q === -1 ? "" : url.slice(q + 1), family: familyOfPath(path), attempts: 0,
      route: undefined, pathModel: undefined, pathAction: undefined, clientIp: undefined, token: undefined,
      user: undefined, group: undefined, body: undefined, json: undefined, files: undefined, parts: undefined, modelName: undefined, model: undefined,
      fitted: undefined, bodyMembers: undefined, channel: undefined, upstreamModel: undefined, limits: undefined, reservation: undefined, reservedUsage: undefined, output: undefined,
      holds: undefined, units: undefined, jobId: undefined, job: undefined,
      served: undefined, settled: undefined, error: undefined, upgrade,
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
        log.error("request failed outside the chain", { requestId: id, error: errorText(err) });
        if (upgrade) upgrade.socket.destroy();
        else if (!res.writableEnded) res.destroy();
      },
    );
  };
  const server = http.createServer(connectionTimeouts(box.current.server.headerTimeoutMs), (req, res) => handle(req, res));
  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // node:http leaves an upgraded socket with no 'error' listener: a client that resets it
    // while the upstream is being reached would otherwise end the process.
    socket.on("error", destroySocket);
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as Socket);
    // A refusal ends the connection: after an upgrade request there is no keep-alive, and
    // nothing in node:http ends a socket a hand-made response was bound to.
    res.shouldKeepAlive = false;
    res.once("finish", () => socket.end());
    handle(req, res, { socket, head });
  });
  server.on("clientError", answerMalformed);
  server.on("checkExpectation", refuseExpectation(box));

  const { host, port } = box.current.server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  let opsServer: OpsServer | undefined;
  if (metricsListen && !opts.opsServedElsewhere) {
    try {
      opsServer = await startOpsServer(metricsListen, ops);
    } catch (err) {
      server.close();
      throw new Error(`metrics.listen: ${(err as Error).message}`);
    }
  }
  jobWatch.start();
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    server, box, state, bodyBudget, port: address.port, url: `http://${shownHost}:${address.port}`, opsUrl: opsServer?.url,
    async drain(timeoutMs = box.current.server.drainTimeoutMs) {
      draining = true;
      const watchStopped = jobWatch.stop();
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
      await Promise.all([closed, watchStopped, opsServer?.close()]);
      requestLog.flush();
      uncountReservations();
      uncountGeneration();
      unreportKeys();
      return { forced };
    },
  };
}

/**
 * Slow clients: request headers must be whole within server.header_timeout (node checks
 * every connectionsCheckingInterval, 30 s by default, so it is set to a fraction of the
 * bound). No total request time: a large upload on a slow link may take as long as it keeps
 * sending; a stalled body is ended by server.body_timeout (read-body.ts).
 */
function connectionTimeouts(headerTimeoutMs: number): http.ServerOptions {
  return {
    keepAliveTimeout: 65_000,
    headersTimeout: headerTimeoutMs,
    requestTimeout: 0,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headerTimeoutMs / 4))),
  };
}

function destroySocket(this: Duplex): void {
  this.destroy();
}

/** Requests node cannot parse (bad framing, oversized headers) or whose headers came too
 * slowly still get a JSON error with a request id, not a bare socket close; never written
 * into a response already under way. */
function answerMalformed(err: NodeJS.ErrnoException, socket: import("node:stream").Duplex): void {
  const inFlight = (socket as { _httpMessage?: http.ServerResponse | null })._httpMessage;
  if (!socket.writable || err.code === "ECONNRESET" || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, reason, code, message } = malformedAnswer(err.code);
  const body = JSON.stringify({ error: { message, type: "invalid_request_error", code, param: null } });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `${requestIdHeader}: ${newRequestId()}\r\nconnection: close\r\n\r\n${body}`);
}

/** node answers an Expect it does not know with a bare 417; this one has a request id and
 * the caller's error shape. A body the client sends anyway is read and discarded (within
 * max_body and body_timeout): closing at once would reset a connection the client is still
 * writing to, and the client could lose the answer. */
function refuseExpectation(box: RuntimeBox): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    const body = renderError(familyOfPath(req.url ?? "/"), new GatewayError(errors.expectationFailed));
    res.writeHead(417, {
      [requestIdHeader]: newRequestId(), "content-type": "application/json", "content-length": Buffer.byteLength(body),
    });
    res.end(body);
    boundUnreadBody(req, box.current.server);
  };
}

function malformedAnswer(code: string | undefined): { status: number; reason: string; code: string; message: string } {
  if (code === "HPE_HEADER_OVERFLOW") {
    return { status: 431, reason: "Request Header Fields Too Large", code: "headers_too_large", message: "The request headers are too large." };
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return { status: 408, reason: "Request Timeout", code: "request_timeout", message: "The request headers were not received in time." };
  }
  return { status: 400, reason: "Bad Request", code: "malformed_request", message: "The request could not be parsed as HTTP." };
}

export { RuntimeBox };
export type { Runtime };
