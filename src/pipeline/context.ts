// Per-request state shared by the stages. Created by the server, filled in stage by stage;
// the Runtime is captured once here and used for the whole request.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { GatewayError } from "../errors/gateway-error.js";
import type { WireFamily } from "../protocols/render-error.js";
import type { Channel, Group, Model, Runtime, Token, User } from "../runtime/types.js";
import type { Route } from "./routes.js";
import type { LimitHolds, Reservation } from "../state/interfaces.js";
import type { Units } from "../billing/cost.js";
import type { MultipartFile, MultipartPart } from "../media/multipart.js";
import type { Served } from "../upstream/served.js";
import type { UsageEntry } from "../state/store.js";
import type { PendingLimits } from "./rate-windows.js";
import type { RememberedJob } from "../routing/jobs.js";
import type { Usage } from "../protocols/usage.js";
import type { CanonicalRequest } from "../protocols/canonical.js";

/** What a model call reserves for its output (pipeline/output-limit.ts). */
export interface ReservedOutput {
  /** The output cap per answer: the client's, else the model's max_output_tokens. */
  readonly limit: number;
  /** Output tokens reserved: the cap × the answers asked for (n, candidateCount), or
   * more where a converted request's encoder raises the cap (thinking on top of it). */
  readonly tokens: number;
  /** The request in canonical form, when a converting channel's cap needed it. */
  readonly canonical?: CanonicalRequest;
}

/** A WebSocket upgrade request's raw connection. */
export interface Upgrade {
  readonly socket: Duplex;
  readonly head: Buffer;
}

export interface RequestContext {
  readonly id: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The config this request started with; a reload never changes it. */
  readonly runtime: Runtime;
  /** process.hrtime.bigint() at arrival. */
  readonly startNs: bigint;
  /** Path without the query string. */
  readonly path: string;
  /** Raw query string without "?", or "". */
  readonly query: string;
  /** Error shape and auth family; known before routing from the path prefix. */
  family: WireFamily;
  route?: Route;
  /** Model named in the path (generate-content). */
  pathModel?: string;
  /** Action named in the path (generate-content: generateContent | streamGenerateContent). */
  pathAction?: string;
  clientIp?: string;
  token?: Token;
  user?: User;
  group?: Group;
  /** Raw request body as received. */
  body?: Buffer;
  /** Parsed JSON body (an object); for multipart bodies, their text fields. */
  json?: Record<string, unknown>;
  /** Files of a multipart body (measured, not kept apart from `body`). */
  files?: readonly MultipartFile[];
  /** A multipart body's parts in order, as busboy read them (a rewrite rebuilds from them). */
  parts?: readonly MultipartPart[];
  /** The model as the client named it (billing and logs use this name). */
  modelName?: string;
  model?: Model;
  /** Top-level members the gateway adds to the body a pass-through sends upstream (a
   * responses `store: false` the client left out); the body itself stays as received. */
  bodyMembers?: Readonly<Record<string, unknown>>;
  /** What fitting the request to the model's capabilities changed (dropped reasoning
   * fields, a clamped output limit): named to the client and in the usage log. */
  fitted?: readonly string[];
  /** The channel that answered (last attempt) and the model name sent upstream. */
  channel?: Channel;
  upstreamModel?: string;
  attempts: number;
  /** Non-token quantities the request is billed by (images, characters, …), as its rules
   * read them from the request (the answer may correct them: served.units). */
  units?: Units;
  /** Id of the asynchronous job (video) this request fetches. */
  jobId?: string;
  /** That job's record (its owner, channel and model), once the caller may fetch it. */
  job?: RememberedJob;
  /** The token's rate windows, when the reserve stage takes them with the pre-deduction. */
  limits?: PendingLimits;
  /** The pre-deduction held for this request. */
  reservation?: Reservation;
  /** The worst-case usage the pre-deduction was priced from (a billing fault is billed at it). */
  reservedUsage?: Usage;
  /** The output it reserved for: the cap sent upstream, and the tokens held. */
  output?: ReservedOutput;
  /** Concurrency slots and tokens-per-minute holds taken with it (settlement gives them back). */
  holds?: LimitHolds;
  /** What the upstream served, as the upstream stage learned it; its last bytes wait for
   * settlement (served.release). */
  served?: Served;
  /** The usage-log entry settlement committed (cost, billed usage), for the request log. */
  settled?: UsageEntry;

  /** Set when the response is an error the gateway produced. */
  error?: GatewayError;
  /** Set for a WebSocket upgrade (realtime). */
  readonly upgrade?: Upgrade;
}
