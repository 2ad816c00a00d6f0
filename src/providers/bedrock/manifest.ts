// Kind `bedrock`: models on Amazon Bedrock, speaking the anthropic protocol: Claude
// through InvokeModel, the others (Nova, Llama, Mistral, …) through Converse
// (model-api.ts decides by the model id). The gateway builds an Anthropic Messages
// request; this kind moves the model into the URL, makes the body Bedrock's (InvokeModel's
// Anthropic body, or Converse's), and signs it (SigV4) or sends an API key; it reads
// Bedrock's answers (event-stream frames, Converse's JSON) into Anthropic's and its errors
// into Anthropic's shape, so the usage tap and the key-fault rules work as on the
// Anthropic API.

import type { Readable, Transform } from "node:stream";
import { anthropicProvider } from "../anthropic/manifest.js";
import { CredentialFailure, rewrittenHeaders, type ProviderKind, type WireAnswer, type WireRequest } from "../kind.js";
import type { Channel } from "../../runtime/types.js";
import { compileBedrock } from "./compile.js";
import { credentialOf } from "./credentials.js";
import { bedrockKeyFaults, countRewriter, errorRewriter } from "./errors.js";
import { FrameDecoder, sseOfEventStream } from "./eventstream.js";
import { converseAnswerRewriter, messageId } from "./converse-answer.js";
import { converseBody } from "./converse-request.js";
import { ConverseStreamReader } from "./converse-stream.js";
import { isAnthropicModel } from "./model-api.js";
import { countedModelId, countTokensBody, invokeBody, invokeHeaders, operationOf, operationUrl, type Operation } from "./request.js";
import { withCredentials } from "./signing.js";

/** The request as InvokeModel, InvokeModelWithResponseStream, Converse, ConverseStream or
 * CountTokens takes it, with credentials. Synchronous: a signature needs nothing awaited,
 * and a promise per request is a cost for nothing. */
function prepareBedrock(channel: Channel, key: string, request: WireRequest): WireRequest {
  const credential = credentialOf(key);
  if (credential === undefined) throw new CredentialFailure("auth", "the key is neither ACCESS_KEY_ID:SECRET[:SESSION_TOKEN] nor a Bedrock API key");
  const region = channel.settings.region;
  if (region === undefined) throw new CredentialFailure("auth", "the channel has no region to sign for");
  const converse = !isAnthropicModel(request.upstreamModel);
  const operation = operationOf(request, converse);
  const modelId = operation === "count-tokens" ? countedModelId(request.upstreamModel) : request.upstreamModel;
  const url = operationUrl(channel.baseUrl, modelId, operation);
  // A count is Claude's alone (countsTokens): CountTokens with InvokeModel's body.
  const body = converse && operation !== "count-tokens" ? converseBody(request.body) : invokeRequestBody(request, operation);
  const headers = withCredentials(credential, region, url, invokeHeaders(request, body.length), body);
  return { url, path: url.pathname, headers, body, upstreamModel: request.upstreamModel, stream: request.stream };
}

/** InvokeModel's (or CountTokens') body for Claude. */
function invokeRequestBody(request: WireRequest, operation: Operation): Buffer {
  const invoke = invokeBody(request.body, request.headers["anthropic-beta"]);
  return operation === "count-tokens" ? countTokensBody(invoke) : invoke;
}

/** Bedrock's answer as the Anthropic API's: errors rewritten, event-stream frames as SSE,
 * Converse's answers as Anthropic messages and events. */
function answerBedrock(_channel: Channel, answer: WireAnswer, request: WireRequest): WireAnswer {
  const json = (body: Readable): WireAnswer => ({ status: answer.status, headers: rewrittenHeaders(answer.headers, "application/json"), body });
  if (answer.status < 200 || answer.status >= 300) return json(piped(answer, errorRewriter(answer.status, answer.headers)));
  if (request.path.endsWith("/count-tokens")) return json(piped(answer, countRewriter()));
  if (request.path.endsWith("/converse")) return json(piped(answer, converseAnswerRewriter(request.upstreamModel, answer.headers["x-amzn-requestid"])));
  const contentType = String(answer.headers["content-type"] ?? "");
  // InvokeModel's JSON answer is Anthropic's own: as it came.
  if (!request.stream || !/^application\/vnd\.amazon\.eventstream/i.test(contentType)) return answer;
  const decoder = request.path.endsWith("/converse-stream")
    ? new FrameDecoder(new ConverseStreamReader(request.upstreamModel, messageId(answer.headers["x-amzn-requestid"])).read)
    : new FrameDecoder();
  return { status: answer.status, headers: rewrittenHeaders(answer.headers, "text/event-stream"), body: sseOfEventStream(answer.body, decoder) };
}

/** The answer's body through `transform`; an error on either side ends both (the upstream
 * connection is closed, the reader sees the error). Piped by hand, not with
 * stream.pipeline, which makes and aborts an AbortController (a DOMException with its
 * stack) for every answer: a tenth of a stream's cost here (bench/kinds.ts). */
function piped(answer: WireAnswer, transform: Transform): Transform {
  const body = answer.body;
  body.on("error", (error) => transform.destroy(error));
  transform.on("close", () => {
    if (!body.readableEnded) body.destroy();
  });
  body.pipe(transform);
  return transform;
}

export const bedrockProvider: ProviderKind = Object.freeze({
  kind: "bedrock",
  protocol: "anthropic",
  // Clients' headers and betas as for the Anthropic API: prepare moves them into the body.
  requestHeaders: anthropicProvider.requestHeaders,
  paths: anthropicProvider.paths,
  // Credentials are made per request by prepare (a signature covers the whole request).
  authHeaders: () => ({}),
  // The model is named in the URL; every body made here leaves the client's `model` out.
  modelInUrl: true,
  privateResponseHeaders: Object.freeze([]),
  keyFaults: bedrockKeyFaults,
  compile: compileBedrock,
  prepare: prepareBedrock,
  answer: answerBedrock,
  // CountTokens counts Claude only ("The provided model doesn't support counting tokens"
  // for Nova, Llama, …): the others are estimated by the gateway.
  countsTokens: (_channel: Channel, upstreamModel: string) => isAnthropicModel(upstreamModel),
});
