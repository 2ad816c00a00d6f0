// How the console answers: its security headers (a strict CSP on the page, nosniff and no
// referrer everywhere), JSON with no caching, and errors in the catalogue's shape.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { GatewayError } from "../../errors/gateway-error.js";
import type { ServerSettings } from "../../runtime/types.js";
import { sendAdminError, sendJson } from "../http.js";

/** The page loads only its own scripts, styles and images; nothing inline, no frames. */
export const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
  + "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Sets the headers every console answer carries. */
export function setConsoleHeaders(res: ServerResponse): void {
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "no-referrer");
}

/** Sends an HTML page (the index or the not-built page) under the CSP, never cached. */
export function sendPage(req: IncomingMessage, res: ServerResponse, status: number, html: string): void {
  const body = Buffer.from(html, "utf8");
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8", "content-length": body.length,
    "content-security-policy": CONTENT_SECURITY_POLICY, "cache-control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : body);
}

/** A console API answer: JSON, never cached. */
export function sendApiJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  sendJson(res, status, body, { "cache-control": "no-store", ...headers });
}

/** A console API error, in the catalogue's shape. */
export function sendApiError(req: IncomingMessage, res: ServerResponse, err: GatewayError, server: ServerSettings): void {
  res.setHeader("cache-control", "no-store");
  sendAdminError(req, res, err, server);
}
