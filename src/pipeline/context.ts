// Per-request state, typed by phase: a read-only core the server hands in, plus one result
// per phase, each written once (through `give`) by the phase that produces it. A stage's
// type names the results it needs (`Needs<"call">`), so a stage placed before its producer
// does not compile; the lifecycle's startup check does the same per route at run time.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { GatewayError } from "../errors/gateway-error.js";
import type { Protocol } from "../runtime/types.js";
import type { Channel, Group, Model, Runtime, Token, User } from "../runtime/types.js";
import type { Hit, LimitHolds, Reservation } from "../state/interfaces.js";
import type { MultipartFile, MultipartPart } from "../media/multipart.js";
import type { Served } from "../upstream/served.js";
import type { UsageEntry } from "../state/store.js";
import type { RememberedJob } from "../routing/jobs.js";
import type { Units, Usage } from "../protocols/usage.js";
import type { CanonicalRequest } from "../protocols/canonical.js";
import type { Route } from "./routes.js";
import type { LimitWindow } from "./rate-windows.js";

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

/** What the server knows of a request before any phase runs. */
export interface Core {
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
  /** Set for a WebSocket upgrade (realtime). */
  readonly upgrade: Upgrade | undefined;
}

/** The route phase's result: which route, and what the path named. */
export interface Target {
  readonly route: Route;
  /** The wire protocol errors and the model list answer in (the route's, or on a path
   * shared by the SDKs the caller's). */
  readonly protocol: Protocol;
  /** Model named in the path (generate-content), or in the query (realtime's ?model=). */
  readonly pathModel: string | undefined;
  /** Action named in the path (generate-content: generateContent | streamGenerateContent;
   * a video job: status | content). */
  readonly pathAction: string | undefined;
  /** Id of the asynchronous job (video) the path names. */
  readonly jobId: string | undefined;
}

/** The access phase's result: the token's user and group, and where the call came from. */
export interface Account {
  readonly user: User;
  readonly group: Group;
  /** The client address, when the token's IP allowlist needed it. */
  readonly clientIp: string | undefined;
}

/** The body phase's result. */
export interface Input {
  /** Raw request body as received. */
  readonly body: Buffer;
  /** Parsed JSON body (an object); for multipart bodies, their text fields. */
  readonly json: Record<string, unknown>;
  /** Files of a multipart body (measured, not kept apart from `body`). */
  readonly files: readonly MultipartFile[] | undefined;
  /** A multipart body's parts in order, as busboy read them (a rewrite rebuilds from them). */
  readonly parts: readonly MultipartPart[] | undefined;
}

/** The model phase's result: the model called, and the request as fitted to it. */
export interface Call {
  /** The model as the client named it (billing and logs use this name). */
  readonly name: string;
  readonly model: Model;
  /** What fitting the request to the model's capabilities changed (dropped reasoning
   * fields, a clamped output limit): named to the client and in the usage log. */
  readonly fitted: readonly string[] | undefined;
  /** The body sent on: the input's, or its fitted copy; empty for a route without one. */
  readonly body: Buffer;
  /** The parsed body as sent on (fitted); empty for a route without one. */
  readonly json: Record<string, unknown>;
}

/** The rules phase's result. */
export interface Rules {
  /** Non-token quantities the request is billed by (images, characters, …), as its rules
   * read them from the request (the answer may correct them: served.units). */
  readonly units: Units | undefined;
}

/** The stored-responses phase's result. */
export interface BodyEdits {
  /** Top-level members the gateway adds to the body a pass-through sends upstream (a
   * responses `store: false` the client left out); the body itself stays as received. */
  readonly members: Readonly<Record<string, unknown>> | undefined;
}

/** The admit phase's result: everything the request took, which settlement gives back. */
export interface Admission {
  /** True when a window, slot or budget refused the request (it counts nowhere). */
  readonly refused: boolean;
  /** The pre-deduction held for this request. */
  readonly reservation: Reservation | undefined;
  /** Concurrency slots and tokens-per-minute holds taken with it. */
  readonly holds: LimitHolds | undefined;
  /** The worst-case usage the pre-deduction was priced from (a billing fault is billed at it). */
  readonly reservedUsage: Usage | undefined;
  /** The output it reserved for: the cap sent upstream, and the tokens held. */
  readonly output: ReservedOutput | undefined;
  /** The rate windows taken, and `hits[i]` the hit taken in `windows[i]`. */
  readonly windows: readonly LimitWindow[];
  readonly hits: readonly Hit[];
}

/** The terminal phase's result: what answered. */
export interface Outcome {
  /** What the upstream served; its last bytes wait for settlement (served.release). */
  readonly served: Served | undefined;
  /** The channel that answered (last attempt) and the model name sent upstream. */
  readonly channel: Channel | undefined;
  readonly upstreamModel: string | undefined;
  /** The fingerprint of the channel key that served (never the key); absent when none did. */
  readonly key?: string;
  /** Upstream attempts made. */
  readonly attempts: number;
}

/** Every phase result, by the name the phase gives it. */
export interface Results {
  readonly target: Target;
  /** The authenticated token (auth). */
  readonly caller: Token;
  readonly account: Account;
  readonly input: Input;
  readonly call: Call;
  readonly rules: Rules;
  readonly edits: BodyEdits;
  /** The fetched job's record (its owner, channel and model), once the caller may fetch it. */
  readonly job: RememberedJob;
  readonly admission: Admission;
  readonly outcome: Outcome;
  /** The usage-log entry settlement committed (cost, billed usage), for the request log. */
  readonly settled: UsageEntry;
  /** The error the gateway answered with (the log phase). */
  readonly error: GatewayError;
}

/** A result's name. */
export type ResultName = keyof Results;

/** The whole request context: the core, and every result (undefined until its phase ran). */
export type RequestContext = Core & { readonly [K in ResultName]: Results[K] | undefined };

/** The named results, written. */
export type Has<K extends ResultName> = { readonly [P in K]: Results[P] };

/** The context once the named results are written. */
export type Needs<K extends ResultName> = RequestContext & Has<K>;

/**
 * A pipeline stage: it needs the results in `I`, does its part, then (usually) awaits the
 * rest, handing on the context it was given plus the results in `Add` (what it wrote).
 * Generic in the context it is handed, so what earlier phases wrote stays in the type.
 */
export type Stage<I, Add = unknown> = <C extends I>(ctx: C, next: (ctx: C & Add) => Promise<void>) => Promise<void>;

/** Writes a phase's result onto the context (once) and returns it typed with it. */
export function give<C extends RequestContext, K extends ResultName>(ctx: C, name: K, value: Results[K]): C & Has<K> {
  (ctx as unknown as { [P in K]: Results[P] | undefined })[name] = value;
  return ctx as C & Has<K>;
}

/** A new context, every result present (undefined) from the start: one object shape for
 * all requests, no hidden-class transitions as phases write theirs. */
export function newContext(
  id: string, req: IncomingMessage, res: ServerResponse, runtime: Runtime, path: string, query: string, upgrade: Upgrade | undefined,
): RequestContext {
  return {
    id, req, res, runtime, startNs: process.hrtime.bigint(), path, query, upgrade,
    target: undefined, caller: undefined, account: undefined, input: undefined, call: undefined, rules: undefined,
    edits: undefined, job: undefined, admission: undefined, outcome: undefined, settled: undefined, error: undefined,
  };
}

/** The model a request is about: the one it called, or the one of the job it fetched. */
export function modelNameOf(ctx: RequestContext): string | undefined {
  return ctx.call?.name ?? ctx.job?.model;
}
