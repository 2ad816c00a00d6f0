// The realtime voice API: a WebSocket the gateway accepts from the client and opens to the
// channel (with the channel's key), relaying frames both ways as they come (realtime-session:
// backpressure, per-response admission, metering). Each response and input transcription is
// its own usage entry (realtime-charges), committed before the event reporting its usage
// reaches the client; the session's own entry (its request id, status 101, its duration)
// carries only what is priced per session (a per-request price), so nothing counts twice.

import { Calendar } from "../../billing/calendar.js";
import type { AccountDirectory } from "../../accounts/directory.js";
import type { IncomingHttpHeaders } from "node:http";
import WebSocket, { WebSocketServer } from "ws";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { CredentialFailure } from "../../providers/kind.js";
import { keyInRotation, noteCredentialFailure } from "../../routing/key-pick.js";
import { keyFingerprint } from "../../routing/key-health.js";
import type { RoutingState } from "../../routing/routing-state.js";
import { planAttempts } from "../../routing/plan.js";
import type { Channel, Runtime } from "../../runtime/types.js";
import type { UsageSink } from "../usage-sink.js";
import { emptyUsage } from "../../protocols/usage.js";
import { worstCase } from "../../billing/cost.js";
import type { Accounts, Admitter, UsageLog } from "../../state/interfaces.js";
import { credentialError } from "../../upstream/failover.js";
import { preparedGet } from "../../upstream/kind-wire.js";
import { MAX_FRAME_BYTES } from "../../upstream/ws-pipe.js";
import { SessionAdmission } from "../realtime-admission.js";
import { RealtimeCharges } from "../realtime-charges.js";
import { RealtimeMeter } from "../realtime-meter.js";
import { RealtimeSession } from "../realtime-session.js";
import { requestIdHeader } from "../request-id.js";
import { candidateTiers } from "../candidates.js";
import { give, type Core, type Needs, type Stage, type Upgrade } from "../context.js";
import type { Served } from "../../upstream/served.js";
import { KEY_PROTOCOL } from "../key-protocol.js";
import type { Route } from "../routes.js";
import type { PriceFallbacks } from "../price-fallbacks.js";


/** Subprotocols to offer upstream: the client's, minus the one carrying its token. */
function upstreamProtocols(headers: IncomingHttpHeaders): string[] {
  const offered = String(headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim()).filter(Boolean);
  return offered.filter((p) => !p.startsWith(KEY_PROTOCOL));
}

type Frame = [Buffer, boolean];

/** Opens the upstream socket at the channel's kind's URL with its credentials (the
 * handshake is the GET the kind prepares, its URL made ws: or wss:); rejects with the
 * gateway error for a refusal, and with CredentialFailure when the kind cannot make the
 * key's credentials. The upstream speaks first (session.created), so its frames are held
 * in `early` from the start, before the client is connected to receive them. */
async function connectUpstream(
  ctx: Core, channel: Channel, key: string, upstreamModel: string, early: Frame[],
): Promise<{ upstream: WebSocket; hold: (data: WebSocket.RawData, isBinary: boolean) => void }> {
  const beta = ctx.req.headers["openai-beta"];
  const request = await preparedGet(channel, key, {
    path: `/v1/realtime?model=${encodeURIComponent(upstreamModel)}`, upstreamModel,
    headers: typeof beta === "string" ? { "openai-beta": beta } : {},
  });
  const url = new URL(request.url.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const upstream = new WebSocket(url, upstreamProtocols(ctx.req.headers), {
    headers: handshakeHeaders(request.headers),
    handshakeTimeout: ctx.runtime.server.upstreamTimeoutMs,
    maxPayload: MAX_FRAME_BYTES,
  });
  const hold = (data: WebSocket.RawData, isBinary: boolean) => { early.push([data as Buffer, isBinary]); };
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

/** The prepared request's headers a WebSocket handshake carries: ws writes the framing
 * ones itself (a kind's content-length says nothing of an upgrade). */
function handshakeHeaders(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  const { "content-length": _length, ...rest } = headers;
  return rest;
}

/**
 * Completes the client's handshake (its 101 carries the request id). ws settles it before
 * returning: a handshake it refuses becomes a 400 in our shape (the response is still ours to
 * write), and a client that left while the upstream was reached ends the request, instead of
 * a wait for a callback that never comes.
 */
function acceptClient(wss: WebSocketServer, ctx: Core, upgrade: Upgrade): WebSocket {
  const { socket, head } = upgrade;
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

/** What a realtime session is served with. */
export interface RealtimeDeps {
  readonly routing: Pick<RoutingState, "keys" | "keyHealth">;
  /** Admits each response of a session, and settles its charge. */
  readonly admitter: Admitter;
  /** Asked, after each input transcription, whether the money is used up. */
  readonly accounts: Accounts;
  /** Where each response's and transcription's entry is committed. */
  readonly usageLog: UsageLog;
  readonly observer: UsageSink;
  /** The config in force now: each admission checks the token and user against it. */
  readonly live: () => Runtime;
  /** Finds the session's token and user again at each admission. */
  readonly directory: AccountDirectory;
  /** Warns once per model about components billed at a base price. */
  readonly priceFallbacks: PriceFallbacks;
}

/** What each session of the stage shares. */
type SessionDeps = RealtimeDeps & { readonly calendar: Calendar };

/** The realtime terminal: one WebSocket session, relayed and metered until either side ends it. */
export function realtimeStage(given: RealtimeDeps, route: Route): Stage<Needs<"caller" | "account" | "call">> {
  // Calendar budgets' periods, remembered until they end (one per stage: no shared state).
  const deps: SessionDeps = { ...given, calendar: new Calendar() };
  const wss = new WebSocketServer({
    noServer: true, maxPayload: MAX_FRAME_BYTES, handleProtocols: (protocols) => [...protocols].find((p) => !p.startsWith(KEY_PROTOCOL)) ?? false,
  });
  return async (ctx) => {
    const { call, caller: token } = ctx;
    const upgrade = ctx.upgrade;
    if (!upgrade) throw new GatewayError(errors.upgradeRequired); // the upgrade phase ran before
    const plan = planAttempts(candidateTiers(ctx.runtime, token.group, call.name), 1, (c) => c.protocol === "openai");
    if (plan.length === 0) {
      throw new GatewayError(errors.conversionUnsupported, `Model '${call.name}' has no OpenAI-protocol channel for realtime sessions.`);
    }
    const channel = plan[0];
    const upstreamModel = channel.modelMap.get(call.name) ?? call.name;
    let served: Served | undefined;
    try {
      served = await runSession(ctx, deps, wss, upgrade, channel, upstreamModel, route);
    } finally {
      give(ctx, "outcome", { served, channel, upstreamModel, attempts: 0 });
    }
  };
}

/** Connects both sides, relays the session until either ends, and settles what it left. */
async function runSession(
  ctx: Needs<"caller" | "account" | "call">, deps: SessionDeps, wss: WebSocketServer, upgrade: Upgrade, channel: Channel,
  upstreamModel: string, route: Route,
): Promise<Served> {
  const early: Frame[] = [];
  const key = await keyInRotation(deps.routing.keys, deps.routing.keyHealth, channel);
  const { upstream, hold } = await connectUpstream(ctx, channel, key, upstreamModel, early).catch(async (err: unknown) => {
    if (!(err instanceof CredentialFailure)) throw err;
    await noteCredentialFailure(deps.routing.keyHealth, channel, key, err);
    throw credentialError(err);
  });
  let client: WebSocket;
  try {
    client = acceptClient(wss, ctx, upgrade);
  } catch (err) {
    upstream.terminate();
    throw err;
  }
  upstream.off("message", hold);
  const firstByteNs = process.hrtime.bigint();
  const { model, name: modelName } = ctx.call;
  const group = ctx.account.group;
  const token = ctx.caller;
  const meter = new RealtimeMeter();
  const charges = new RealtimeCharges({
    admitter: deps.admitter, usageLog: deps.usageLog, observer: deps.observer, price: model.price, multiplierPpm: group.multiplierPpm, channelCost: channel.cost, priceFallbacks: deps.priceFallbacks,
    base: {
      token: token.name, user: token.user, group: token.group, model: modelName, upstreamModel,
      channel: channel.name, key: keyFingerprint(key), inboundProtocol: route.name, upstreamProtocol: channel.protocol,
    },
  });
  const admission = new SessionAdmission({
    admitter: deps.admitter, accounts: deps.accounts, live: deps.live, directory: deps.directory, calendar: deps.calendar, requestId: ctx.id, charges, token, model, group,
  });
  const session = new RealtimeSession({
    requestId: ctx.id, client, upstream, meter, admission, maxSessionMs: ctx.runtime.server.realtimeMaxSessionMs,
    worst: () => worstCase({ input: meter.nextInputTokens(), cacheRead: 0, cacheWrite: 0, output: model.maxOutputTokens, reasoning: 0 }, model.price),
  });
  await session.run(early);
  // A response cut mid-way is charged as its own entry now; every other hold goes back.
  await admission.end(meter.unreported());
  // Usage is in the entries above: this one holds the session (and any per-request price).
  const none = () => {};
  return {
    status: 101, ending: "complete", charge: "reported", usage: emptyUsage(), usageEstimated: false,
    units: undefined, unitsEstimated: false, outputChars: 0, firstByteNs, jobId: undefined, release: none, abandon: none,
  };
}
