// admin.listen: a private listener that serves only the admin API and the console (the main
// one then answers 404 under /admin/, and refuses operators' console sessions), like
// metrics.listen's for /metrics. Every answer carries a request id.

import http from "node:http";
import { listenAt } from "../runtime/listen.js";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { newRequestId, requestIdHeader } from "../pipeline/request-id.js";
import { renderError } from "../protocols/render-error.js";
import { ADMIN_PREFIX, type AdminApi } from "./api.js";
import { isConsolePath, type ConsoleApp } from "./console/app.js";

export interface AdminServer {
  /** e.g. http://127.0.0.1:9465 */
  readonly url: string;
  /** Requests being answered now (a drain waits for them). */
  readonly inflight: () => number;
  close(): Promise<void>;
}

/** Listens on `listen` and answers the admin API (and the console, when given) there; 404
 * for any other path. */
export async function startAdminServer(
  listen: { readonly host: string; readonly port: number }, api: AdminApi, consoleApp?: ConsoleApp,
): Promise<AdminServer> {
  let inflight = 0;
  const server = http.createServer((req, res) => {
    const requestId = newRequestId();
    res.setHeader(requestIdHeader, requestId);
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? "" : url.slice(q + 1);
    if (consoleApp && isConsolePath(path)) {
      inflight++;
      void consoleApp.handle({ req, res, path, query, requestId, operators: true }).finally(() => inflight--);
      return;
    }
    if (!path.startsWith(ADMIN_PREFIX)) {
      const body = renderError("openai", new GatewayError(errors.notFound, "This address serves the admin API (/admin/v1/) and the console (/console) only."));
      res.writeHead(404, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
      req.resume();
      return;
    }
    inflight++;
    void api.handle({ req, res, path, query, requestId }).finally(() => inflight--);
  });
  const url = await listenAt(server, listen.host, listen.port);
  return {
    url,
    inflight: () => inflight,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // Admin answers are short: by the time the drain closes this, the ones in flight are done.
      server.closeAllConnections();
    }),
  };
}
