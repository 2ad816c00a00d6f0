// A provider kind: a first-party API's manifest (provider.ts: headers, paths, key faults)
// and, for the kinds that are not a first-party API, how a request built for the protocol
// they speak becomes theirs (URL, body, credentials) and how their answer becomes the
// protocol's (stream framing, error shapes). Exchanges build first-party requests and read
// first-party answers; a kind's `prepare` and `answer` stand between them and the wire.

import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import type { ChatReasoningField } from "../protocols/adapter.js";
import type { Channel, KindName, KindSettings, Protocol } from "../runtime/types.js";
import type { KeyFaultRules, ProviderSpec } from "./provider.js";

/** A request as an exchange built it for the protocol's first-party API. */
export interface WireRequest {
  /** Absent: POST. A GET (a job's status or content, a WebSocket's handshake) has an empty
   * body; a kind that routes or signs by the method reads it here. */
  readonly method?: "GET";
  /** channels[].base_url joined with `path`. */
  readonly url: URL;
  /** The protocol's path with its query, e.g. "/v1/messages" or
   * "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse". */
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
  /** The model name the channel knows (model_map applied). */
  readonly upstreamModel: string;
  /** An event stream is asked for. */
  readonly stream: boolean;
}

/** An answer: status, head and body as they arrive. */
export interface WireAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
}

/** What compiling a channel's kind settings gives, or the problems found (each a sentence
 * naming the key). */
export interface CompiledKind {
  readonly settings: KindSettings;
  /** The channel's keys: channels[].keys, or credentials the kind reads from elsewhere
   * (Bedrock's access key pairs, Vertex's key file), one string each. */
  readonly keys: readonly string[];
  /** base_url, or the kind's own host for the settings. */
  readonly baseUrl: string;
  readonly problems: readonly string[];
}

/** channels[] as the config file gives it, for the keys kinds read (credentials_file
 * already resolved against the config file's folder). */
export interface RawKindChannel {
  readonly name: string;
  readonly base_url?: string;
  readonly keys?: readonly string[];
  readonly preset?: string;
  readonly region?: string;
  readonly project?: string;
  readonly api_version?: string;
  readonly credentials?: Readonly<Record<string, string>>;
  readonly credentials_file?: string;
}

export interface ProviderKind extends ProviderSpec {
  readonly kind: KindName;
  /** The protocols a channel of this kind may name (vertex: anthropic for Claude, gemini for
   * Gemini); absent: `protocol` alone, the one it speaks by default. */
  readonly protocols?: readonly Protocol[];
  /** Reads the channel's settings for this kind (problems name the key, without the
   * channel: the config says where); absent: plainKind. */
  readonly compile?: (raw: RawKindChannel) => CompiledKind;
  /** The kind's request for a first-party one: its URL, body and credentials (a header,
   * a signature over the request, a token it mints). Absent: as built, with authHeaders. */
  readonly prepare?: (channel: Channel, key: string, request: WireRequest) => WireRequest | Promise<WireRequest>;
  /** The kind names the model in the URL and leaves the body's `model` out of what it
   * sends: a pass-through does not re-serialise the client's body for a name the kind
   * removes (model_map applies to the URL through WireRequest.upstreamModel). */
  readonly modelInUrl?: boolean;
  /** The protocol's answer for the kind's: another framing read into SSE, errors into the
   * protocol's error shape (so key faults are judged as the first-party API's). Absent:
   * as it came. */
  readonly answer?: (channel: Channel, answer: WireAnswer, request: WireRequest) => WireAnswer;
  /** The chat-completions field in which the channel's upstream takes reasoning back on
   * assistant tool-call messages (DeepSeek: `reasoning_content`); absent or undefined: none.
   * A function of the channel: a kind's presets differ. */
  readonly chatReasoningField?: (channel: Channel) => ChatReasoningField | undefined;
  /** Whether the channel's upstream counts tokens (the protocol's count_tokens) for
   * `upstreamModel` (model_map applied); absent: every model. One that cannot is not asked
   * (Bedrock's CountTokens refuses the models it serves through Converse): the gateway
   * estimates instead. */
  readonly countsTokens?: (channel: Channel, upstreamModel: string) => boolean;
  /** The key-fault rules of a channel whose settings pick other than `keyFaults` (an
   * openai-compatible preset's vendor); absent, or undefined for the channel: `keyFaults`. */
  readonly channelKeyFaults?: (channel: Channel) => KeyFaultRules | undefined;
}

/** An answer's headers for a body the kind rewrote: its length goes (the body is another),
 * its type is the rewritten body's. */
export function rewrittenHeaders(headers: IncomingHttpHeaders, contentType: string): IncomingHttpHeaders {
  const { "content-length": _length, ...rest } = headers;
  return { ...rest, "content-type": contentType };
}

/** Kind settings a channel may carry; each kind reads those it has. */
export const KIND_SETTING_KEYS = ["preset", "region", "project", "api_version", "credentials", "credentials_file"] as const;

/** Problems with settings a kind does not have (`allowed` are those it reads). */
export function foreignSettings(raw: RawKindChannel, kind: KindName, allowed: readonly (typeof KIND_SETTING_KEYS)[number][]): string[] {
  return KIND_SETTING_KEYS.filter((key) => raw[key] !== undefined && !allowed.includes(key))
    .map((key) => `${key} is not a setting of kind ${kind}`);
}

/** The settings of a kind that has none of its own: base_url (required) and keys as given. */
export function plainKind(raw: RawKindChannel, kind: KindName): CompiledKind {
  const problems = foreignSettings(raw, kind, []);
  if (raw.base_url === undefined) problems.push(`base_url is required for kind ${kind}`);
  return { settings: {}, keys: (raw.keys ?? []).filter((k) => k !== ""), baseUrl: raw.base_url ?? "http://base-url.invalid", problems };
}

/** A channel's kind settings: the kind's own compile, or plainKind. */
export function compileKind(kind: ProviderKind, raw: RawKindChannel): CompiledKind {
  return kind.compile ? kind.compile(raw) : plainKind(raw, kind.kind);
}

/** A kind could not make the credentials of a request: the key's own fault (a key file
 * that cannot be read, a token endpoint that refuses it: the key goes out of rotation) or
 * a service it needs that did not answer (a token endpoint unreachable: the next channel). */
export class CredentialFailure extends Error {
  constructor(readonly fault: "auth" | "unreachable", message: string) {
    super(message);
    this.name = "CredentialFailure";
  }
}
