// The operator endpoints, /healthz and /metrics: answered on the main listener, or, with
// metrics.listen, only on a private listener of their own (this module's ops server), so
// the public port exposes neither.

import http from "node:http";
import { listenAt } from "../runtime/listen.js";
import { log } from "../observability/log.js";
import { registry } from "../observability/metrics.js";

/** What the operator endpoints answer. */
export interface OpsEndpoints {
  /** metrics.path. */
  readonly metricsPath: string;
  /** The Prometheus text (this process's registry, or a cluster's aggregate). */
  readonly metricsText: () => Promise<string>;
  /** The /healthz answer (a cluster primary asks its workers). */
  readonly health: () => HealthAnswer | Promise<HealthAnswer>;
}

export interface HealthAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * /healthz of a serving process: 503 while draining, so load balancers stop sending. A lost
 * Redis or PostgreSQL is 200 with `"status":"degraded"` and the servers named: every gateway
 * shares them, so a 503 would pull every instance out of rotation at once (and restart them
 * under a liveness probe) for an outage no other instance avoids, while the free routes
 * still answer and billed ones resume by themselves once the server is back.
 */
export function healthAnswer(draining: boolean, degraded: readonly string[]): HealthAnswer {
  const status = draining ? "draining" : degraded.length > 0 ? "degraded" : "ok";
  return { status: draining ? 503 : 200, body: JSON.stringify({ status, degraded }) };
}

/** Whether a request is for an operator endpoint. */
export function isOpsRequest(path: string, method: string | undefined, metricsPath: string): boolean {
  return path === "/healthz" || (path === metricsPath && method === "GET");
}

/** Answers /healthz or /metrics (the caller checked isOpsRequest). */
export async function answerOps(path: string, res: http.ServerResponse, ops: OpsEndpoints): Promise<void> {
  try {
    if (path === "/healthz") {
      const { status, body } = await ops.health();
      res.writeHead(status, { "content-type": "application/json" });
      res.end(body);
      return;
    }
    const text = await ops.metricsText();
    res.writeHead(200, { "content-type": registry.contentType });
    res.end(text);
  } catch (err) {
    log.error("metrics failed", { error: String(err) });
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
}

/** A listener serving only the operator endpoints. */
export interface OpsServer {
  /** e.g. http://127.0.0.1:9464 */
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on metrics.listen and answers the operator endpoints there; 404 for anything else. */
export async function startOpsServer(listen: { readonly host: string; readonly port: number }, ops: OpsEndpoints): Promise<OpsServer> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    if (isOpsRequest(path, req.method, ops.metricsPath)) {
      void answerOps(path, res, ops);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end(`Not found: this address serves ${ops.metricsPath} and /healthz only.\n`);
  });
  const url = await listenAt(server, listen.host, listen.port);
  return {
    url,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
