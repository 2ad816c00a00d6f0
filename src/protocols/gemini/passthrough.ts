// Pass-through spec of the generate-content routes. The model travels in the URL, so the
// body (safetySettings included) is never touched; of the client's query only alt=sse
// goes upstream (never its `key`, in any encoding).

import { type PassthroughSpec } from "../passthrough.js";
import { streamCost } from "../stream-cost.js";
import { SseUsageTap } from "../usage-tap.js";
import { renderGeminiStreamError } from "./errors.js";
import { geminiGeneratedChars, geminiStreamEnds, geminiUsageReader } from "./stream-tap.js";
import { generateStoredReference } from "./stored-references.js";
import { geminiAnswerUsage } from "./usage.js";

export const generatePassthrough: PassthroughSpec = Object.freeze<PassthroughSpec>({
  channelProtocol: "gemini",
  isStream: (req) => req.pathAction === "streamGenerateContent",
  query: new Map([["alt", new Set(["sse"])]]),
  storedReference: generateStoredReference,
  path: (req, upstreamModel) =>
    `/v1beta/models/${encodeURIComponent(upstreamModel)}:${req.pathAction ?? "generateContent"}${req.query ? "?" + req.query : ""}`,
  body: (req) => ({ body: req.raw, stripUsage: false }),
  streamTap: () => new SseUsageTap(geminiUsageReader(), geminiStreamEnds),
  streamError: (err) => renderGeminiStreamError(err),
  streamCost: streamCost["generate-content"],
  bodyUsage: (json) => geminiAnswerUsage(json),
  bodyChars: (body) => geminiGeneratedChars(body.toString("utf8")),
});
