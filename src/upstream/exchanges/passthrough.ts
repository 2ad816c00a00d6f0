// Same protocol in and out: the client's bytes go upstream (but for model_map), and the
// answer's bytes come back as they arrive, with a tap reading usage on the way.

import type { RequestContext } from "../../pipeline/context.js";
import type { PassRequest, PassthroughSpec } from "../../protocols/passthrough.js";
import { providers } from "../../providers/index.js";
import { channelUrl } from "../../providers/provider.js";
import { downstreamResponseHeaders, upstreamRequestHeaders } from "../headers.js";
import { relay } from "../relay.js";
import type { UpstreamResponse } from "../send.js";
import type { Exchange } from "./exchange.js";

/** Largest non-stream body kept in memory to read its usage. */
const maxTappedBody = 16 * 1024 * 1024;

/** The client's query without the gateway's own `key` parameter (a generate-content token). */
function forwardedQuery(query: string): string {
  if (!query.includes("key=")) return query;
  const params = new URLSearchParams(query);
  params.delete("key");
  return params.toString();
}

export function passthroughExchange(ctx: RequestContext, spec: PassthroughSpec): Exchange {
  const req: PassRequest = {
    raw: ctx.body!, json: ctx.json!, pathModel: ctx.pathModel, pathAction: ctx.pathAction, query: forwardedQuery(ctx.query),
    contentType: ctx.req.headers["content-type"],
  };
  const stream = spec.isStream(req) && spec.streamTap !== undefined;
  let stripUsage = false;
  return {
    request(channel, upstreamModel, key) {
      const prepared = spec.body(req, upstreamModel);
      stripUsage = prepared.stripUsage;
      const provider = providers[channel.protocol];
      return {
        url: channelUrl(channel.baseUrl, spec.path(req, upstreamModel)),
        headers: upstreamRequestHeaders(ctx.req.headers, provider.authHeaders(key), prepared.body.length,
          isMultipart(req.contentType) ? req.contentType : undefined),
        body: prepared.body,
      };
    },
    respond(upstream, channel) {
      const ok = upstream.status >= 200 && upstream.status < 300;
      if (ok) ctx.upstreamStatus = upstream.status;
      const privateHeaders = providers[channel.protocol].privateResponseHeaders;
      return stream && ok && isEventStream(upstream)
        ? relayStream(ctx, upstream, spec, stripUsage, privateHeaders)
        : relayBody(ctx, upstream, spec, ok, privateHeaders);
    },
  };
}

async function relayStream(
  ctx: RequestContext, upstream: UpstreamResponse, spec: PassthroughSpec, strip: boolean, privateHeaders: readonly string[],
): Promise<void> {
  const tap = spec.streamTap!(strip);
  // A stream we may edit is re-framed, so its length goes.
  const headers = downstreamResponseHeaders(upstream.headers, privateHeaders, false);
  await relay({ ctx, body: upstream.body, status: upstream.status, headers, flushHeaders: true,
    transform: (chunk) => tap.push(chunk), finish: () => tap.end() });
  ctx.usage = tap.usage;
  ctx.outputChars = tap.outputChars;
}

/** Relays a whole answer as it arrives, keeping a copy to read usage at the end. */
async function relayBody(
  ctx: RequestContext, upstream: UpstreamResponse, spec: PassthroughSpec, ok: boolean, privateHeaders: readonly string[],
): Promise<void> {
  const headers = downstreamResponseHeaders(upstream.headers, privateHeaders, true);
  const keep = ok && spec.keepsBody !== false;
  const chunks: Buffer[] = [];
  let kept = 0;
  await relay({ ctx, body: upstream.body, status: upstream.status, headers, flushHeaders: false,
    transform: (chunk) => {
      if (keep && kept + chunk.length <= maxTappedBody) { chunks.push(chunk); kept += chunk.length; }
      return chunk;
    } });
  if (!ok) return;
  const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, kept);
  ctx.usage = spec.bodyUsage(body);
  if (spec.bodyJobId) ctx.jobId = spec.bodyJobId(body);
  if (spec.bodyUnits) {
    const units = spec.bodyUnits(body);
    if (units) ctx.units = units;
    else ctx.unitsEstimated = true; // billed by the pre-deduction's estimate, and marked so
  }
  if (!ctx.usage) ctx.outputChars = spec.bodyChars(body);
}

/** A multipart upload keeps its own Content-Type (the boundary) on the way upstream. */
function isMultipart(contentType: string | undefined): contentType is string {
  return contentType !== undefined && /^multipart\//i.test(contentType);
}

function isEventStream(res: UpstreamResponse): boolean {
  return (res.headers["content-type"] ?? "").startsWith("text/event-stream");
}
