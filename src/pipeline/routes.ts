// The route table: which paths exist, which wire family answers on them (auth header and
// error shape), and which handler serves them. Static: it does not depend on gateway.yaml.

import type { Endpoint } from "../config/raw.js";
import type { WireFamily } from "../protocols/render-error.js";

/** What serves a route once the common stages have passed. */
export type HandlerName =
  | "proxy" | "multipart" | "upload" | "messages" | "job" | "realtime" | "models" | "billing"
  /** /v1/responses: a model call whose stored state stays with its creator. */
  | "responses"
  /** Token counting (free): messages-protocol, and generate-content's. */
  | "messages-count-tokens" | "count-tokens";

export interface Route {
  /** Stable route name, used as the `protocol` label in logs and metrics. */
  readonly name: string;
  readonly method: "GET" | "POST";
  readonly family: WireFamily;
  readonly handler: HandlerName;
  /** The price-list endpoint kind a model must have to be called here. */
  readonly endpoint?: Endpoint;
  /** Whether the body carries a JSON `model` (false for GET routes and path-model routes). */
  readonly modelInBody: boolean;
  /** A poll (balance, job status) rather than a use: it answers with the money gone and does
   * not count toward rate limits, unless `rateLimited`. */
  readonly poll?: boolean;
  /** A poll that still takes the rate windows: it reaches the upstream (a job fetch). */
  readonly rateLimited?: boolean;
  /** The API version the client called (generate-content: `v1beta`, or `v1`, Google's GA
   * path); a pass-through keeps it toward channels of the same protocol. */
  readonly apiVersion?: string;
}

const modelCalls: ReadonlySet<HandlerName> = new Set(["proxy", "multipart", "upload", "messages", "responses"]);

function route(r: Route): Route {
  return Object.freeze(r);
}

const openaiPost = (name: string, handler: HandlerName, endpoint: Endpoint): Route =>
  route({ name, method: "POST", family: "openai", handler, endpoint, modelInBody: modelCalls.has(handler) });

/** Fixed paths → route. */
const exact = new Map<string, Route>([
  ["/v1/chat/completions", openaiPost("chat-completions", "proxy", "chat")],
  ["/v1/models", route({ name: "models", method: "GET", family: "openai", handler: "models", modelInBody: false })],
  ...["/v1/dashboard/billing/subscription", "/v1/dashboard/billing/usage", "/dashboard/billing/subscription", "/dashboard/billing/usage"]
    .map((p) => [p, route({ name: "billing", method: "GET", family: "openai", handler: "billing", modelInBody: false, poll: true })] as const),
  ["/v1/responses", openaiPost("responses", "responses", "responses")],
  ["/v1/messages", route({ name: "messages", method: "POST", family: "anthropic", handler: "messages", endpoint: "chat", modelInBody: true })],
  ["/v1/messages/count_tokens", route({
    name: "messages-count-tokens", method: "POST", family: "anthropic", handler: "messages-count-tokens", endpoint: "chat", modelInBody: true,
  })],
  ["/v1/embeddings", openaiPost("embeddings", "proxy", "embeddings")],
  ["/v1/images/generations", openaiPost("images", "proxy", "image")],
  ["/v1/images/edits", openaiPost("image-edits", "multipart", "image")],
  ["/v1/videos", openaiPost("videos", "upload", "video")],
  ["/v1/audio/transcriptions", openaiPost("transcriptions", "multipart", "transcription")],
  ["/v1/audio/speech", openaiPost("speech", "proxy", "speech")],
  ["/v1/rerank", openaiPost("rerank", "proxy", "rerank")],
  ["/v1/moderations", openaiPost("moderations", "proxy", "moderation")],
  ["/v1/realtime", route({ name: "realtime", method: "GET", family: "openai", handler: "realtime", endpoint: "realtime", modelInBody: false })],
]);

/** Generate-content routes per API version: the same route but for the version kept upstream. */
function generateRoutes(apiVersion: string) {
  return {
    generate: route({
      name: "generate-content", method: "POST", family: "gemini", handler: "proxy", endpoint: "chat", modelInBody: false, apiVersion,
    }),
    count: route({
      name: "generate-content-count-tokens", method: "POST", family: "gemini", handler: "count-tokens", endpoint: "chat", modelInBody: false, apiVersion,
    }),
  };
}
const geminiVersions: Readonly<Record<string, ReturnType<typeof generateRoutes>>> = {
  "/v1beta/models/": generateRoutes("v1beta"),
  "/v1/models/": generateRoutes("v1"),
};
const geminiModels = route({ name: "models", method: "GET", family: "gemini", handler: "models", modelInBody: false });
/** One model by name (`pathModel`), served by the model list's handler; on /v1 the route
 * stage picks the shape from the caller's headers, as for the list. */
const modelInfo = {
  gemini: route({ name: "models", method: "GET", family: "gemini", handler: "models", modelInBody: false }),
  openai: route({ name: "models", method: "GET", family: "openai", handler: "models", modelInBody: false }),
} as const;

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

const videoJob = route({ name: "video-jobs", method: "GET", family: "openai", handler: "job", modelInBody: false, poll: true, rateLimited: true });

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

/** Guess the wire family of an unknown path, so even a 404 comes back in the caller's shape. */
export function familyOfPath(path: string): WireFamily {
  if (path.startsWith("/v1beta") || isGaGenerateContent(path)) return "gemini";
  if (path.startsWith("/v1/messages")) return "anthropic";
  return "openai";
}
