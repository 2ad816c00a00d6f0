// An Anthropic Messages request as Bedrock's InvokeModel takes it: the model in the URL
// (an id, an inference-profile id or an ARN, encoded whole as one path segment), the body
// without `model` and `stream`, with `anthropic_version` and the allowed betas (the
// gateway filtered the anthropic-beta header by the channel's list) as `anthropic_beta`.

import type { WireRequest } from "../kind.js";

/** The version Bedrock requires of Claude request bodies. */
export const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";

/** Request headers Bedrock has no use for: the Anthropic API's own and any credential
 * (the kind adds its own), and those set anew. */
const DROPPED_HEADERS = new Set(["anthropic-version", "anthropic-beta", "x-api-key", "authorization", "host", "accept", "content-length"]);

/** InvokeModel's URL on the channel's base URL (whose path, if any, is kept as a prefix). */
export function invokeUrl(base: URL, modelId: string, stream: boolean): URL {
  const url = new URL(base.href);
  const prefix = url.pathname.replace(/\/+$/, "");
  url.pathname = `${prefix}/model/${encodeURIComponent(modelId)}/${stream ? "invoke-with-response-stream" : "invoke"}`;
  url.search = "";
  return url;
}

/** The body Bedrock takes for the Anthropic body `body`, with the betas of the
 * anthropic-beta header. A client's own `anthropic_beta` or `anthropic_version` fields are
 * replaced: betas pass only through the header, where the channel's list filters them. */
export function invokeBody(body: Buffer, betaHeader: string | string[] | undefined): Buffer {
  const parsed = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  const { model: _model, stream: _stream, anthropic_version: _version, anthropic_beta: _beta, ...rest } = parsed;
  const betas = betasOf(betaHeader);
  const out: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  if (betas.length > 0) out.anthropic_beta = betas;
  return Buffer.from(JSON.stringify(out));
}

/** The values of an anthropic-beta header (a comma list, possibly repeated). */
function betasOf(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const lists = Array.isArray(header) ? header : [header];
  return lists.flatMap((list) => list.split(",")).map((value) => value.trim()).filter((value) => value !== "");
}

/** The headers Bedrock gets, before credentials: the request's own but for the Anthropic
 * API's, one value each (a signature covers them as sent), and what InvokeModel answers. */
export function invokeHeaders(request: WireRequest, bodyLength: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in request.headers) {
    if (DROPPED_HEADERS.has(name)) continue;
    const value = request.headers[name];
    out[name] = Array.isArray(value) ? value.join(",") : value;
  }
  out.accept = request.stream ? "application/vnd.amazon.eventstream" : "application/json";
  out["content-type"] = "application/json";
  out["content-length"] = String(bodyLength);
  return out;
}
