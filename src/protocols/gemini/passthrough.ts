// Pass-through spec of the generate-content routes (v1beta, and Google's GA v1: the client's
// version is kept upstream). The model travels in the URL, so the
// body (safetySettings included) is untouched but for the output limit the request
// reserved for, added when the client set none. The query is the gateway's: of the
// client's only alt=sse is read (never its `key`, in any encoding, nor a field mask);
// streams always go upstream as SSE (query.ts), rendered back as a JSON array for a
// client that asked for one.

import { answerField, limitMissing, spliceField, type PassRequest, type PassthroughSpec } from "../passthrough.js";
import { streamCost } from "../stream-cost.js";
import { portableContents } from "./portable.js";
import { SseUsageTap } from "../usage-tap.js";
import { renderGeminiStreamError } from "./errors.js";
import { generateStreamFraming } from "./json-array-stream.js";
import { generateQuery } from "./query.js";
import { geminiGeneratedChars, geminiStreamEnds, geminiUsageReader } from "./stream-tap.js";
import { generateStoredReference } from "./stored-references.js";
import { geminiAnswerUsage } from "./usage.js";

const isStream = (action: string | undefined) => action === "streamGenerateContent";

/** The API version the client called (v1beta or v1), kept upstream: a GA caller's body is
 * judged by the GA API. */
export const apiVersion = (req: PassRequest): string => req.apiVersion ?? "v1beta";

export const generatePassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "gemini",
  isStream: (req) => isStream(req.pathAction),
  query: new Map([["alt", new Set(["sse"])]]),
  storedReference: generateStoredReference,
  path: (req, upstreamModel) => {
    const query = generateQuery(req.query, isStream(req.pathAction));
    return `/${apiVersion(req)}/models/${encodeURIComponent(upstreamModel)}:${req.pathAction ?? "generateContent"}${query ? "?" + query : ""}`;
  },
  portable: portableContents,
  body: (req) => ({ body: limitedGenerateBody(req), stripUsage: false }),
  streamTap: () => new SseUsageTap(geminiUsageReader(), geminiStreamEnds),
  streamError: (err) => renderGeminiStreamError(err),
  streamCost: streamCost["generate-content"],
  streamFraming: (req) => generateStreamFraming(req.query),
  bodyUsage: (json) => geminiAnswerUsage(Array.isArray(json) ? lastWithUsage(json) : json),
  bodyChars: (body) => geminiGeneratedChars(body.toString("utf8")),
});

/** The last chunk of a JSON-array stream that carries usage (each carries running totals). */
function lastWithUsage(chunks: readonly unknown[]): unknown {
  for (let i = chunks.length - 1; i >= 0; i--) if (answerField(chunks[i], "usageMetadata") !== undefined) return chunks[i];
  return undefined;
}

/** Both spellings proto3 JSON accepts, for the config and for its output limit. */
const CONFIG_KEYS = ["generationConfig", "generation_config"] as const;
const LIMIT_KEYS = ["maxOutputTokens", "max_output_tokens"] as const;

/** The body with generationConfig.maxOutputTokens set to the reserved limit when the
 * client set none: spliced in when there is no generationConfig at all, else the body is
 * re-serialised with it. */
function limitedGenerateBody(req: PassRequest): Buffer {
  const json = req.json;
  const key = CONFIG_KEYS.find((k) => k in json);
  const given = key === undefined ? undefined : json[key];
  const config = isObject(given) ? given : {};
  // A limit under either config spelling holds the upstream (the reservation took the largest).
  const other = json[key === CONFIG_KEYS[0] ? CONFIG_KEYS[1] : CONFIG_KEYS[0]];
  if (!limitMissing(req, config, LIMIT_KEYS) || (isObject(other) && !limitMissing(req, other, LIMIT_KEYS))) return req.raw;
  if (key === undefined) return spliceField(req.raw, "generationConfig", `{"maxOutputTokens":${req.outputLimit}}`);
  const limited: Record<string, unknown> = { ...config };
  for (const k of LIMIT_KEYS) delete limited[k];
  limited.maxOutputTokens = req.outputLimit;
  return Buffer.from(JSON.stringify({ ...json, [key]: limited }));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
