// One way of talking to a channel for a request: build the upstream request, then relay
// the answer and say what was served. Pass-through and conversion are the two kinds; the
// failover loop picks one per attempt by the channel's protocol.

import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { Endpoint } from "../../runtime/types.js";
import type { MultipartPart } from "../../media/multipart.js";
import type { CanonicalRequest } from "../../protocols/canonical.js";
import type { Usage } from "../../protocols/usage.js";
import type { Channel } from "../../runtime/types.js";
import type { WireRequest } from "../../providers/kind.js";
import type { UpstreamResponse } from "../send.js";
import type { Served } from "../served.js";

/** What an exchange needs of the client's request, as plain values. */
export interface ExchangeInput {
  readonly requestId: string;
  readonly headers: IncomingHttpHeaders;
  /** The body as received, and parsed (a multipart body's fields). */
  readonly body: Buffer;
  readonly json: Record<string, unknown>;
  /** A multipart body's parts in order, as busboy read them. */
  readonly parts?: readonly MultipartPart[];
  /** Raw query string without "?", or "". */
  readonly query: string;
  /** Model and action named in the path (generate-content). */
  readonly pathModel?: string;
  readonly pathAction?: string;
  /** The API version in the path (generate-content: v1beta or v1), kept by a pass-through. */
  readonly apiVersion?: string;
  /** The model as the client named it. */
  readonly modelName: string;
  /** The output tokens the request reserved for, per answer: sent upstream as the
   * provider's own output limit wherever the client set none, so the reservation bounds
   * what the answer can cost. Undefined for a request that reserved nothing (the free
   * token-counting routes): no limit is added. */
  readonly outputLimit: number | undefined;
  /** Members a pass-through adds to the body it sends upstream (RequestContext.bodyMembers). */
  readonly bodyMembers?: Readonly<Record<string, unknown>>;
  /** The model is priced by tokens: its answer must carry usage (a route whose default
   * answer carries none, speech, then asks upstream for one that does). */
  readonly tokenPriced?: boolean;
  /** The request already decoded to the canonical form (when reserving needed it). */
  readonly canonical?: CanonicalRequest;
  /** The endpoint kinds the model is priced for: which protocol an OpenAI-protocol channel
   * is spoken to in (a responses-only model: the responses API). */
  readonly modelEndpoints: ReadonlySet<Endpoint>;
  /** The model's `conversion` setting: strict refuses what a conversion would drop. */
  readonly conversion: "lenient" | "strict";
  /** Where the answer goes. */
  readonly res: ServerResponse;
  /** server.stream_idle_timeout, for the message of a stream that went silent. */
  readonly idleTimeoutMs: number;
  /** server.max_event_size: the longest upstream stream event held (in characters). */
  readonly maxEventBytes: number;
  /** How long (server.usage_drain_timeout) and how many bytes an answer the client left
   * is still read for its usage. */
  readonly drain: { readonly ms: number; readonly bytes: number };
  /** The cost to show (X-Gateway-Cost) for an answer billed by its request alone, whose
   * head goes before its end; undefined when it is not shown. */
  readonly quote?: (usage: Usage | undefined) => string | undefined;
  /** What fitting the request to the model's capabilities changed (ctx.fitted): named in
   * x-gateway-dropped-fields and the usage log on every route. */
  readonly fitted?: readonly string[];
}

/** The request for the protocol's first-party API; the channel's kind makes it its own
 * (providers/kind.ts). */
export type UpstreamRequest = WireRequest;

/** A 2xx answer that is no answer (not JSON, cut short) and that nothing of reached the
 * client: the channel failed, and the next one may be tried. */
export class BrokenAnswer {
  constructor(readonly reason: string) {}
}

export interface Exchange {
  /** The request for this channel, with the model name it knows and one of its keys. */
  request(channel: Channel, upstreamModel: string, key: string): UpstreamRequest;
  /** Relays an answer the failover loop decided to keep (any status but a failover one),
   * withholding its last bytes (Served.release). */
  respond(upstream: UpstreamResponse, channel: Channel): Promise<Served | BrokenAnswer>;
}

/** Reads a whole (small) upstream body, e.g. an error, up to `limit` bytes; a body cut
 * short gives what arrived. */
export async function readAll(body: UpstreamResponse["body"], limit = 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size + chunk.length > limit) {
        body.destroy();
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    // cut short or timed out: what arrived is all there is
  }
  return Buffer.concat(chunks, size);
}
