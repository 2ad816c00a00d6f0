// Different protocols in and out: the client's request is decoded once into the canonical
// form, encoded for each channel tried, and the answer translated back event by event. The
// translated answer's end (its stop event, or an error event) is withheld until the charge
// is committed (Served.release).

import type { OutgoingHttpHeaders } from "node:http";
import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { errorText, log } from "../../observability/log.js";
import { UnsupportedField, type EncodeOptions, type InboundAdapter, type OutboundAdapter } from "../../protocols/adapter.js";
import type { CanonicalEvent, CanonicalRequest, CanonicalResponse } from "../../protocols/canonical.js";
import { strictRefusal, targetDrops, type HubRoute } from "../../protocols/field-policy.js";
import { portableReasoning, sealedBlocks, sealedEvent, type Issuer } from "../../protocols/reasoning.js";
import { outboundAdapterFor, targetRouteFor } from "../../protocols/registry.js";
import { parseEvent, SseSplitter } from "../../protocols/sse.js";
import { streamCost } from "../../protocols/stream-cost.js";
import { framedTail } from "../../protocols/stream-framing.js";
import type { Usage } from "../../protocols/usage.js";
import { kindOf } from "../../providers/index.js";
import { channelUrl } from "../../providers/provider.js";
import type { Channel } from "../../runtime/types.js";
import { upstreamRequestHeaders } from "../headers.js";
import { msSince, relay } from "../relay.js";
import { discard, isEventStream, type UpstreamResponse } from "../send.js";
import { endingOf, served, type Ending, type Served } from "../served.js";
import { streamFailure } from "../stream-failure.js";
import { BrokenAnswer, readAll, type Exchange, type ExchangeInput } from "./exchange.js";
import { readWhole } from "./whole.js";

export function convertExchange(input: ExchangeInput, inbound: InboundAdapter): Exchange {
  const canonical = input.canonical
    ?? inbound.decodeRequest(input.json, { pathModel: input.pathModel, pathStream: input.pathAction === "streamGenerateContent" });
  if (input.conversion === "strict" && (canonical.dropped?.length ?? 0) > 0) throw strictRefusal(canonical.dropped!);
  // The capability fit's changes are the model's, not the conversion's: named, never refused.
  const decoderDrops = input.fitted ? [...input.fitted, ...(canonical.dropped ?? [])] : canonical.dropped ?? [];
  const byTarget = new Map<HubRoute, { readonly request: CanonicalRequest; readonly dropped: readonly string[] }>();
  /** The request for a target protocol, its signed reasoning fitted to the target's provider
   * (reasoning.ts), and every field it leaves out (the decoder's, the signatures of other
   * providers, and the target's), checked once per target protocol: a refusal (or, under
   * conversion: strict, any drop) is a 400. */
  const forTarget = (channel: Channel): { readonly request: CanonicalRequest; readonly dropped: readonly string[] } => {
    const to = targetRouteFor(channel.protocol, input.modelEndpoints);
    let target = byTarget.get(to);
    if (target === undefined) {
      // Other providers' signatures are not the client's to keep: left out, never refused.
      const portable = portableReasoning(canonical, inbound.wire, channel.protocol);
      const more = targetDrops(inbound.wire, to, portable.request).filter((name) => !decoderDrops.includes(name));
      if (input.conversion === "strict" && more.length > 0) throw strictRefusal(more);
      const all = [...portable.dropped, ...more];
      target = { request: portable.request, dropped: all.length > 0 ? [...decoderDrops, ...all] : decoderDrops };
      byTarget.set(to, target);
    }
    return target;
  };
  const droppedFor = (channel: Channel): readonly string[] => forTarget(channel).dropped;
  return {
    request(channel, upstreamModel, key) {
      const portable = forTarget(channel).request;
      const outbound = outboundAdapterFor(channel.protocol, input.modelEndpoints);
      // An unset cap is the one reserved for (Anthropic requires one anyway): every target
      // is held to what the request reserved.
      const request: CanonicalRequest = portable.maxTokens === undefined && input.outputLimit !== undefined
        ? { ...portable, maxTokens: input.outputLimit } : portable;
      const provider = kindOf(channel);
      const options = { chatReasoningField: provider.chatReasoningField?.(channel) };
      const body = Buffer.from(JSON.stringify(encode(outbound, inbound, request, upstreamModel, options)));
      // Betas (e.g. 1M context) are the client's to ask for, whatever protocol it speaks,
      // among those the channel allows; the protocol version is the encoder's.
      const headers = upstreamRequestHeaders({
        client: input.headers, policy: provider.requestHeaders, betas: channel.betas, auth: provider.authHeaders(key),
        bodyLength: body.length, contentType: "application/json", accept: request.stream ? "text/event-stream" : "application/json",
        passThrough: false,
      });
      const path = outbound.path(request, upstreamModel);
      return { url: channelUrl(channel.baseUrl, path), path, upstreamModel, stream: request.stream === true, headers, body };
    },
    async respond(upstream, channel) {
      const outbound = outboundAdapterFor(channel.protocol, input.modelEndpoints);
      if (upstream.status < 200 || upstream.status >= 300) throw await upstreamRejection(upstream, outbound);
      if (canonical.stream && !isEventStream(upstream)) {
        // An HTML page (or anything but SSE) for a stream: no answer, and nothing sent yet.
        discard(upstream.body, true);
        return new BrokenAnswer("not an event stream");
      }
      // The request as relayed: `dropped` names everything its target left out, for the
      // answer's x-gateway-dropped-fields header and the usage log.
      const dropped = droppedFor(channel);
      const request = dropped.length === (canonical.dropped?.length ?? 0) ? canonical : { ...canonical, dropped };
      return canonical.stream
        ? relayStream(input, upstream, inbound, outbound, request, channel.protocol)
        : relayWhole(input, upstream, inbound, outbound, request, channel.protocol);
    },
  };
}

/** The channel's body. A field it cannot express is a 400 that names the field as the client
 * sent it: encoders speak of canonical fields, which the client never saw. */
function encode(
  outbound: OutboundAdapter, inbound: InboundAdapter, request: CanonicalRequest, upstreamModel: string, options: EncodeOptions,
): unknown {
  try {
    return outbound.encodeRequest(request, upstreamModel, options);
  } catch (err) {
    if (!(err instanceof UnsupportedField)) throw err;
    const name = inbound.fieldNames[err.field] ?? err.field;
    throw new GatewayError(errors.invalidParameter, `'${name}' cannot be converted for this model's channel: ${err.reason}.`);
  }
}

/** An upstream refusal (4xx) in the client's protocol, with the upstream's own words. */
async function upstreamRejection(upstream: UpstreamResponse, outbound: OutboundAdapter): Promise<GatewayError> {
  const text = (await readAll(upstream.body)).toString("utf8");
  let message: string | undefined;
  try {
    message = outbound.errorMessage(JSON.parse(text));
  } catch {
    // not JSON: no message to quote
  }
  return new GatewayError(errors.upstreamRejected,
    `The upstream provider rejected the request (${upstream.status})${message ? `: ${message}` : "."}`,
    { status: upstream.status >= 400 && upstream.status < 500 ? upstream.status : 502 });
}

/** A whole answer: read, checked (not JSON, or cut short: a broken answer, never a charge),
 * converted, and held until release. */
async function relayWhole(
  input: ExchangeInput, upstream: UpstreamResponse, inbound: InboundAdapter, outbound: OutboundAdapter, request: CanonicalRequest,
  issuer: Issuer,
): Promise<Served | BrokenAnswer> {
  const whole = await readWhole(input.res, upstream.body, input.drain);
  if (whole.end === "client-gone") {
    // Read on to its end, the answer is charged by its own usage; else by estimate.
    const usage = whole.whole ? decodedUsage(outbound, whole.bytes) : undefined;
    if (usage) return served(input.res, { status: 200, ending: "client-gone", charge: "reported", usage, droppedFields: request.dropped });
    return served(input.res, { status: 200, ending: "client-gone", charge: "estimate", readMs: whole.readMs, droppedFields: request.dropped });
  }
  if (whole.end !== "ended") return new BrokenAnswer(whole.end === "too-large" ? "too large to convert" : `cut short (${whole.end})`);
  let json: unknown;
  try {
    json = JSON.parse(whole.bytes.toString("utf8"));
  } catch {
    return new BrokenAnswer("not JSON");
  }
  const decoded: CanonicalResponse = outbound.decodeResponse(json);
  // Its signatures say which provider wrote them, so a later turn gives them only to it.
  const answer: CanonicalResponse = Object.assign({}, decoded, { model: input.modelName, content: sealedBlocks(decoded.content, issuer) });
  const body = JSON.stringify(inbound.encodeResponse(answer, request));
  const headers = droppedHeader(request, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  return served(input.res, {
    status: 200, ending: "complete", charge: "reported", usage: answer.usage, firstByteNs: process.hrtime.bigint(),
    droppedFields: request.dropped,
  }, body, { status: 200, headers });
}

/** A stream translated event by event. The client's stop event (or an error event, when the
 * upstream's stream broke, stalled, ended early or did not decode) is the withheld tail. */
async function relayStream(
  input: ExchangeInput, upstream: UpstreamResponse, inbound: InboundAdapter, outbound: OutboundAdapter, request: CanonicalRequest,
  issuer: Issuer,
): Promise<Served> {
  const splitter = new SseSplitter(input.maxEventBytes);
  const decoder = outbound.streamDecoder();
  const encoder = inbound.streamEncoder(request);
  // The client's own framing when it is not SSE (generate-content's JSON array).
  const framing = inbound.streamFraming?.(input.query);
  const modelName = input.modelName;
  let chars = 0;
  let usage: Usage | undefined;
  /** The client's last events, once the upstream's stop or error came. */
  let tail: string | undefined;
  let failed = false;
  const translate = (events: CanonicalEvent[]): string => {
    let out = "";
    for (let event of events) {
      if (tail !== undefined) break; // nothing follows the end
      if (event.type === "message_start") event = Object.assign({}, event, { model: modelName });
      else if (event.type === "signature_delta" || event.type === "block_start") event = sealedEvent(event, issuer);
      // Only what the model wrote counts toward an estimate: an image block's base64 (whole
      // in its block_start) is not text, and counting it would bill an image as megabytes of text.
      else if (event.type === "text_delta" || event.type === "thinking_delta") chars += event.text.length;
      else if (event.type === "tool_input_delta") chars += event.partialJson.length;
      if (event.type === "message_stop") {
        usage = event.usage;
        tail = encoder.encode(event) + inbound.streamTrailer;
      } else if (event.type === "error") {
        failed = true;
        tail = encoder.encode(event);
      } else {
        out += encoder.encode(event);
      }
    }
    return out;
  };
  const decodeRaw = (raw: string): string => {
    const event = parseEvent(raw);
    return event ? translate(decoder.decode(event)) : "";
  };
  const began = process.hrtime.bigint();
  const r = await relay({
    res: input.res, body: upstream.body, drain: input.drain,
    head: { status: 200, headers: droppedHeader(request, { "content-type": framing?.contentType ?? "text/event-stream; charset=utf-8", "cache-control": "no-cache" }), flush: true },
    transform: (chunk) => {
      let out = "";
      for (const raw of splitter.push(chunk)) out += decodeRaw(raw);
      return framing ? framing.events(out) : out;
    },
    state: () => (splitter.overflowed ? "broken" : tail !== undefined || decoder.finished?.() ? "finished" : "open"),
  });
  const readMs = msSince(began);
  let ending: Ending;
  if (r.end === "client-gone") {
    ending = "client-gone";
    // Read to its end after the client left: the decoder closes it (its stop, with usage).
    if (r.bodyEnded && tail === undefined) {
      const rest = splitter.flush();
      if (rest) decodeRaw(rest);
      translate(decoder.end());
    }
  } else if (splitter.overflowed && tail === undefined) {
    ending = "oversized-event";
    const err = streamFailure(ending, input.idleTimeoutMs);
    tail = encoder.encode({ type: "error", status: err.status, message: err.message, code: err.code });
  } else if (tail === undefined && (r.end === "ended" || r.end === "finished")) {
    // The upstream ended without its stop event: the decoder says whether the answer is
    // whole; if not, it ends the stream with an error event.
    const rest = splitter.flush();
    const more = (rest ? decodeRaw(rest) : "") + translate(decoder.end());
    if (more) tail = more + (tail ?? "");
    ending = usage !== undefined && !failed ? "complete" : "unterminated";
  } else if (tail !== undefined) {
    ending = failed ? "upstream-error" : "complete";
  } else {
    ending = endingOf(r.end);
    if (ending === "internal-error") log.error("stream conversion failed", { requestId: input.requestId, error: errorText(r.error) });
    const err = streamFailure(ending, input.idleTimeoutMs);
    tail = encoder.encode({ type: "error", status: err.status, message: err.message, code: err.code });
  }
  const complete = ending === "complete";
  // A stream read to its stop after its client left is charged by its own usage. Otherwise
  // an estimate, in which the usage the upstream already reported counts over any guess.
  const whole = complete || (ending === "client-gone" && usage !== undefined && !failed);
  // The tail of a whole stream gets the cost (in its final usage event) at release.
  const framed = framedTail(framing, complete, ending === "client-gone" ? undefined : tail, streamCost[inbound.wire]);
  return served(input.res, {
    status: 200, ending, charge: whole ? "reported" : "estimate", usage: whole ? usage : decoder.usageSoFar?.(),
    outputChars: chars, firstByteNs: r.firstByteNs, droppedFields: request.dropped,
    readMs: ending === "client-gone" ? readMs : undefined,
  }, framed.tail, undefined, framed.stamp);
}

/** The usage of a whole answer read after its client left; undefined when it is no answer. */
function decodedUsage(outbound: OutboundAdapter, body: Buffer): Usage | undefined {
  try {
    return outbound.decodeResponse(JSON.parse(body.toString("utf8"))).usage;
  } catch {
    return undefined;
  }
}

/** The answer's head, naming what the converted request left out (x-gateway-dropped-fields). */
function droppedHeader(request: CanonicalRequest, headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const dropped = request.dropped;
  return dropped && dropped.length > 0 ? { ...headers, "x-gateway-dropped-fields": dropped.join(", ") } : headers;
}

export type { Channel };
