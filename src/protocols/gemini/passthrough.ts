// Pass-through spec of the generate-content routes. The model travels in the URL, so the
// body (safetySettings included) is never touched. The query is the gateway's: of the
// client's only alt=sse is read (never its `key`, in any encoding, nor a field mask);
// streams always go upstream as SSE (query.ts), rendered back as a JSON array for a
// client that asked for one.

import { answerField, type PassthroughSpec } from "../passthrough.js";
import { streamCost } from "../stream-cost.js";
import { SseUsageTap } from "../usage-tap.js";
import { renderGeminiStreamError } from "./errors.js";
import { generateStreamFraming } from "./json-array-stream.js";
import { generateQuery } from "./query.js";
import { geminiGeneratedChars, geminiStreamEnds, geminiUsageReader } from "./stream-tap.js";
import { generateStoredReference } from "./stored-references.js";
import { geminiAnswerUsage } from "./usage.js";

const isStream = (action: string | undefined) => action === "streamGenerateContent";

export const generatePassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "gemini",
  isStream: (req) => isStream(req.pathAction),
  query: new Map([["alt", new Set(["sse"])]]),
  storedReference: generateStoredReference,
  path: (req, upstreamModel) => {
    const query = generateQuery(req.query, isStream(req.pathAction));
    return `/v1beta/models/${encodeURIComponent(upstreamModel)}:${req.pathAction ?? "generateContent"}${query ? "?" + query : ""}`;
  },
  body: (req) => ({ body: req.raw, stripUsage: false }),
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
