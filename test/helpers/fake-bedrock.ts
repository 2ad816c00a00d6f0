// A fake Bedrock Runtime speaking the real wire format: InvokeModel and
// InvokeModelWithResponseStream for Claude at /model/{modelId}/invoke[-with-response-stream],
// CountTokens at /model/{modelId}/count-tokens (the InvokeModel body as a base64 blob),
// Bedrock's Anthropic body (anthropic_version bedrock-2023-05-31, no model or stream),
// answers as Anthropic Message JSON or as application/vnd.amazon.eventstream frames (each
// `chunk` event carrying {"bytes": base64 of an Anthropic stream event}, the last one with
// amazon-bedrock-invocationMetrics), and errors as {"message"} with x-amzn-errortype.
// It checks credentials as AWS does: the SigV4 signature is computed again, with the same
// signer library, from what arrived (method, path, the signed headers, the body) and the
// test's secret; a mismatch is 403 InvalidSignatureException. A Bedrock API key is checked
// as a Bearer token.

import type http from "node:http";
import { Sha256 } from "@aws-crypto/sha256-js";
import { EventStreamCodec, type MessageHeaders } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { sendJson, startFakeServer, type BaseReceived, type FakeServer } from "./fake-server.js";

/** Usage every answer reports (stream: input in message_start, output in message_delta). */
export const BEDROCK_USAGE = Object.freeze({ input: 25, output: 12 });
/** The text every answer writes. */
export const BEDROCK_TEXT = "Hello from Bedrock!";
/** What CountTokens answers. */
export const BEDROCK_COUNT = 17;

export interface AccessKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** What the fake received, with what it made of the URL and the credentials. */
export interface BedrockReceived extends BaseReceived {
  /** The model id as decoded from the URL; undefined for another path. */
  readonly modelId: string | undefined;
  readonly streamed: boolean;
  /** CountTokens, not an invocation. */
  readonly counted: boolean;
  /** The access key id that signed, or the API key sent as Bearer. */
  readonly credential: string | undefined;
  /** How the credentials were checked. */
  readonly auth: "signature-ok" | "signature-mismatch" | "bearer" | "none" | "unknown-key";
}

/** How to answer one (authenticated) request. */
export type BedrockScript =
  | { readonly kind: "ok" }
  /** The stream's `frame`-th frame (0-based) with a byte of its body flipped: its message
   * CRC no longer matches. */
  | { readonly kind: "corrupt"; readonly frame: number }
  /** An exception frame (e.g. throttlingException) after message_start. */
  | { readonly kind: "exception"; readonly exceptionType: string; readonly message: string }
  /** An error answer as Bedrock gives it. */
  | { readonly kind: "error"; readonly status: number; readonly errorType: string; readonly message: string };

export interface FakeBedrockOptions {
  readonly region: string;
  readonly accessKeys?: readonly AccessKey[];
  readonly apiKeys?: readonly string[];
  /** Access key ids (or API keys) answered 403 AccessDeniedException: an account without
   * access to the model. */
  readonly accessDenied?: readonly string[];
  readonly script?: (r: BedrockReceived) => BedrockScript;
}

export type FakeBedrock = FakeServer<BedrockReceived>;

const PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|count-tokens)$/;
const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

export async function startFakeBedrock(opts: FakeBedrockOptions): Promise<FakeBedrock> {
  const keys = new Map((opts.accessKeys ?? []).map((k) => [k.accessKeyId, k]));
  // The signature check is async: `describe` records what arrived, then `answer` checks.
  return startFakeServer<BedrockReceived>((r, res) => {
    void checked(r, opts, keys).then((auth) => {
      Object.assign(r, { auth });
      answer(r, res, opts);
    }, (err: Error) => bedrockError(res, 500, "InternalServerException", `fake: ${err.message}`));
  }, {
    describe: (base, req) => {
      const m = PATH.exec(base.path);
      const authorization = req.headers.authorization ?? "";
      const signed = AUTH.exec(authorization);
      const credential = signed ? signed[1] : authorization.startsWith("Bearer ") ? authorization.slice(7) : undefined;
      return {
        ...base, modelId: m ? decodeURIComponent(m[1]) : undefined, streamed: m?.[2] === "invoke-with-response-stream",
        counted: m?.[2] === "count-tokens", credential, auth: "none",
      };
    },
  });
}

/** The request's credentials as AWS judges them (exported for test fronts that speak
 * Bedrock's wire in front of another fake: test/helpers/kind-fronts.ts). */
export async function checked(
  r: Pick<BaseReceived, "method" | "path" | "headers" | "raw">, opts: Pick<FakeBedrockOptions, "apiKeys">, keys: ReadonlyMap<string, AccessKey>,
): Promise<BedrockReceived["auth"]> {
  const authorization = r.headers.authorization ?? "";
  if (authorization.startsWith("Bearer ")) return (opts.apiKeys ?? []).includes(authorization.slice(7)) ? "bearer" : "unknown-key";
  const signed = AUTH.exec(authorization);
  if (!signed) return "none";
  const key = keys.get(signed[1]);
  if (!key) return "unknown-key";
  const signedHeaders = signed[5].split(";");
  // As AWS requires: the host and every x-amz-* header sent are among those signed.
  const unsigned = Object.keys(r.headers).filter((h) => (h === "host" || h.startsWith("x-amz-")) && !signedHeaders.includes(h));
  if (unsigned.length > 0) return "signature-mismatch";
  const expected = await expectedAuthorization(r, key, signed[3], signedHeaders);
  return expected === authorization && signed[4] === "bedrock" ? "signature-ok" : "signature-mismatch";
}

/** The Authorization a client holding `key` computes for what arrived. */
async function expectedAuthorization(r: Pick<BaseReceived, "method" | "path" | "headers" | "raw">, key: AccessKey, region: string, signedHeaders: readonly string[]): Promise<string> {
  const amzDate = String(r.headers["x-amz-date"] ?? "");
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!date) return "no x-amz-date";
  const signingDate = new Date(Date.UTC(+date[1], +date[2] - 1, +date[3], +date[4], +date[5], +date[6]));
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = r.headers[name];
    if (value === undefined) return `signed header ${name} not sent`;
    headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  // applyChecksum off: AWS takes a signature without x-amz-content-sha256 (only S3 needs it);
  // one that signed it has it among the signed headers above.
  const signer = new SignatureV4({ service: "bedrock", region, sha256: Sha256, credentials: key, applyChecksum: false });
  const q = r.path.indexOf("?");
  const again = await signer.sign({
    method: r.method, protocol: "https:", hostname: String(r.headers.host ?? ""), path: q === -1 ? r.path : r.path.slice(0, q),
    query: {}, headers, body: r.raw,
  }, { signingDate, unsignableHeaders: new Set(Object.keys(r.headers).filter((h) => !signedHeaders.includes(h))) });
  return String(again.headers.authorization);
}

function answer(r: BedrockReceived, res: http.ServerResponse, opts: FakeBedrockOptions): void {
  if (r.method !== "POST" || r.modelId === undefined) return bedrockError(res, 404, "UnknownOperationException", "");
  if (r.auth === "none") return bedrockError(res, 403, "MissingAuthenticationTokenException", "Missing Authentication Token");
  if (r.auth === "unknown-key") return bedrockError(res, 403, "UnrecognizedClientException", "The security token included in the request is invalid.");
  if (r.auth === "signature-mismatch") {
    return bedrockError(res, 403, "InvalidSignatureException",
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.");
  }
  if (r.credential !== undefined && opts.accessDenied?.includes(r.credential)) {
    return bedrockError(res, 403, "AccessDeniedException", "You don't have access to the model with the specified model ID.");
  }
  const problem = bodyProblem(r.counted ? countedBody(r.body) : r.body);
  if (problem) return bedrockError(res, 400, "ValidationException", problem);
  if (r.counted) return sendJson(res, 200, { inputTokens: BEDROCK_COUNT }, { "x-amzn-requestid": "fake-request-id" });
  const script = opts.script?.(r) ?? { kind: "ok" };
  if (script.kind === "error") return bedrockError(res, script.status, script.errorType, script.message);
  const model = r.modelId;
  if (!r.streamed) {
    sendJson(res, 200, {
      id: "msg_bdrk_01", type: "message", role: "assistant", model, content: [{ type: "text", text: BEDROCK_TEXT }],
      stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: BEDROCK_USAGE.input, output_tokens: BEDROCK_USAGE.output },
    }, { "x-amzn-requestid": "fake-request-id", "x-amzn-bedrock-input-token-count": String(BEDROCK_USAGE.input) });
    return;
  }
  const frames = streamFrames(model, script);
  if (script.kind === "corrupt") {
    const frame = frames[script.frame];
    frame[frame.length - 6] ^= 0xff; // a body byte: the message CRC no longer matches
  }
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "fake-request-id" });
  // In pieces that split frames, as TCP may.
  const all = Buffer.concat(frames);
  const piece = 37;
  for (let i = 0; i < all.length; i += piece) res.write(all.subarray(i, i + piece));
  res.end();
}

/** The InvokeModel body a CountTokens request counts (its base64 blob decoded). */
export function countedBody(body: Record<string, unknown>): Record<string, unknown> {
  const blob = (body.input as { invokeModel?: { body?: unknown } } | undefined)?.invokeModel?.body;
  if (typeof blob !== "string") return {};
  try {
    return JSON.parse(Buffer.from(blob, "base64").toString("utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** What Bedrock refuses in a Claude body. */
function bodyProblem(body: Record<string, unknown>): string | undefined {
  if (body.anthropic_version !== "bedrock-2023-05-31") return "Malformed input request: #: required key [anthropic_version] not found";
  for (const key of ["model", "stream"]) if (key in body) return `Malformed input request: #: extraneous key [${key}] is not permitted`;
  if (!Array.isArray(body.messages)) return "Malformed input request: #: required key [messages] not found";
  return undefined;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function str(value: string): MessageHeaders[string] {
  return { type: "string", value };
}

/** One chunk frame for an Anthropic stream event. */
export function chunkFrame(event: Record<string, unknown>): Buffer {
  const bytes = Buffer.from(JSON.stringify(event)).toString("base64");
  return Buffer.from(codec.encode({
    headers: { ":event-type": str("chunk"), ":content-type": str("application/json"), ":message-type": str("event") },
    body: fromUtf8(JSON.stringify({ bytes, p: "abcdefghijklmnopqrstuvwxyzABCDEF" })),
  }));
}

/** An exception frame, as Bedrock ends a stream it cannot finish. */
export function exceptionFrame(exceptionType: string, message: string): Buffer {
  return Buffer.from(codec.encode({
    headers: { ":exception-type": str(exceptionType), ":content-type": str("application/json"), ":message-type": str("exception") },
    body: fromUtf8(JSON.stringify({ message })),
  }));
}

/** The frames of a whole Claude stream (or one cut by an exception). */
function streamFrames(model: string, script: BedrockScript): Buffer[] {
  const start = chunkFrame({
    type: "message_start",
    message: {
      id: "msg_bdrk_01", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: BEDROCK_USAGE.input, output_tokens: 1 },
    },
  });
  if (script.kind === "exception") return [start, exceptionFrame(script.exceptionType, script.message)];
  const half = Math.ceil(BEDROCK_TEXT.length / 2);
  return [
    start,
    chunkFrame({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    chunkFrame({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: BEDROCK_TEXT.slice(0, half) } }),
    chunkFrame({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: BEDROCK_TEXT.slice(half) } }),
    chunkFrame({ type: "content_block_stop", index: 0 }),
    chunkFrame({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: BEDROCK_USAGE.output } }),
    chunkFrame({
      type: "message_stop",
      "amazon-bedrock-invocationMetrics": {
        inputTokenCount: BEDROCK_USAGE.input, outputTokenCount: BEDROCK_USAGE.output, invocationLatency: 420, firstByteLatency: 120,
      },
    }),
  ];
}

/** An error answer as Bedrock writes it. */
export function bedrockError(res: http.ServerResponse, status: number, errorType: string, message: string): void {
  sendJson(res, status, { message }, { "x-amzn-errortype": `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`, "x-amzn-requestid": "fake-request-id" });
}
