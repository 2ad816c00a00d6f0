// The HTTP server: raw node:http, a request id on every response, health and metrics
// endpoints outside the lifecycle, and a graceful drain on shutdown. Starting is a few
// named steps: open the state, build the lifecycle, create the server, listen, start the
// background work; the drain is its own.

import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { AccountDirectory, type DirectoryOptions } from "../accounts/directory.js";
import { MemoryAccountStore } from "../accounts/memory-store.js";
import { AccountService } from "../accounts/service.js";
import type { AccountStore } from "../accounts/store.js";
import { ADMIN_PREFIX, AdminApi } from "../admin/api.js";
import { sendAdminError } from "../admin/http.js";
import { startAdminServer, type AdminServer } from "../admin/listener.js";
import { ConsoleApp, isConsolePath } from "../admin/console/app.js";
import { noUsageSink, type UsageSink } from "../pipeline/usage-sink.js";
import { JobOutcomes } from "../routing/job-outcomes.js";
import { JobWatch, type JobWatchTiming } from "../routing/job-watch.js";
import { KeyControl } from "../routing/key-control.js";
import { KeyRecovery } from "../routing/key-recovery.js";
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
import { buildLifecycle } from "../pipeline/lifecycle.js";
import { PriceFallbacks } from "../pipeline/price-fallbacks.js";
import { newContext, type RequestContext, type Upgrade } from "../pipeline/context.js";
import type { RoutingState } from "../routing/routing-state.js";
import { boundUnreadBody } from "../pipeline/read-body.js";
import { sendError } from "../pipeline/respond.js";
import { renderError } from "../protocols/render-error.js";
import { RuntimeBox } from "../runtime/box.js";
import type { Runtime } from "../runtime/types.js";
import { listenAt } from "../runtime/listen.js";
import { BodyBudget } from "../pipeline/body-budget.js";
import { newRequestId, requestIdHeader } from "../pipeline/request-id.js";
import { protocolOfPath } from "../pipeline/routes.js";
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
  /** Stored users, tokens, credit and codes (default: in memory). Whoever opened it closes it. */
  readonly accountStore?: AccountStore;
  /** How the account caches follow the store's change feed (tests shorten polling). */
  readonly directory?: DirectoryOptions;
}

export interface GatewayServer {
  readonly server: http.Server;
  readonly box: RuntimeBox;
  readonly state: State;
  /** Stored accounts: the store, the cache over it, and the actions on it. */
  readonly accounts: { readonly store: AccountStore; readonly directory: AccountDirectory; readonly service: AccountService };
  /** Memory held by request bodies in flight, against server.max_body_memory. */
  readonly bodyBudget: BodyBudget;
  /** An operator's hand on channel keys: take one out of rotation, put it back (admin API). */
  readonly keyControl: KeyControl;
  /** Base URL the server listens on, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly port: number;
  /** Base URL of the metrics.listen address, when this process serves it. */
  readonly opsUrl?: string;
  /** Base URL of the admin.listen address, when set. */
  readonly adminUrl?: string;
  /** Stops accepting, lets in-flight requests finish up to `timeoutMs`, then closes. */
  drain(timeoutMs?: number): Promise<{ forced: number }>;
}

/** Starts the gateway on the Runtime's listen address (port 0 picks a free port). */
export async function startGateway(opts: GatewayServerOptions): Promise<GatewayServer> {
  tuneHeapForServing();
  const opened = openState(opts);
  const lifecycle = buildLifecycle({
    usage: opened.usage, accounts: opened.state.accounts, usageLog: opened.state.usageLog, limiter: opened.state.limiter,
    admitter: opened.state.admitter, routing: opened.routing, bodyBudget: opened.bodyBudget, jobs: opened.jobs,
    requestLog: opened.requestLog, live: () => opts.box.current, priceFallbacks: new PriceFallbacks(), directory: opened.directory,
    accountService: opened.accountService,
  });
  await opened.directory.start();
  const requests = new Requests(opts.box, lifecycle, opened.ops, opened.admin, opened.console);
  const server = createServer(opts.box, requests);
  const { host, port } = opts.box.current.server;
  const url = await listenAt(server, host, port);
  const adminServer = await startAdminListener(opts.box.current, opened, server);
  const opsServer = await startBackground(opts, opened, server).catch(async (err: unknown) => {
    await adminServer?.close();
    throw err;
  });
  return {
    server, box: opts.box, state: opened.state,
    accounts: { store: opened.accountStore, directory: opened.directory, service: opened.accountService }, bodyBudget: opened.bodyBudget,
    keyControl: opened.keyControl, port: (server.address() as AddressInfo).port,
    url, opsUrl: opsServer?.url, adminUrl: adminServer?.url,
    drain: (timeoutMs = opts.box.current.server.drainTimeoutMs) => drain(server, requests, opened, { opsServer, adminServer }, timeoutMs),
  };
}

/** What the server holds open for its life: the state, the routing state over it, the
 * operator endpoints, and what stops reporting them at the drain. */
interface Opened {
  readonly state: State;
  readonly usage: UsageSink;
  readonly requestLog: RequestLog;
  readonly bodyBudget: BodyBudget;
  readonly routing: RoutingState;
  readonly jobs: JobOutcomes;
  readonly jobWatch: JobWatch;
  readonly keyControl: KeyControl;
  /** channels[].probe: puts keys back that answer again. */
  readonly keyRecovery: KeyRecovery;
  readonly ops: OpsEndpoints & { draining: boolean };
  readonly accountStore: AccountStore;
  /** Stored tokens and users, cached and following the store's change feed. */
  readonly directory: AccountDirectory;
  /** The operator's and token holders' account actions (admin API, redemption). */
  readonly accountService: AccountService;
  /** The admin API's handler (on the main listener, or admin.listen's). */
  readonly admin: AdminApi;
  /** The console (/console): on the main listener, and on admin.listen's when set. */
  readonly console: ConsoleApp;
  /** Stops the gauges this server registered. */
  readonly unreport: () => void;
}

/** Opens (or takes) the state and what works over it. */
function openState(opts: GatewayServerOptions): Opened {
  const { box } = opts;
  const state = opts.state ?? inProcessState(new StoreUsageLog(createMemoryStore()));
  const { accounts, usageLog, keyed } = state;
  const uncountReservations = countReservations(() => accounts.reservationsHeld);
  const uncountGeneration = countConfigGeneration(() => box.current.generation);
  // Failed jobs are refunded when a client poll or the background check sees them.
  const routing = routingState(keyed, { shared: state.shared });
  const unreportKeys = reportKeys(keyReportSource(routing, () => box.current));
  const jobs = new JobOutcomes({ accounts, usageLog, keyed });
  const ops = {
    metricsPath: box.current.metricsPath, metricsText: opts.metricsText ?? (() => registry.metrics()), draining: false,
    health: () => healthAnswer(ops.draining, state.health().degraded),
  };
  const accountStore = opts.accountStore ?? new MemoryAccountStore();
  const directory = new AccountDirectory(accountStore, opts.directory);
  // A change made through this process applies here before its answer; others follow the feed.
  const accountService = new AccountService(accountStore, () => box.current, accounts, () => directory.refresh());
  const keyControl = new KeyControl({ keyed, runtime: () => box.current, changed: (channel) => routing.keyHealth.forgetView(channel) });
  const admin = new AdminApi(() => box.current, { service: accountService, store: accountStore, usageLog, keyControl, now: Date.now });
  const consoleApp = new ConsoleApp({ live: () => box.current, directory, service: accountService, store: accountStore, keyed, limiter: state.limiter, usageLog, admin });
  return {
    state, usage: opts.usage ?? noUsageSink, requestLog: opts.requestLog ?? new RequestLog(),
    accountStore, directory, accountService, admin, console: consoleApp,
    // server.* applies at start only, so the budget's limit is fixed for the server's life.
    bodyBudget: new BodyBudget(box.current.server.maxBodyMemoryBytes),
    routing, jobs, ops,
    jobWatch: new JobWatch({ box, outcomes: jobs, jobs: routing.jobs, keys: routing.keys, keyHealth: routing.keyHealth, timing: opts.jobWatch }),
    keyControl,
    keyRecovery: new KeyRecovery({ keyed, keyHealth: routing.keyHealth, runtime: () => box.current, shared: state.shared }),
    unreport: () => {
      uncountReservations();
      uncountGeneration();
      unreportKeys();
    },
  };
}

/**
 * The requests in flight, and how one is handed to the lifecycle. Requests in flight are
 * counted, not kept in a Set: a long-lived Set whose table has reached V8's old generation
 * allocates every later table there too, and each table it replaces keeps pointers to the
 * requests it held, which minor GCs cannot see are dead. That kept every request alive
 * until the next full GC (measured: ~1.4 MB promoted per scavenge, 3-4 ms pauses).
 * WebSocket sessions, few and long, are kept so a drain can close them.
 */
class Requests {
  inflight = 0;
  readonly sessions = new Set<Duplex>();
  // metrics.listen (restart-only, like metrics.path): the operator endpoints move off the main listener.
  readonly #opsHere: boolean;
  // admin.listen (restart-only): the admin API moves off the main listener, which answers 404 there.
  readonly #adminHere: boolean;

  constructor(
    readonly box: RuntimeBox,
    readonly lifecycle: (ctx: RequestContext) => Promise<void>,
    readonly ops: OpsEndpoints & { draining: boolean },
    readonly admin: AdminApi,
    readonly console: ConsoleApp,
  ) {
    this.#opsHere = !box.current.metricsListen;
    this.#adminHere = !box.current.admin?.listen;
  }

  /** Serves one request; for a WebSocket upgrade, `upgrade` holds the raw socket (and `res`
   * is bound to it, so a refusal is still an ordinary HTTP answer). */
  handle(req: http.IncomingMessage, res: http.ServerResponse, upgrade?: Upgrade): void {
    const id = newRequestId();
    res.setHeader(requestIdHeader, id);
    const draining = this.ops.draining;
    if (draining) res.setHeader("connection", "close");
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    if (!upgrade && this.#opsHere && isOpsRequest(path, req.method, this.ops.metricsPath)) {
      void answerOps(path, res, this.ops);
      return;
    }
    if (!upgrade && path.startsWith(ADMIN_PREFIX)) {
      this.#answerAdmin(req, res, path, q === -1 ? "" : url.slice(q + 1), id);
      return;
    }
    if (!upgrade && isConsolePath(path)) {
      this.#answerConsole(req, res, path, q === -1 ? "" : url.slice(q + 1), id);
      return;
    }
    const ctx = newContext(id, req, res, this.box.current, path, q === -1 ? "" : url.slice(q + 1), upgrade);
    if (draining) {
      sendError(ctx, new GatewayError(errors.shuttingDown));
      return;
    }
    this.inflight++;
    if (upgrade) this.sessions.add(upgrade.socket);
    this.lifecycle(ctx).then(
      () => this.#done(upgrade),
      (err: unknown) => {
        this.#done(upgrade);
        log.error("request failed outside the chain", { requestId: id, error: errorText(err) });
        if (upgrade) upgrade.socket.destroy();
        else if (!res.writableEnded) res.destroy();
      },
    );
  }

  /** Admin requests skip the lifecycle (no usage log, no billing); counted so a drain waits for them. */
  #answerAdmin(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: string, requestId: string): void {
    const runtime = this.box.current;
    if (!this.#adminHere || this.ops.draining) {
      sendAdminError(req, res, new GatewayError(this.#adminHere ? errors.shuttingDown : errors.notFound), runtime.server);
      return;
    }
    this.inflight++;
    void this.admin.handle({ req, res, path, query, requestId }).finally(() => this.inflight--);
  }

  /** Console requests skip the lifecycle too. With admin.listen set, operators use the
   * console there; customers still use it here. */
  #answerConsole(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: string, requestId: string): void {
    if (this.ops.draining) {
      sendAdminError(req, res, new GatewayError(errors.shuttingDown), this.box.current.server);
      return;
    }
    this.inflight++;
    void this.console.handle({ req, res, path, query, requestId, operators: this.#adminHere }).finally(() => this.inflight--);
  }

  #done(upgrade: Upgrade | undefined): void {
    this.inflight--;
    if (upgrade) this.sessions.delete(upgrade.socket);
  }
}

/** The HTTP server: requests and WebSocket upgrades to the lifecycle, malformed requests
 * and unknown expectations answered from the catalogue. */
function createServer(box: RuntimeBox, requests: Requests): http.Server {
  const server = http.createServer(connectionTimeouts(box.current.server.headerTimeoutMs), (req, res) => requests.handle(req, res));
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
    requests.handle(req, res, { socket, head });
  });
  server.on("clientError", answerMalformed);
  server.on("checkExpectation", refuseExpectation(box));
  return server;
}

/** Starts admin.listen's listener when it is set; closes the main server when it cannot. */
async function startAdminListener(runtime: Runtime, opened: Opened, server: http.Server): Promise<AdminServer | undefined> {
  const listenOn = runtime.admin?.listen;
  if (!listenOn) return undefined;
  try {
    return await startAdminServer(listenOn, opened.admin, opened.console);
  } catch (err) {
    server.close();
    throw new Error(`admin.listen: ${(err as Error).message}`);
  }
}

/** Starts the operator listener (metrics.listen, unless a cluster primary serves it), the
 * background job check and the channel key probes. */
async function startBackground(opts: GatewayServerOptions, opened: Opened, server: http.Server): Promise<OpsServer | undefined> {
  const metricsListen = opts.box.current.metricsListen;
  let opsServer: OpsServer | undefined;
  if (metricsListen && !opts.opsServedElsewhere) {
    try {
      opsServer = await startOpsServer(metricsListen, opened.ops);
    } catch (err) {
      server.close();
      throw new Error(`metrics.listen: ${(err as Error).message}`);
    }
  }
  opened.jobWatch.start();
  opened.keyRecovery.start();
  return opsServer;
}

/** Stops accepting, lets the requests in flight finish up to `timeoutMs`, then closes
 * what is left and stops the background work. */
async function drain(
  server: http.Server, requests: Requests, opened: Opened,
  listeners: { readonly opsServer?: OpsServer; readonly adminServer?: AdminServer }, timeoutMs: number,
): Promise<{ forced: number }> {
  const { opsServer, adminServer } = listeners;
  opened.ops.draining = true;
  const watchStopped = Promise.all([opened.jobWatch.stop(), opened.keyRecovery.stop()]);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const deadline = Date.now() + timeoutMs;
  while ((requests.inflight > 0 || (adminServer?.inflight() ?? 0) > 0) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    server.closeIdleConnections();
  }
  const forced = requests.inflight;
  if (forced > 0) log.warn("drain deadline passed; closing open requests", { forced });
  for (const socket of requests.sessions) socket.destroy(); // WebSocket sessions are not server connections
  server.closeAllConnections();
  await Promise.all([closed, watchStopped, opsServer?.close(), adminServer?.close()]);
  opened.directory.stop();
  opened.requestLog.flush();
  opened.unreport();
  return { forced };
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
function answerMalformed(err: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as { _httpMessage?: http.ServerResponse | null })._httpMessage;
  if (!socket.writable || err.code === "ECONNRESET" || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const error = malformedError(err.code);
  const body = renderError("openai", error);
  socket.end(`HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status]}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `${requestIdHeader}: ${newRequestId()}\r\nconnection: close\r\n\r\n${body}`);
}

/** node answers an Expect it does not know with a bare 417; this one has a request id and
 * the caller's error shape. A body the client sends anyway is read and discarded (within
 * max_body and body_timeout): closing at once would reset a connection the client is still
 * writing to, and the client could lose the answer. */
function refuseExpectation(box: RuntimeBox): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    const error = new GatewayError(errors.expectationFailed);
    const body = renderError(protocolOfPath(req.url ?? "/"), error);
    res.writeHead(error.status, {
      [requestIdHeader]: newRequestId(), "content-type": "application/json", "content-length": Buffer.byteLength(body),
    });
    res.end(body);
    boundUnreadBody(req, box.current.server);
  };
}

/** The catalogued error for what node could not parse. */
function malformedError(code: string | undefined): GatewayError {
  if (code === "HPE_HEADER_OVERFLOW") return new GatewayError(errors.headersTooLarge);
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return new GatewayError(errors.requestTimeout, "The request headers were not received in time.");
  return new GatewayError(errors.malformedRequest);
}

export { RuntimeBox };
export type { Runtime };
