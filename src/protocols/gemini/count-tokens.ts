// POST /v1beta/models/{model}:countTokens (or Google's GA /v1/…): passed through to gemini
// channels' own endpoint, on the client's API version; for other channels its `contents`
// (or its whole `generateContentRequest`) is read as a generate-content request and
// estimated, answered as a CountTokensResponse.

import { countPassthrough, type CountTokensSpec } from "../count-tokens.js";
import type { PassRequest } from "../passthrough.js";
import { generateInbound } from "./index.js";
import { apiVersion } from "./passthrough.js";
import { array, invalid, missing, object, type JsonObject } from "./wire.js";

export const generateCountTokens: CountTokensSpec = Object.freeze<CountTokensSpec>({
  passthrough: countPassthrough({
    channelProtocol: "gemini",
    path: (req, upstreamModel) => `/${apiVersion(req)}/models/${encodeURIComponent(upstreamModel)}:countTokens${req.query ? "?" + req.query : ""}`,
    body: (req, upstreamModel) => ({ body: renamedRequest(req, upstreamModel), stripUsage: false }),
  }),
  check(json) {
    const full = json.generateContentRequest;
    if (full != null && json.contents != null) throw invalid("generateContentRequest", "send either contents or generateContentRequest, not both");
    const [contents, field] = full != null
      ? [object(full, "generateContentRequest").contents, "generateContentRequest.contents"]
      : [json.contents, "contents"];
    if (contents == null) throw missing(field);
    array(contents, field);
  },
  // A generateContentRequest is a whole generate-content body (its `model` is ignored: the
  // path names the model); otherwise only the contents are counted.
  canonical: (json, pathModel) => generateInbound.decodeRequest(
    json.generateContentRequest != null ? object(json.generateContentRequest, "generateContentRequest") : { contents: json.contents },
    { pathModel }),
  answer: (estimate) => ({
    totalTokens: estimate.text + estimate.image,
    promptTokensDetails: [
      { modality: "TEXT", tokenCount: estimate.text },
      ...(estimate.image > 0 ? [{ modality: "IMAGE", tokenCount: estimate.image }] : []),
    ],
  }),
});

/** A full generateContentRequest names its model (`models/{model}`): the model_map name
 * replaces the client's there too; otherwise the client's bytes go as sent. */
function renamedRequest(req: PassRequest, upstreamModel: string): Buffer {
  const full = req.json.generateContentRequest as JsonObject | undefined;
  const name = `models/${upstreamModel}`;
  if (typeof full?.model !== "string" || full.model === name) return req.raw;
  return Buffer.from(JSON.stringify({ ...req.json, generateContentRequest: { ...full, model: name } }));
}
