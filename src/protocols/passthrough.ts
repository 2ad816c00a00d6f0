// What the gateway must know to pass a protocol through untouched: where to send it, the
// one edit it may make to the body (the model_map rename, asking for stream usage), and
// how to read usage from the answer as it flows by.

import type { GatewayError } from "../errors/gateway-error.js";
import { replaceField, type MultipartPart } from "../media/multipart.js";
import type { Protocol } from "../runtime/types.js";
import { normalizeOpenAIUsage } from "./openai/usage.js";
import type { PortableBody } from "./reasoning.js";
import type { CostStamp } from "./stream-cost.js";
import type { StreamFraming } from "./stream-framing.js";
import type { SseUsageTap } from "./usage-tap.js";
import { positiveCount, type Units, type Usage } from "./usage.js";

/** Query parameters a protocol forwards upstream: name → the values it may carry. */
export type QueryAllowList = ReadonlyMap<string, ReadonlySet<string>>;

/** The parts of a request a pass-through spec looks at. */
export interface PassRequest {
  readonly raw: Buffer;
  readonly json: Record<string, unknown>;
  /** Model named in the URL (generate-content). */
  readonly pathModel?: string;
  /** Action named in the URL (generate-content: generateContent | streamGenerateContent). */
  readonly pathAction?: string;
  /** API version named in the URL (generate-content: v1beta or Google's GA v1); undefined
   * for routes without one. */
  readonly apiVersion?: string;
  /** The client's query string without "?", rebuilt from the spec's `query` allow-list. */
  readonly query: string;
  /** The client's Content-Type header. */
  readonly contentType?: string;
  /** A multipart body's parts in order, as busboy read them. */
  readonly parts?: readonly MultipartPart[];
  /** The output tokens reserved per answer: the upstream's own limit field is set to it
   * when the client set none (undefined: nothing is added). */
  readonly outputLimit?: number;
  /** The model is priced by tokens (ExchangeInput.tokenPriced). */
  readonly tokenPriced?: boolean;
  /** Members the gateway adds upstream (ExchangeInput.bodyMembers). */
  readonly members?: Readonly<Record<string, unknown>>;
}

export interface PassthroughSpec {
  /** The channel protocol this inbound protocol passes through to. */
  readonly channelProtocol: Protocol;
  /** Whether the client asked for a stream. */
  isStream(req: PassRequest): boolean;
  /** Query parameters of the client that go upstream (and their values); none when absent. */
  readonly query?: QueryAllowList;
  /** An object the request names that lives under the operator's upstream account and
   * that no tenant can have created through the gateway (an uploaded file, a vector
   * store, cached content), described ("file 'file-abc'"); the request is then refused as
   * unknown (404) before it reaches the provider. */
  storedReference?(json: Record<string, unknown>): string | undefined;
  /** The body with signed reasoning other providers issued left out (and the gateway's seal
   * taken off the channel's own), named; undefined when the client's bytes can go as they
   * are (reasoning.ts). A walk of the parsed body, which allocates nothing when nothing
   * changes: cheaper than a text search of the raw bytes (a scan of the whole body). */
  portable?(json: Record<string, unknown>): PortableBody | undefined;
  /** Upstream path and query. */
  path(req: PassRequest, upstreamModel: string): string;
  /** The upstream body: the client's bytes unless an edit is needed. `stripUsage`: the
   * gateway asked for stream usage the client did not, so the tap removes it again.
   * `contentType`: a rewritten multipart body's own (its boundary). */
  body(req: PassRequest, upstreamModel: string): { readonly body: Buffer; readonly stripUsage: boolean; readonly contentType?: string };
  /** A tap for one streamed answer; absent for endpoints that never stream. */
  streamTap?(stripUsage: boolean): SseUsageTap;
  /** The event that ends a stream the gateway has to cut short, in the protocol's own
   * error shape; `relayed`: events relayed before it. Present with streamTap. */
  streamError?(err: GatewayError, relayed: number): string;
  /** Puts the answer's cost into a stream's withheld tail (its final usage event). Present
   * with streamTap. */
  readonly streamCost?: CostStamp;
  /** The client's framing of a stream when it is not the SSE the gateway asked upstream
   * for (generate-content's JSON array); undefined relays the events as they are. */
  streamFraming?(req: PassRequest): StreamFraming | undefined;
  /** Whether a 2xx answer must be JSON (checked before it is relayed); default true.
   * Audio and plain-text answers are relayed as bytes. */
  answersJson?(req: PassRequest): boolean;
  /** The answer in the format the client asked for, when the gateway asked upstream for
   * another (a transcript as text, from the JSON that carries its usage); undefined relays
   * the JSON as it came. */
  renderAnswer?(req: PassRequest, json: unknown): RenderedAnswer | undefined;
  /** Usage of a complete answer, from its parsed JSON (undefined for an answer that is not
   * JSON: audio, plain text). */
  bodyUsage(json: unknown): Usage | undefined;
  /** The provider's answers rightly carry no usage (moderations): one without is billed by
   * estimate, not judged a billing fault. */
  readonly usageOptional?: boolean;
  /** Characters of generated text in a complete answer (estimates when usage is missing). */
  bodyChars(body: Buffer): number;
  /** Non-token units read from a complete answer (e.g. seconds of audio transcribed). */
  bodyUnits?(json: unknown): Units | undefined;
  /** The id of an asynchronous job the answer created (video), for fetching it later. */
  bodyJobId?(json: unknown): string | undefined;
  /** The id the provider gave a complete answer (a responses object). */
  bodyAnswerId?(json: unknown): string | undefined;
}

/** A whole answer rendered for the client. */
export interface RenderedAnswer {
  readonly body: Buffer;
  readonly contentType: string;
}

/** A top-level field of a parsed JSON answer; undefined when the answer is no object. */
export function answerField(json: unknown, key: string): unknown {
  return json !== null && typeof json === "object" ? (json as Record<string, unknown>)[key] : undefined;
}

/** The body with `model` renamed: a JSON body re-serialised, a multipart upload edited in
 * place; the client's bytes untouched when the name does not change. */
export function renamedBody(req: PassRequest, upstreamModel: string): Buffer {
  if (req.json.model === upstreamModel) return req.raw;
  if (/^multipart\//i.test(req.contentType ?? "")) return replaceField(req.raw, req.contentType!, "model", upstreamModel);
  return editedBody(req, upstreamModel);
}

/**
 * A spec for a request/answer endpoint that never streams (embeddings, images, audio,
 * video, …), on OpenAI-protocol channels: body as sent but for the rename, usage from the
 * answer's `usage` unless `overrides` say otherwise.
 */
export function wholeBody(path: string, overrides: Partial<PassthroughSpec> = {}): PassthroughSpec {
  return Object.freeze<PassthroughSpec>({
    channelProtocol: "openai",
    isStream: () => false,
    path: () => path,
    body: (req, upstreamModel) => ({ body: renamedBody(req, upstreamModel), stripUsage: false }),
    bodyUsage: (json) => normalizeOpenAIUsage(answerField(json, "usage")),
    bodyChars: () => 0,
    ...overrides,
  });
}

/** Whether the upstream must be told `req.outputLimit`: none of the protocol's own limit
 * `fields` of `json` holds a positive count (a client's limit under another protocol's
 * name, or null, holds no upstream to anything). */
export function limitMissing(req: PassRequest, json: Record<string, unknown>, fields: readonly string[]): boolean {
  return req.outputLimit !== undefined && !fields.some((f) => positiveCount(json[f]) !== undefined);
}

/**
 * The client's JSON body for an upstream that must be held to `req.outputLimit` output
 * tokens in the first of `fields` (any other of them holding no count is dropped), renamed
 * to `upstreamModel`, with `extra` top-level fields (editedBody).
 */
export function limitedBody(req: PassRequest, upstreamModel: string, fields: readonly string[], extra?: Record<string, unknown>): Buffer {
  if (!limitMissing(req, req.json, fields)) return editedBody(req, upstreamModel, extra);
  const set: Record<string, unknown> = {};
  for (const f of fields) set[f] = undefined; // JSON.stringify leaves an undefined member out
  set[fields[0]] = req.outputLimit;
  if (extra !== undefined) for (const k in extra) set[k] = extra[k];
  return editedBody(req, upstreamModel, set);
}

/**
 * The client's JSON body renamed to `upstreamModel` with the top-level members of `set`
 * (an undefined value removes the member): the client's bytes when nothing changes; the
 * members spliced in after the opening brace when they are all new and the name stays
 * (the rest byte for byte); else re-serialised, once.
 */
export function editedBody(req: PassRequest, upstreamModel: string, set?: Record<string, unknown>): Buffer {
  const json = req.json;
  if (json.model === upstreamModel && (set === undefined || !Object.keys(set).some((k) => k in json))) {
    if (set === undefined) return req.raw;
    let members = "";
    for (const [k, v] of Object.entries(set)) {
      if (v !== undefined) members += `${members === "" ? "" : ","}${JSON.stringify(k)}:${JSON.stringify(v)}`;
    }
    return members === "" ? req.raw : spliceMembers(req.raw, members);
  }
  return Buffer.from(JSON.stringify({ ...json, model: upstreamModel, ...set }));
}

/** A JSON object's text with `"name":value` added as its first member (the caller knows
 * the object has no such member). */
export function spliceField(raw: Buffer, name: string, valueJson: string): Buffer {
  return spliceMembers(raw, `${JSON.stringify(name)}:${valueJson}`);
}

/** A JSON object's text with `members` (`"a":1,"b":2`) put first, the rest byte for byte. */
function spliceMembers(raw: Buffer, members: string): Buffer {
  let open = 0;
  while (open < raw.length && raw[open] !== 0x7b) open++;
  let next = open + 1;
  while (next < raw.length && (raw[next] === 0x20 || raw[next] === 0x0a || raw[next] === 0x0d || raw[next] === 0x09)) next++;
  const text = `${members}${raw[next] === 0x7d ? "" : ","}`;
  return Buffer.concat([raw.subarray(0, open + 1), Buffer.from(text), raw.subarray(open + 1)]);
}
