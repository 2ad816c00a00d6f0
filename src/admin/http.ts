// The admin API's side of HTTP: a JSON body read within 1 MiB (and server.body_timeout between
// bytes), JSON answers, and errors in the catalogue's shape. The request id header is set by
// whoever accepted the request, before it gets here.

import type { IncomingMessage, ServerResponse } from "node:http";
import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import { boundUnreadBody } from "../pipeline/read-body.js";
import { renderError } from "../protocols/render-error.js";
import type { ServerSettings } from "../runtime/types.js";

/** The largest admin request body: the biggest real one (a token with long allowlists) is a few KiB. */
export const MAX_ADMIN_BODY = 1024 * 1024;

/** Reads and parses a JSON body; throws the 400, 408 or 413 to answer. */
export async function readJsonBody(req: IncomingMessage, server: ServerSettings): Promise<unknown> {
  const text = await readText(req, server);
  if (text.trim() === "") throw new GatewayError(errors.invalidJson, "The request body is empty: send a JSON object.");
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new GatewayError(errors.invalidJson, `The request body is not valid JSON: ${(err as Error).message}`);
  }
}

function readText(req: IncomingMessage, server: ServerSettings): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? -1);
  if (declared > MAX_ADMIN_BODY) return Promise.reject(tooLarge());
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: GatewayError) => {
      finish();
      reject(err);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(new GatewayError(errors.requestTimeout, "The request body stalled.")), server.bodyTimeoutMs);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ADMIN_BODY) return fail(tooLarge());
      chunks.push(chunk);
      arm();
    };
    const onEnd = () => {
      finish();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const onAbort = () => fail(new GatewayError(errors.clientClosed));
    function finish(): void {
      clearTimeout(timer);
      req.off("data", onData).off("end", onEnd).off("aborted", onAbort).off("error", onAbort);
    }
    req.on("data", onData).on("end", onEnd).on("aborted", onAbort).on("error", onAbort);
    arm();
  });
}

function tooLarge(): GatewayError {
  // connection: close — the rest of an oversized body is not worth reading.
  return new GatewayError(errors.bodyTooLarge, `The request body is larger than the admin API takes (${MAX_ADMIN_BODY} bytes).`,
    { headers: { connection: "close" } });
}

/** Sends a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Sends a text answer (CSV); its content-type is among `headers`. */
export function sendText(res: ServerResponse, status: number, text: string, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { ...headers, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Sends an error in the catalogue's shape; a body not read yet is read and dropped within bounds. */
export function sendAdminError(req: IncomingMessage, res: ServerResponse, err: GatewayError, server: ServerSettings): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (!req.complete) boundUnreadBody(req, { maxBodyBytes: MAX_ADMIN_BODY, bodyTimeoutMs: server.bodyTimeoutMs });
  const text = renderError("openai", err);
  res.writeHead(err.status, { ...err.headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
