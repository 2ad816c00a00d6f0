// The route table: which paths exist, which wire protocol answers on them (auth header and
// error shape), and what each route is: how its body is read, where its model comes from,
// how it is admitted and what answers it. Static: it does not depend on gateway.yaml. The
// lifecycle (lifecycle.ts) composes each route's phases from these fields once, at startup.

import type { IncomingHttpHeaders } from "node:http";
import type { Endpoint } from "../runtime/types.js";
import type { Protocol } from "../runtime/types.js";

/** How a route's request body is read: JSON, multipart/form-data, either (an upload), or not at all. */
export type BodyKind = "json" | "multipart" | "upload" | "none";

/**
 * How a route is admitted: `reserve` takes the money, the rate windows, a concurrency slot
 * and the token budgets together; `session` (realtime's opening) the windows and a slot,
 * no money; `windows` the token's rate windows only (and a fetched job's model's); `free`
 * nothing (balance polls).
 */
export type Admission = "reserve" | "session" | "windows" | "free";

/** What answers a route once it is admitted. */
export type Terminal = "upstream" | "count-tokens" | "models" | "billing" | "redeem" | "job" | "realtime";

/** Where a route's model name comes from: the JSON (or form) body's `model`, the path, the
 * query (`?model=`, realtime), or nowhere (a job fetch learns its job's). */
export type ModelSource = "body" | "path" | "query" | "none";

/** One route: frozen data the lifecycle composes its phases from. */
export interface Route {
  /** Stable route name, used as the `protocol` label in logs and metrics. */
  readonly name: string;
  readonly method: "GET" | "POST";
  /** The wire protocol the route speaks: its auth header and its error shape. */
  readonly protocol: Protocol;
  /** The price-list endpoint kind a model must have to be called here. */
  readonly endpoint?: Endpoint;
  readonly body: BodyKind;
  readonly model: ModelSource;
  readonly admission: Admission;
  readonly terminal: Terminal;
  /** Whether the model's request_schema and the route's own rules judge the request. Not
   * for token counting: a request_schema describes a generation request (it may require
   * max_tokens, which a count body never has), and counting generates nothing. */
  readonly requestRules: boolean;
  /** A WebSocket-only route (realtime): a plain GET is refused (426). */
  readonly websocket: boolean;
  /** /v1/responses: stored responses stay with their creator (previous_response_id, store). */
  readonly storedResponses: boolean;
  /** A header the route's protocol requires (the messages protocol's anthropic-version). */
  readonly versionHeader?: "anthropic-version";
  /** How a reservation estimates the input: from a JSON model call's text (what its bytes
   * undercount: non-ASCII text, media, tools), or from the body's size alone. */
  readonly inputEstimate: "text" | "size";
  /** A poll (balance, job status) rather than a use: it answers with the money gone. */
  readonly poll: boolean;
  /** It costs nothing and reaches no upstream (the model lists): it still answers while the
   * accounts or the rate limiter are unreachable. */
  readonly answersWithoutState: boolean;
  /** A path every SDK calls (`/v1/models`): the caller's headers pick the protocol it
   * answers in, not the path. */
  readonly protocolFromCaller: boolean;
  /** The API version the client called (generate-content: `v1beta`, or `v1`, Google's GA
   * path); a pass-through keeps it toward channels of the same protocol. */
  readonly apiVersion?: string;
}

/** The fields most routes share: an OpenAI-protocol model call reading a JSON body. */
const modelCall = {
  method: "POST", protocol: "openai", body: "json", model: "body", admission: "reserve", terminal: "upstream",
  requestRules: true, websocket: false, storedResponses: false, inputEstimate: "text", poll: false,
  answersWithoutState: false, protocolFromCaller: false,
} as const;

/** A GET that reads nothing and takes only the token's windows (the model lists). */
const listing = {
  method: "GET", body: "none", model: "none", admission: "windows", terminal: "models",
  requestRules: false, websocket: false, storedResponses: false, inputEstimate: "size", poll: false,
  answersWithoutState: true, protocolFromCaller: false,
} as const;

function route(r: Route): Route {
  return Object.freeze(r);
}

const openaiPost = (name: string, endpoint: Endpoint, body: BodyKind = "json"): Route =>
  route({ ...modelCall, name, endpoint, body, inputEstimate: body === "json" ? "text" : "size" });

const billing = route({
  name: "billing", method: "GET", protocol: "openai", body: "none", model: "none", admission: "free", terminal: "billing",
  requestRules: false, websocket: false, storedResponses: false, inputEstimate: "size", poll: true,
  answersWithoutState: false, protocolFromCaller: false,
});

/** A token holder redeems a code into their own balance. A poll in that it answers with the
 * money gone (topping up is how a used-up balance comes back); it reads a small JSON body and
 * takes the token's rate windows like any request (request_rate gives a failed one's hit
 * back, so failed guesses are bounded by the redeem stage's own window). Free: it reaches no
 * upstream and charges nothing. */
const redeem = route({
  name: "redeem", method: "POST", protocol: "openai", body: "json", model: "none", admission: "windows", terminal: "redeem",
  requestRules: false, websocket: false, storedResponses: false, inputEstimate: "size", poll: true,
  answersWithoutState: false, protocolFromCaller: false,
});

/** Fixed paths → route. */
const exact = new Map<string, Route>([
  ["/v1/chat/completions", openaiPost("chat-completions", "chat")],
  ["/v1/models", route({ ...listing, name: "models", protocol: "openai", protocolFromCaller: true })],
  ...["/v1/dashboard/billing/subscription", "/v1/dashboard/billing/usage", "/dashboard/billing/subscription", "/dashboard/billing/usage"]
    .map((p) => [p, billing] as const),
  ["/v1/dashboard/redeem", redeem],
  ["/v1/responses", route({ ...modelCall, name: "responses", endpoint: "responses", storedResponses: true, inputEstimate: "size" })],
  ["/v1/messages", route({ ...modelCall, name: "messages", protocol: "anthropic", endpoint: "chat", versionHeader: "anthropic-version" })],
  ["/v1/messages/count_tokens", route({
    ...modelCall, name: "messages-count-tokens", protocol: "anthropic", endpoint: "chat", versionHeader: "anthropic-version",
    admission: "windows", terminal: "count-tokens", requestRules: false,
  })],
  ["/v1/embeddings", openaiPost("embeddings", "embeddings")],
  ["/v1/images/generations", openaiPost("images", "image")],
  ["/v1/images/edits", openaiPost("image-edits", "image", "multipart")],
  ["/v1/videos", openaiPost("videos", "video", "upload")],
  ["/v1/audio/transcriptions", openaiPost("transcriptions", "transcription", "multipart")],
  ["/v1/audio/speech", openaiPost("speech", "speech")],
  ["/v1/rerank", openaiPost("rerank", "rerank")],
  ["/v1/moderations", openaiPost("moderations", "moderation")],
  ["/v1/realtime", route({
    ...modelCall, name: "realtime", method: "GET", endpoint: "realtime", body: "none", model: "query", admission: "session",
    terminal: "realtime", requestRules: false, websocket: true, inputEstimate: "size",
  })],
]);

/** Generate-content routes per API version: the same route but for the version kept upstream. */
function generateRoutes(apiVersion: string) {
  return {
    generate: route({ ...modelCall, name: "generate-content", protocol: "gemini", endpoint: "chat", model: "path", apiVersion }),
    count: route({
      ...modelCall, name: "generate-content-count-tokens", protocol: "gemini", endpoint: "chat", model: "path", apiVersion,
      admission: "windows", terminal: "count-tokens", requestRules: false,
    }),
  };
}
const geminiVersions: Readonly<Record<string, ReturnType<typeof generateRoutes>>> = {
  "/v1beta/models/": generateRoutes("v1beta"),
  "/v1/models/": generateRoutes("v1"),
};
const geminiModels = route({ ...listing, name: "models", protocol: "gemini" });
/** One model by name (`pathModel`), answered by the model list; on /v1 the route stage
 * picks the shape from the caller's headers, as for the list. */
const modelInfo = {
  gemini: route({ ...listing, name: "models", protocol: "gemini" }),
  openai: route({ ...listing, name: "models", protocol: "openai", protocolFromCaller: true }),
} as const;

/** Every route of the table, each once (the lifecycle composes one chain per route). */
export function allRoutes(): readonly Route[] {
  const all = new Set<Route>([...exact.values(), geminiModels, modelInfo.gemini, modelInfo.openai, videoJob]);
  for (const v of Object.values(geminiVersions)) {
    all.add(v.generate);
    all.add(v.count);
  }
  return [...all];
}

/** Result of matching a path: the route, or why none matched. */
export type RouteMatch =
  | { readonly kind: "ok"; readonly route: Route; readonly pathModel?: string; readonly pathAction?: string; readonly pathId?: string }
  | { readonly kind: "not-found" }
  | { readonly kind: "method"; readonly route: Route };

const notFound: RouteMatch = Object.freeze({ kind: "not-found" });

/** Matches a method and path (without query) against the route table. */
export function matchRoute(method: string, path: string): RouteMatch {
  const hit = exact.get(path) ?? matchGemini(path) ?? matchVideoJob(path);
  if (!hit) return notFound;
  const r = "route" in hit ? hit.route : hit;
  if (r.method !== method) return { kind: "method", route: r };
  return "route" in hit
    ? { kind: "ok", route: r, pathModel: hit.pathModel, pathAction: hit.pathAction, pathId: hit.pathId }
    : { kind: "ok", route: r };
}

/** A job fetch: a poll that still takes the rate windows (it reaches the upstream). */
const videoJob = route({
  name: "video-jobs", method: "GET", protocol: "openai", body: "none", model: "none", admission: "windows", terminal: "job",
  requestRules: false, websocket: false, storedResponses: false, inputEstimate: "size", poll: true,
  answersWithoutState: false, protocolFromCaller: false,
});

/** `/v1/videos/{id}` (the job) and `/v1/videos/{id}/content` (the video). */
function matchVideoJob(path: string): { route: Route; pathModel?: string; pathAction: string; pathId: string } | undefined {
  const m = /^\/v1\/videos\/([A-Za-z0-9_.-]{1,200})(\/content)?$/.exec(path);
  return m ? { route: videoJob, pathId: m[1], pathAction: m[2] ? "content" : "status" } : undefined;
}

/** `/v1beta/models/{model}:generateContent`, `:streamGenerateContent` and `:countTokens`,
 * their GA twins under `/v1/models/`, the Gemini model list, and one model by name. */
function matchGemini(path: string): { route: Route; pathModel?: string; pathAction?: string; pathId?: string } | undefined {
  if (path === "/v1beta/models") return { route: geminiModels };
  const prefix = path.startsWith("/v1beta/models/") ? "/v1beta/models/" : path.startsWith("/v1/models/") ? "/v1/models/" : undefined;
  if (prefix === undefined) return undefined;
  const rest = path.slice(prefix.length);
  const colon = rest.lastIndexOf(":");
  const action = colon > 0 ? rest.slice(colon + 1) : "";
  const routes = geminiVersions[prefix];
  const r = action === "countTokens" ? routes.count
    : action === "generateContent" || action === "streamGenerateContent" ? routes.generate : undefined;
  // Not an action: one model by name. OpenAI ids may hold colons (ft:…); Gemini's never do.
  const info = r === undefined && rest !== "" && (prefix === "/v1/models/" || colon === -1);
  if (!r && !info) return undefined;
  try {
    return r
      ? { route: r, pathModel: decodeURIComponent(rest.slice(0, colon)), pathAction: action }
      : { route: prefix === "/v1/models/" ? modelInfo.openai : modelInfo.gemini, pathModel: decodeURIComponent(rest) };
  } catch {
    return undefined; // malformed percent-encoding: no such path
  }
}

/** Whether a path is a generate-content call on Google's GA version (`/v1/models/{model}:{action}`). */
function isGaGenerateContent(path: string): boolean {
  return path.startsWith("/v1/models/") && /:(generateContent|streamGenerateContent|countTokens)$/.test(path);
}

/** Guess the protocol of an unknown path, so even a 404 comes back in the caller's shape. */
export function protocolOfPath(path: string): Protocol {
  if (path.startsWith("/v1beta") || isGaGenerateContent(path)) return "gemini";
  if (path.startsWith("/v1/messages")) return "anthropic";
  return "openai";
}

/** Longest path accepted; longer ones are 404 without further parsing. */
export const maxPathLength = 2048;

/** Anthropic's SDK: an anthropic-version header, or its key header without a bearer. */
function isAnthropicCaller(headers: IncomingHttpHeaders): boolean {
  return headers["anthropic-version"] !== undefined || (headers["x-api-key"] !== undefined && headers.authorization === undefined);
}

/** @google/genai and Google's REST callers: a Google key (header or `?key=`), no bearer. */
export function isGoogleCaller(headers: IncomingHttpHeaders, query: string): boolean {
  if (headers.authorization !== undefined) return false;
  return headers["x-goog-api-key"] !== undefined || (query !== "" && new URLSearchParams(query).has("key"));
}

/** The protocol of a caller on a path shared by the SDKs (`/v1/models`), or of an unknown
 * `/v1` path: Google's and Anthropic's SDKs are told apart by their headers. */
export function callerProtocol(headers: IncomingHttpHeaders, query: string): Protocol {
  if (isGoogleCaller(headers, query)) return "gemini";
  return isAnthropicCaller(headers) ? "anthropic" : "openai";
}
