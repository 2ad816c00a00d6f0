// What each wire protocol provides to the hub. An inbound adapter serves clients that speak
// the protocol; an outbound adapter talks to channels that speak it. Pure: no sockets.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Usage } from "./usage.js";
import type { CanonicalEvent, CanonicalRequest, CanonicalResponse } from "./canonical.js";
import type { HubRoute } from "./field-policy.js";
import type { StreamFraming } from "./stream-framing.js";

/**
 * An outbound encoder's refusal of a request field its protocol cannot express. It names
 * the canonical field; the hub re-words it with the client's own name for that field
 * (InboundAdapter.fieldNames) before the 400 goes out.
 */
export class UnsupportedField extends GatewayError {
  constructor(readonly field: keyof CanonicalRequest, readonly reason: string) {
    super(errors.invalidParameter, `${field}: ${reason}`);
  }
}

/** One parsed SSE event: its `event:` name (if any) and joined `data:`. */
export interface SseEvent {
  readonly event?: string;
  readonly data: string;
}

/** Turns canonical stream events into the client's SSE text. One per response. */
export interface StreamEncoder {
  /** SSE text for this event ("" when the protocol has nothing to say for it). */
  encode(event: CanonicalEvent): string;
}

/** Turns a channel's SSE events into canonical events. One per response; keeps the state
 * (open blocks, tool-call indexes, usage so far) that the protocol spreads over events. */
export interface StreamDecoder {
  decode(event: SseEvent): CanonicalEvent[];
  /** Called at end of stream: closes what the upstream left open (a message_stop at
   * least, when the upstream ended without one). */
  end(): CanonicalEvent[];
  /** True once the protocol's terminal event came, for protocols whose message_stop waits
   * for end() (generate-content's last chunk is only known by its finishReason): the answer
   * is whole even if the upstream keeps the connection open. */
  finished?(): boolean;
  /** The usage the upstream reported so far (running or partial counts, zero where none
   * came), for billing an answer that stopped before its end. */
  usageSoFar?(): Usage;
}

export interface InboundAdapter {
  /** The protocol it speaks: its rows in the field policy's table (field-policy.ts). */
  readonly wire: HubRoute;
  /**
   * Reads a client request. Throws GatewayError (400 invalid_request_error, naming the
   * field) for anything malformed or that the table refuses; never drops a field silently:
   * what the table drops is named in `dropped`. `pathModel`/`pathStream` come from the URL
   * for generate-content.
   */
  decodeRequest(json: Record<string, unknown>, from: { readonly pathModel?: string; readonly pathStream?: boolean }): CanonicalRequest;
  /** The client's response body (a JSON value) for a complete answer. */
  encodeResponse(response: CanonicalResponse, request: CanonicalRequest): unknown;
  /** A stream encoder for one response. */
  streamEncoder(request: CanonicalRequest): StreamEncoder;
  /** SSE text the protocol sends after the last event (chat-completions: "data: [DONE]"). */
  readonly streamTrailer: string;
  /** The client's framing of a stream, from its query, when it is not SSE (generate-content
   * without `alt=sse`: a JSON array); absent or undefined: SSE. */
  streamFraming?(query: string): StreamFraming | undefined;
  /**
   * The client's name for each canonical request field an outbound encoder may refuse
   * (e.g. frequencyPenalty → frequency_penalty), so the 400 names the field as it was sent.
   */
  readonly fieldNames: Readonly<Partial<Record<keyof CanonicalRequest, string>>>;
}

/** What the channel's provider kind asks of an encoder beyond its protocol. */
export interface EncodeOptions {
  /** The chat-completions field an assistant message carries its reasoning back in, for
   * upstreams that need it (DeepSeek's `reasoning_content` on tool-call turns); absent:
   * reasoning is not sent back. Other encoders ignore it. */
  readonly chatReasoningField?: ChatReasoningField;
}

/** Fields in which OpenAI-compatible upstreams take reasoning back on chat messages. */
export type ChatReasoningField = "reasoning_content";

export interface OutboundAdapter {
  /** Upstream path (and query) for the request, e.g. "/v1/messages". */
  path(request: CanonicalRequest, upstreamModel: string): string;
  /**
   * The channel's request body. Throws GatewayError (400, naming the field) for what the
   * channel's protocol cannot express.
   */
  encodeRequest(request: CanonicalRequest, upstreamModel: string, options?: EncodeOptions): Record<string, unknown>;
  /** Reads a complete upstream answer (2xx body, parsed JSON). */
  decodeResponse(json: unknown): CanonicalResponse;
  /** A stream decoder for one upstream response. */
  streamDecoder(): StreamDecoder;
  /** The human-readable message of an upstream error body, if it has one. */
  errorMessage(json: unknown): string | undefined;
  /** The most output tokens the encoded request lets the channel produce, where the
   * encoder may raise `request.maxTokens` (absent: exactly `request.maxTokens`). */
  outputCap?(request: CanonicalRequest): number | undefined;
}
