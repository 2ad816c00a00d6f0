// Reads the JSON request body within max_body (413 beyond it) and parses it once.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";

export function bodyStage(): Stage<RequestContext> {
  return async (ctx, next) => {
    const type = ctx.req.headers["content-type"];
    if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
      throw new GatewayError(errors.unsupportedMediaType);
    }
    ctx.body = await readBody(ctx);
    let parsed: unknown;
    try {
      parsed = JSON.parse(ctx.body.toString("utf8"));
    } catch (err) {
      throw new GatewayError(errors.invalidJson, `The request body is not valid JSON: ${(err as Error).message}`);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new GatewayError(errors.invalidJson, "The request body must be a JSON object.");
    }
    ctx.json = parsed as Record<string, unknown>;
    await next();
  };
}

/** Collects the body, refusing early when Content-Length or the bytes read exceed the limit. */
export function readBody(ctx: RequestContext): Promise<Buffer> {
  const limit = ctx.runtime.server.maxBodyBytes;
  // connection: close — the rest of an oversized body is not worth reading.
  const tooLarge = () => new GatewayError(errors.bodyTooLarge, `The request body exceeds the limit of ${limit} bytes.`,
    { headers: { connection: "close" } });
  const declared = Number(ctx.req.headers["content-length"]);
  if (declared > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const req = ctx.req;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume(); // discard the rest so the 413 can be written
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => { cleanup(); resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)); };
    const onError = (err: Error) => { cleanup(); reject(err); };
    const cleanup = () => { req.off("data", onData); req.off("end", onEnd); req.off("error", onError); };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
