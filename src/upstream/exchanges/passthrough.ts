// Same protocol in and out: the client's bytes go upstream (but for model_map), and the
// answer comes back unchanged: a stream event by event as it arrives, with a tap reading
// usage; a JSON answer whole, once it is known to be JSON; other bytes as they arrive.
// Each withholds its last bytes until the charge is committed (Served.release).

import type { ServerResponse } from "node:http";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { errorText, log } from "../../observability/log.js";
import type { PassRequest, PassthroughSpec } from "../../protocols/passthrough.js";
import { framedTail } from "../../protocols/stream-framing.js";
import type { SseUsageTap } from "../../protocols/usage-tap.js";
import { kindOf } from "../../providers/index.js";
import { channelUrl } from "../../providers/provider.js";
import type { Channel } from "../../runtime/types.js";
import { downstreamResponseHeaders, upstreamRequestHeaders } from "../headers.js";
import { forwardedQuery } from "../query.js";
import { msSince, relay, type RelayState } from "../relay.js";
import { isEventStream, type UpstreamResponse } from "../send.js";
import { COST_HEADER, cutOff, endingOf, served, type Ending, type Served } from "../served.js";
import { streamFailure } from "../stream-failure.js";
import { BrokenAnswer, type Exchange, type ExchangeInput } from "./exchange.js";
import { readWhole } from "./whole.js";

const EMPTY = Buffer.alloc(0);

export function passthroughExchange(input: ExchangeInput, spec: PassthroughSpec): Exchange {
  // Another tenant's object (or the operator's) is as unknown as one that never was.
  const stored = spec.storedReference?.(input.json);
  if (stored !== undefined) throw new GatewayError(errors.notFound, `No ${stored} was created through this gateway by this account.`);
  // Signed reasoning only its issuer may see (reasoning.ts): the one edit made for it.
  const portable = spec.portable?.(input.json);
  const req: PassRequest = {
    raw: portable ? Buffer.from(JSON.stringify(portable.json)) : input.body, json: portable?.json ?? input.json,
    pathModel: input.pathModel, pathAction: input.pathAction, apiVersion: input.apiVersion, query: forwardedQuery(input.query, spec.query),
    contentType: input.headers["content-type"], parts: input.parts, outputLimit: input.outputLimit, members: input.bodyMembers,
    tokenPriced: input.tokenPriced,
  };
  const stream = spec.isStream(req) && spec.streamTap !== undefined;
  // Set by the gateway, not the client: what this answer must be for the gateway to read it.
  const accept = stream ? "text/event-stream" : spec.answersJson?.(req) ?? true ? "application/json" : "*/*";
  let stripUsage = false;
  /** Client fields the body sent upstream leaves out or changes. */
  const dropped: readonly string[] = portable && portable.dropped.length > 0
    ? [...(input.fitted ?? []), ...portable.dropped] : input.fitted ?? [];
  return {
    request(channel, upstreamModel, key) {
      const provider = kindOf(channel);
      // A kind that takes the model from the URL drops the body's: the body keeps the
      // client's name rather than being re-serialised for one that is removed.
      const bodyModel = provider.modelInUrl && typeof req.json.model === "string" ? req.json.model : upstreamModel;
      const prepared = spec.body(req, bodyModel);
      stripUsage = prepared.stripUsage;
      const path = spec.path(req, upstreamModel);
      return {
        url: channelUrl(channel.baseUrl, path), path, upstreamModel, stream,
        headers: upstreamRequestHeaders({
          client: input.headers, policy: provider.requestHeaders, betas: channel.betas, auth: provider.authHeaders(key),
          bodyLength: prepared.body.length, passThrough: true, accept,
          contentType: prepared.contentType ?? (isMultipart(req.contentType) ? req.contentType : "application/json"),
        }),
        body: prepared.body,
      };
    },
    async respond(upstream, channel) {
      if (dropped.length === 0) return relayAnswer(upstream, channel);
      // What the gateway left out of the client's bytes, named as a conversion names it;
      // set before the answer's head can go.
      if (!input.res.headersSent) input.res.setHeader("x-gateway-dropped-fields", dropped.join(", "));
      const result = await relayAnswer(upstream, channel);
      return result instanceof BrokenAnswer ? result : Object.assign(result, { droppedFields: dropped });
    },
  };

  function relayAnswer(upstream: UpstreamResponse, channel: Channel): Promise<Served | BrokenAnswer> {
    const privateHeaders = kindOf(channel).privateResponseHeaders;
    if (upstream.status < 200 || upstream.status >= 300) return relayRefusal(input.res, upstream, privateHeaders);
    if (stream && isEventStream(upstream)) return relayStream(input, upstream, spec, stripUsage, privateHeaders, req);
    if (spec.answersJson?.(req) ?? true) return holdJson(input, upstream, spec, privateHeaders, req);
    // Asked for a stream (the form that carries usage) and answered bytes: no usage came.
    return relayBytes(input, upstream, stream ? { ...spec, bodyUsage: () => undefined } : spec, privateHeaders);
  }
}

/** An upstream refusal (a 4xx the client must see) relayed as it comes; never charged. */
async function relayRefusal(res: ServerResponse, upstream: UpstreamResponse, privateHeaders: readonly string[]): Promise<Served> {
  const headers = downstreamResponseHeaders(upstream.headers, privateHeaders, true);
  const r = await relay({ res, body: upstream.body, head: { status: upstream.status, headers, flush: false }, transform: (c) => c });
  const parts = { status: upstream.status, ending: endingOf(r.end), charge: "none", firstByteNs: r.firstByteNs } as const;
  // A body cut short cannot be ended as if it were whole: the connection is cut instead.
  return r.end === "ended" ? served(res, parts) : cutOff(res, parts);
}

/** A JSON answer, read whole before any byte goes out: one that is not JSON, or is cut
 * short, is a broken answer (502, or the next channel), never a charge. */
async function holdJson(
  input: ExchangeInput, upstream: UpstreamResponse, spec: PassthroughSpec, privateHeaders: readonly string[], req: PassRequest,
): Promise<Served | BrokenAnswer> {
  const whole = await readWhole(input.res, upstream.body, input.drain);
  const status = upstream.status;
  if (whole.end === "client-gone") {
    // The upstream served it; the client left while it was read. Read on to its end, it is
    // charged by its own usage; else by estimate.
    const json = whole.whole ? parsed(whole.bytes) : undefined;
    const usage = json === undefined ? undefined : spec.bodyUsage(json);
    if (usage) return served(input.res, { status, ending: "client-gone", charge: "reported", usage });
    return served(input.res, { status, ending: "client-gone", charge: "estimate", outputChars: spec.bodyChars(whole.bytes), readMs: whole.readMs });
  }
  if (whole.end !== "ended") return new BrokenAnswer(whole.end === "too-large" ? "too large to check" : `cut short (${whole.end})`);
  const body = whole.bytes;
  // Parsed once: the check that it is JSON at all, and what usage, units and job are read from.
  const json = parsed(body);
  if (json === undefined) return new BrokenAnswer("not JSON");
  const usage = spec.bodyUsage(json);
  const units = spec.bodyUnits?.(json);
  const headers = downstreamResponseHeaders(upstream.headers, privateHeaders, false);
  // The format the client asked for, when the gateway asked upstream for the one with usage.
  const rendered = spec.renderAnswer?.(req, json);
  if (rendered) headers["content-type"] = rendered.contentType;
  const answer = rendered?.body ?? body;
  headers["content-length"] = answer.length;
  return served(input.res, {
    status, ending: "complete", charge: usage === undefined && spec.usageOptional ? "estimate" : "reported", usage,
    units, unitsEstimated: spec.bodyUnits !== undefined && units === undefined,
    outputChars: usage ? 0 : spec.bodyChars(body), firstByteNs: process.hrtime.bigint(), jobId: spec.bodyJobId?.(json),
    answerId: spec.bodyAnswerId?.(json),
  }, answer, { status, headers });
}

/** A JSON body parsed; undefined when it is not JSON. */
function parsed(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** Other answers (audio, plain text) relayed as they arrive, one chunk behind: the last
 * chunk is the withheld tail, and the head goes with the first chunk released. Not being
 * JSON, they carry no usage or units to read: they are billed by the request's units (or,
 * where the spec's usage is undefined on a token-priced model, as a billing fault). One
 * cut short before any byte went out is a broken answer; after, it is cut off for the
 * client. Neither is charged. */
async function relayBytes(
  input: ExchangeInput, upstream: UpstreamResponse, spec: PassthroughSpec, privateHeaders: readonly string[],
): Promise<Served | BrokenAnswer> {
  const res = input.res;
  const status = upstream.status;
  const headers = downstreamResponseHeaders(upstream.headers, privateHeaders, true);
  const usage = spec.bodyUsage(undefined);
  let held: Buffer | undefined;
  const r = await relay({ res, body: upstream.body,
    transform: (chunk) => {
      const out = held;
      held = chunk;
      if (out === undefined) return EMPTY;
      if (!res.headersSent) {
        // The head goes before the charge is committed: the cost is quoted from the request.
        const cost = usage === undefined ? undefined : input.quote?.(usage);
        if (cost !== undefined) res.setHeader(COST_HEADER, cost);
        res.writeHead(status, headers);
      }
      return out;
    } });
  if (r.end === "client-gone") return served(res, { status, ending: "client-gone", charge: "estimate", firstByteNs: r.firstByteNs });
  if (r.end !== "ended") {
    if (!res.headersSent) return new BrokenAnswer(`cut short (${r.end})`);
    return cutOff(res, { status, ending: endingOf(r.end), charge: "none", firstByteNs: r.firstByteNs });
  }
  return served(res, {
    status, ending: "complete", charge: "reported", usage,
    unitsEstimated: spec.bodyUnits !== undefined, firstByteNs: r.firstByteNs ?? process.hrtime.bigint(),
  }, held, res.headersSent ? undefined : { status, headers });
}

/** A stream relayed event by event; its terminal event is the withheld tail. A stream that
 * breaks, stalls or ends early ends with an error event in the protocol's shape instead,
 * and what was delivered is charged by estimate. */
async function relayStream(
  input: ExchangeInput, upstream: UpstreamResponse, spec: PassthroughSpec, strip: boolean, privateHeaders: readonly string[],
  req: PassRequest,
): Promise<Served> {
  const res = input.res;
  const tap = spec.streamTap!(strip);
  tap.limitEventSize(input.maxEventBytes);
  // A stream we may edit is re-framed, so its length goes.
  const headers = downstreamResponseHeaders(upstream.headers, privateHeaders, false);
  // The client's own framing, when it is not the SSE the gateway asked for: applied to what
  // the tap relays, and to the tail after the cost is stamped into its SSE.
  const framing = spec.streamFraming?.(req);
  if (framing) headers["content-type"] = framing.contentType;
  const began = process.hrtime.bigint();
  const r = await relay({ res, body: upstream.body, head: { status: upstream.status, headers, flush: true },
    transform: framing ? (chunk) => framing.events(tap.push(chunk)) : (chunk) => tap.push(chunk), state: () => tapState(tap),
    drain: input.drain });
  const readMs = msSince(began);
  if (r.end === "internal-error") log.error("stream relay failed", { requestId: input.requestId, error: errorText(r.error) });
  // A stream read to its end after its client left still ends its tap (the last event).
  const tail = r.end === "ended" || r.end === "finished" || r.bodyEnded ? tap.end() : "";
  const ending: Ending = r.end === "client-gone" ? "client-gone"
    : tap.ending === "terminal" ? "complete"
    : tap.ending === "failure" ? "upstream-error"
    : tap.ending === "undecodable" ? "undecodable"
    : tap.ending === "oversized" ? "oversized-event"
    : r.end === "ended" || r.end === "finished" ? "unterminated" : endingOf(r.end);
  const complete = ending === "complete";
  // The upstream's own error event, or the gateway's in the protocol's shape, ends a
  // stream that did not complete; a client that left gets nothing more. The tail of a whole
  // stream gets the cost (in its final usage event) at release.
  const last = complete || ending === "upstream-error" ? tail
    : ending === "client-gone" ? undefined : tap.unsent + spec.streamError!(streamFailure(ending, input.idleTimeoutMs), tap.relayed);
  // A stream read to its terminal event after its client left is charged by its own usage.
  // Otherwise an estimate, in which the usage already reported (a message_start's input, a
  // chunk's running usageMetadata) counts over any guess.
  const whole = complete || (ending === "client-gone" && tap.ending === "terminal");
  const parts = {
    status: upstream.status, ending, charge: whole ? "reported" : "estimate", usage: tap.usage,
    outputChars: tap.outputChars, firstByteNs: r.firstByteNs, readMs: ending === "client-gone" ? readMs : undefined,
    answerId: whole ? tap.answerId : undefined,
  } as const;
  // A framing that cannot carry the error (raw audio) ends an incomplete stream by a cut.
  if (framing?.cutsOnError && !complete && ending !== "client-gone") return cutOff(res, parts);
  const framed = framedTail(framing, complete, last, spec.streamCost);
  return served(res, parts, framed.tail, undefined, framed.stamp);
}


function tapState(tap: SseUsageTap): RelayState {
  const ending = tap.ending;
  return ending === undefined ? "open" : ending === "undecodable" || ending === "oversized" ? "broken" : "finished";
}

/** A multipart upload keeps its own Content-Type (the boundary) on the way upstream. */
function isMultipart(contentType: string | undefined): contentType is string {
  return contentType !== undefined && /^multipart\//i.test(contentType);
}
