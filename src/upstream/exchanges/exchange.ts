// One way of talking to a channel for a request: build the upstream request, then relay
// the answer. Pass-through and conversion are the two kinds; the failover loop picks one
// per attempt by the channel's protocol.

import type { Channel } from "../../runtime/types.js";
import type { UpstreamResponse } from "../send.js";

export interface UpstreamRequest {
  readonly url: URL;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
}

export interface Exchange {
  /** The request for this channel, with the model name it knows and one of its keys. */
  request(channel: Channel, upstreamModel: string, key: string): UpstreamRequest;
  /** Relays an answer the failover loop decided to keep (any status but a failover one). */
  respond(upstream: UpstreamResponse, channel: Channel): Promise<void>;
}

/** Reads a whole (small) upstream body, e.g. an error, up to `limit` bytes. */
export async function readAll(body: UpstreamResponse["body"], limit = 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size + chunk.length > limit) {
      body.destroy();
      break;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks, size);
}
