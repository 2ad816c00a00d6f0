// Different protocols in and out: the client's request is decoded once into the canonical
// form, encoded for each channel tried, and the answer translated back event by event.

import { errors } from "../../errors/catalogue.js";
import { GatewayError } from "../../errors/gateway-error.js";
import type { RequestContext } from "../../pipeline/context.js";
import { UnsupportedField, type InboundAdapter, type OutboundAdapter } from "../../protocols/adapter.js";
import type { CanonicalEvent, CanonicalRequest } from "../../protocols/canonical.js";
import { outboundAdapters } from "../../protocols/registry.js";
import { parseEvent, SseSplitter } from "../../protocols/sse.js";
import { DEFAULT_ANTHROPIC_VERSION } from "../../providers/anthropic.js";
import { providers } from "../../providers/index.js";
import { channelUrl } from "../../providers/provider.js";
import type { Channel } from "../../runtime/types.js";
import { relay } from "../relay.js";
import type { UpstreamResponse } from "../send.js";
import { readAll, type Exchange } from "./exchange.js";

/** Client headers worth carrying into a request of another protocol. */
const carried = ["user-agent", "accept-language"] as const;

export function convertExchange(ctx: RequestContext, inbound: InboundAdapter): Exchange {
  const canonical = inbound.decodeRequest(ctx.json!, { pathModel: ctx.pathModel, pathStream: ctx.pathAction === "streamGenerateContent" });
  return {
    request(channel, upstreamModel, key) {
      const outbound = outboundAdapters[channel.protocol];
      // Anthropic requires max_tokens; an unset cap means the model's own.
      const request: CanonicalRequest = channel.protocol === "anthropic" && canonical.maxTokens === undefined
        ? { ...canonical, maxTokens: ctx.model!.maxOutputTokens } : canonical;
      const body = Buffer.from(JSON.stringify(encode(outbound, inbound, request, upstreamModel)));
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: request.stream ? "text/event-stream" : "application/json",
        "accept-encoding": "identity",
        "content-length": String(body.length),
        ...providers[channel.protocol].authHeaders(key),
      };
      for (const name of carried) {
        const v = ctx.req.headers[name];
        if (typeof v === "string") headers[name] = v;
      }
      if (channel.protocol === "anthropic") {
        headers["anthropic-version"] = DEFAULT_ANTHROPIC_VERSION;
        // Betas (e.g. 1M context) are the client's to ask for, whatever protocol it speaks.
        const beta = ctx.req.headers["anthropic-beta"];
        if (typeof beta === "string") headers["anthropic-beta"] = beta;
      }
      return { url: channelUrl(channel.baseUrl, outbound.path(request, upstreamModel)), headers, body };
    },
    async respond(upstream, channel) {
      const outbound = outboundAdapters[channel.protocol];
      if (upstream.status < 200 || upstream.status >= 300) throw await upstreamRejection(upstream, outbound);
      ctx.upstreamStatus = upstream.status;
      if (canonical.stream) await relayStream(ctx, upstream, inbound, outbound, canonical);
      else await relayWhole(ctx, upstream, inbound, outbound, canonical);
    },
  };
}

/** The channel's body. A field it cannot express is a 400 that names the field as the client
 * sent it: encoders speak of canonical fields, which the client never saw. */
function encode(outbound: OutboundAdapter, inbound: InboundAdapter, request: CanonicalRequest, upstreamModel: string): unknown {
  try {
    return outbound.encodeRequest(request, upstreamModel);
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

async function relayWhole(
  ctx: RequestContext, upstream: UpstreamResponse, inbound: InboundAdapter, outbound: OutboundAdapter, request: CanonicalRequest,
): Promise<void> {
  const raw = (await readAll(upstream.body, 64 * 1024 * 1024)).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new GatewayError(errors.upstreamError, "The upstream provider answered with a body that is not JSON.");
  }
  const answer = { ...outbound.decodeResponse(json), model: ctx.modelName! };
  ctx.usage = answer.usage;
  const body = JSON.stringify(inbound.encodeResponse(answer, request));
  ctx.firstByteNs ??= process.hrtime.bigint();
  ctx.res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  ctx.res.end(body);
}

async function relayStream(
  ctx: RequestContext, upstream: UpstreamResponse, inbound: InboundAdapter, outbound: OutboundAdapter, request: CanonicalRequest,
): Promise<void> {
  const splitter = new SseSplitter();
  const decoder = outbound.streamDecoder();
  const encoder = inbound.streamEncoder(request);
  let chars = 0;
  const translate = (events: CanonicalEvent[]): string => {
    let out = "";
    for (let event of events) {
      if (event.type === "message_start") event = { ...event, model: ctx.modelName! };
      else if (event.type === "message_stop") ctx.usage = event.usage;
      else if (event.type === "text_delta" || event.type === "thinking_delta") chars += event.text.length;
      else if (event.type === "tool_input_delta") chars += event.partialJson.length;
      out += encoder.encode(event);
    }
    return out;
  };
  const decodeRaw = (raw: string): string => {
    const event = parseEvent(raw);
    return event ? translate(decoder.decode(event)) : "";
  };
  await relay({
    ctx, body: upstream.body, status: 200, flushHeaders: true,
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    transform: (chunk) => {
      let out = "";
      for (const raw of splitter.push(chunk)) out += decodeRaw(raw);
      return out;
    },
    finish: () => {
      const rest = splitter.flush();
      return (rest ? decodeRaw(rest) : "") + translate(decoder.end()) + inbound.streamTrailer;
    },
  });
  ctx.outputChars = chars;
}

export type { Channel };
