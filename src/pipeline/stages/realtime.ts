// The realtime voice API: a WebSocket the gateway accepts from the client and opens to the
// channel (with the channel's key), relaying frames both ways as they come and adding up
// the usage of every `response.done` for billing when the session ends.

import type { IncomingHttpHeaders } from "node:http";
import WebSocket, { WebSocketServer } from "ws";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { log } from "../../observability/log.js";
import { addRealtimeUsage } from "../../protocols/openai/realtime-usage.js";
import { emptyUsage } from "../../protocols/usage.js";
import { providers } from "../../providers/index.js";
import { upstreamUrl } from "../../providers/provider.js";
import { keyInRotation } from "../../routing/key-pick.js";
import type { RoutingState } from "../../routing/routing-state.js";
import { planAttempts } from "../../routing/plan.js";
import type { Channel } from "../../runtime/types.js";
import { requestIdHeader } from "../../server/request-id.js";
import type { Stage } from "../compose.js";
import type { RequestContext } from "../context.js";
import { KEY_PROTOCOL } from "./auth.js";
import { candidateTiers } from "./candidates.js";


/** Subprotocols to offer upstream: the client's, minus the one carrying its token. */
function upstreamProtocols(headers: IncomingHttpHeaders): string[] {
  const offered = String(headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim()).filter(Boolean);
  return offered.filter((p) => !p.startsWith(KEY_PROTOCOL));
}

/** Takes the model from the query (`?model=`), where realtime clients name it. */
export function realtimeModelStage(): Stage<RequestContext> {
  return (ctx, next) => {
    if (!ctx.upgrade) throw new GatewayError(errors.upgradeRequired);
    ctx.pathModel = new URLSearchParams(ctx.query).get("model") ?? undefined;
    return next();
  };
}

type Frame = [WebSocket.RawData, boolean];

/** Opens the upstream socket; rejects with the gateway error for a refusal. The upstream
 * speaks first (session.created), so its frames are held in `early` from the start, before
 * the client is connected to receive them. */
function connectUpstream(
  ctx: RequestContext, channel: Channel, key: string, upstreamModel: string, early: Frame[],
): Promise<{ upstream: WebSocket; hold: (data: WebSocket.RawData, isBinary: boolean) => void }> {
  const url = upstreamUrl(channel.baseUrl, `/v1/realtime?model=${encodeURIComponent(upstreamModel)}`);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const beta = ctx.req.headers["openai-beta"];
  const upstream = new WebSocket(url, upstreamProtocols(ctx.req.headers), {
    headers: { ...providers[channel.protocol].authHeaders(key), ...(typeof beta === "string" ? { "openai-beta": beta } : {}) },
    handshakeTimeout: ctx.runtime.server.upstreamTimeoutMs,
  });
  const hold = (data: WebSocket.RawData, isBinary: boolean) => { early.push([data, isBinary]); };
  upstream.on("message", hold);
  return new Promise((resolve, reject) => {
    upstream.once("open", () => resolve({ upstream, hold }));
    upstream.once("unexpected-response", (_req, res) => {
      res.resume();
      const status = res.statusCode ?? 502;
      reject(new GatewayError(status === 429 ? errors.upstreamRateLimited : status === 401 || status === 403 ? errors.upstreamAuthFailed : errors.upstreamError,
        undefined, { status: status === 429 ? 429 : 502 }));
    });
    upstream.once("error", () => reject(new GatewayError(errors.upstreamUnavailable)));
  });
}

/** A close code one side reported, as one the other side may be sent (1005, 1006 and 1015
 * only describe what happened locally). */
function sendable(code: number): number {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999) ? code : 1000;
}

/**
 * Completes the client's handshake (its 101 carries the request id). ws settles it before
 * returning: a handshake it refuses becomes a 400 in our shape (the response is still ours to
 * write), and a client that left while the upstream was reached ends the request, instead of
 * a wait for a callback that never comes.
 */
function acceptClient(wss: WebSocketServer, ctx: RequestContext): WebSocket {
  const { socket, head } = ctx.upgrade!;
  let client: WebSocket | undefined;
  let refusal: Error | undefined;
  const addId = (headers: string[]) => { headers.push(`${requestIdHeader}: ${ctx.id}`); };
  const onRefusal = (err: Error) => { refusal = err; };
  wss.once("headers", addId);
  wss.once("wsClientError", onRefusal);
  try {
    wss.handleUpgrade(ctx.req, socket as never, head, (ws) => { client = ws; });
  } finally {
    wss.off("headers", addId);
    wss.off("wsClientError", onRefusal);
  }
  if (client) {
    ctx.res.detachSocket(socket as never);
    return client;
  }
  if (refusal) throw new GatewayError(errors.invalidParameter, `The WebSocket handshake is invalid: ${refusal.message}.`);
  throw new GatewayError(errors.clientClosed);
}

export function realtimeStage(routing: Pick<RoutingState, "keys" | "keyHealth">): Stage<RequestContext> {
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => [...protocols].find((p) => !p.startsWith(KEY_PROTOCOL)) ?? false });
  return async (ctx) => {
    const plan = planAttempts(candidateTiers(ctx), 1, (c) => c.protocol === "openai");
    if (plan.length === 0) {
      throw new GatewayError(errors.conversionUnsupported, `Model '${ctx.modelName}' has no OpenAI-protocol channel for realtime sessions.`);
    }
    const channel = plan[0];
    ctx.channel = channel;
    ctx.upstreamModel = channel.modelMap.get(ctx.modelName!) ?? ctx.modelName!;
    const early: Frame[] = [];
    const { upstream, hold } = await connectUpstream(ctx, channel, await keyInRotation(routing.keys, routing.keyHealth, channel), ctx.upstreamModel, early);
    let client: WebSocket;
    try {
      client = acceptClient(wss, ctx);
    } catch (err) {
      upstream.terminate();
      throw err;
    }
    const firstByteNs = process.hrtime.bigint();
    const usage = emptyUsage();
    let reported = false;
    await new Promise<void>((resolve) => {
      let open = 2;
      const closed = () => { if (--open === 0) resolve(); };
      client.on("message", (data, isBinary) => { if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary }); });
      const forward = (data: WebSocket.RawData, isBinary: boolean) => {
        if (!isBinary && data.toString().includes('"response.done"')) {
          try {
            if (addRealtimeUsage(usage, JSON.parse(data.toString()))) reported = true;
          } catch (err) {
            log.warn("realtime event not JSON", { requestId: ctx.id, error: String(err) });
          }
        }
        if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
      };
      upstream.off("message", hold);
      for (const [data, isBinary] of early) forward(data, isBinary);
      upstream.on("message", forward);
      client.on("close", (code, reason) => { upstream.close(sendable(code), reason); closed(); });
      upstream.on("close", (code, reason) => { client.close(sendable(code), reason); closed(); });
      client.on("error", () => upstream.terminate());
      upstream.on("error", () => client.terminate());
    });
    // A session whose usage never came is billed by the estimate (marked) like any answer
    // without usage. Its socket is closed already: nothing is withheld.
    ctx.served = {
      status: 101, ending: "complete", charge: "reported", usage: reported ? usage : undefined, units: undefined,
      unitsEstimated: false, outputChars: 0, firstByteNs, jobId: undefined, release: () => released, abandon: () => {},
    };
  };
}

const released = Promise.resolve();
