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

/** Bedrock's operations on a model: InvokeModel, InvokeModelWithResponseStream, Converse,
 * ConverseStream, CountTokens. */
export type Operation = "invoke" | "invoke-with-response-stream" | "converse" | "converse-stream" | "count-tokens";

/** The operation for the Anthropic API path an exchange built: a count is CountTokens (free,
 * and never an inference), a message InvokeModel (Claude) or Converse (`converse`: the
 * other models), streamed or not. */
export function operationOf(request: WireRequest, converse = false): Operation {
  if (request.path.startsWith("/v1/messages/count_tokens")) return "count-tokens";
  if (converse) return request.stream ? "converse-stream" : "converse";
  return request.stream ? "invoke-with-response-stream" : "invoke";
}

/** The operation's URL on the channel's base URL (whose path, if any, is kept as a prefix). */
export function operationUrl(base: URL, modelId: string, operation: Operation): URL {
  // One parse: the path built as a string rather than set on a copy of the base.
  const prefix = base.pathname.replace(/\/+$/, "");
  return new URL(`${base.origin}${prefix}/model/${encodeURIComponent(modelId)}/${operation}`);
}

/** The model CountTokens counts for: it takes foundation-model ids only, so a
 * cross-region inference profile ("us.anthropic.…", or its ARN) is counted by the model it
 * routes to (the same tokenizer); any other id as it is. */
export function countedModelId(modelId: string): string {
  const profile = /^(?:arn:aws[a-z-]*:bedrock:[^/]*:inference-profile\/)?(?:[a-z]{2,6}\.)(anthropic\..+)$/.exec(modelId);
  return profile ? profile[1] : modelId;
}

/** CountTokens' body: the InvokeModel body it counts, as a blob (base64 in JSON). A count
 * names no output cap, which InvokeModel bodies need; one token does not change the count. */
export function countTokensBody(invoke: Buffer): Buffer {
  const parsed = JSON.parse(invoke.toString("utf8")) as Record<string, unknown>;
  const counted = parsed.max_tokens === undefined ? Buffer.from(JSON.stringify({ ...parsed, max_tokens: 1 })) : invoke;
  return Buffer.from(JSON.stringify({ input: { invokeModel: { body: counted.toString("base64") } } }));
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
  out.accept = request.stream && operationOf(request) !== "count-tokens" ? "application/vnd.amazon.eventstream" : "application/json";
  out["content-type"] = "application/json";
  out["content-length"] = String(bodyLength);
  return out;
}
