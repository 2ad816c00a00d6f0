// A first-party request made Vertex's: the publisher model's URL under the channel's
// project and location, Claude's body without `model` and with Vertex's anthropic_version,
// and the service account's token instead of an API key.

import type { Channel } from "../../runtime/types.js";
import { upstreamUrl } from "../provider.js";
import type { WireRequest } from "../kind.js";

/** The Messages API version Vertex's Claude models take, in the body. */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

/** Headers the first-party request carries that Vertex must not get: API keys, and the
 * Messages version (Vertex reads it from the body). */
const DROPPED = new Set(["x-api-key", "x-goog-api-key", "authorization", "anthropic-version"]);

/** The generate-content operation in a Gemini API path: model and method (with query). */
const GEMINI_MODEL_PATH = /^\/v1(?:beta|alpha)?\/models\/[^/:]+:([A-Za-z]+(?:\?.*)?)$/;

/** A publisher model's path under the channel's project and location; the model as Vertex
 * names it ("claude-sonnet-4-5@20250929"), unescaped, as Google's and Anthropic's SDKs send it. */
function modelBase(channel: Channel, publisher: "anthropic" | "google", model: string): string {
  const { project, region } = channel.settings;
  return `/v1/projects/${encodeURIComponent(project ?? "")}/locations/${encodeURIComponent(region ?? "")}/publishers/${publisher}/models/${model}`;
}

interface Target {
  readonly path: string;
  readonly body: Buffer;
}

/** Claude: :rawPredict or :streamRawPredict for messages; token counting is its own model. */
function claudeTarget(channel: Channel, request: WireRequest): Target {
  const path = request.path.split("?")[0];
  const body = JSON.parse(request.body.toString("utf8")) as Record<string, unknown>;
  const { model: _model, ...rest } = body;
  if (path === "/v1/messages/count_tokens") {
    // Vertex counts on a model of its own and reads the model from the body.
    return {
      path: `${modelBase(channel, "anthropic", "count-tokens")}:rawPredict`,
      body: Buffer.from(JSON.stringify({ ...body, model: request.upstreamModel, anthropic_version: VERTEX_ANTHROPIC_VERSION })),
    };
  }
  if (path !== "/v1/messages") throw new Error(`kind vertex does not serve ${path} for Claude`);
  return {
    path: `${modelBase(channel, "anthropic", request.upstreamModel)}:${request.stream ? "streamRawPredict" : "rawPredict"}`,
    body: Buffer.from(JSON.stringify({ ...rest, anthropic_version: VERTEX_ANTHROPIC_VERSION })),
  };
}

/** Gemini: the same method (and ?alt=sse) on the publisher model; the body as it is. */
function geminiTarget(channel: Channel, request: WireRequest): Target {
  const match = GEMINI_MODEL_PATH.exec(request.path);
  if (!match) throw new Error(`kind vertex does not serve ${request.path.split("?")[0]} for Gemini`);
  return { path: `${modelBase(channel, "google", request.upstreamModel)}:${match[1]}`, body: request.body };
}

/** The request for Vertex, authorized with `token`. */
export function vertexRequest(channel: Channel, request: WireRequest, token: string): WireRequest {
  const target = channel.protocol === "gemini" ? geminiTarget(channel, request) : claudeTarget(channel, request);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (DROPPED.has(lower)) continue;
    if (channel.protocol === "gemini" && lower.startsWith("anthropic-")) continue;
    headers[name] = value;
  }
  headers["content-length"] = String(target.body.length);
  headers.authorization = `Bearer ${token}`;
  return {
    url: upstreamUrl(channel.baseUrl, target.path), path: target.path, headers, body: target.body,
    upstreamModel: request.upstreamModel, stream: request.stream,
  };
}
