// A fake Bedrock Runtime for the Converse API, speaking its real wire format:
// POST /model/{modelId}/converse answers Converse JSON ({output:{message:{content}},
// stopReason, usage, metrics}); /converse-stream answers application/vnd.amazon.eventstream
// frames named by :event-type (messageStart, contentBlockStart, contentBlockDelta,
// contentBlockStop, messageStop, metadata with the usage last). It checks the body as
// Bedrock does (unknown top-level keys such as `model` or `anthropic_version`, blocks that
// are not Converse's, tool blocks without a toolConfig: 400 ValidationException) and the
// credentials with fake-bedrock's SigV4 check (`checked`). InvokeModel
// (/invoke, /invoke-with-response-stream) is answered with a small Claude message, so a
// channel serving both kinds of model can be tested on one fake; CountTokens counts Claude
// and refuses the other models, as Bedrock does.

import type http from "node:http";
import { EventStreamCodec, type MessageHeaders } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { bedrockError, checked, countedBody, exceptionFrame, type AccessKey, type BedrockReceived } from "./fake-bedrock.js";
import { sendJson, startFakeServer, type FakeServer } from "./fake-server.js";

/** Usage every Converse answer reports (a stream: in its last event, metadata). */
export const CONVERSE_USAGE = Object.freeze({ input: 31, output: 9 });
/** The text every Converse answer writes. */
export const CONVERSE_TEXT = "Hello from Nova!";
/** What a tool call's answer writes before the call, and the call. */
export const CONVERSE_TOOL = Object.freeze({ preamble: "Let me check.", id: "tooluse_kx8Qm3VbR0aAq1", input: { city: "Paris", unit: "celsius" } });
/** What CountTokens answers. */
export const CONVERSE_COUNT = 23;
/** The text InvokeModel answers. */
export const INVOKE_TEXT = "Hello from Claude on InvokeModel!";

export type ConverseOperation = "converse" | "converse-stream" | "invoke" | "invoke-with-response-stream" | "count-tokens";

export interface ConverseReceived extends BedrockReceived {
  readonly operation: ConverseOperation | undefined;
}

/** How to answer one (authenticated, valid) Converse request. */
export type ConverseScript =
  | { readonly kind: "text" }
  /** A text block, then a call of the request's first tool. */
  | { readonly kind: "tool" }
  /** A stream that stops (messageStop) but never sends its metadata. */
  | { readonly kind: "no-metadata" }
  /** An exception frame after the first text delta. */
  | { readonly kind: "exception"; readonly exceptionType: string; readonly message: string }
  | { readonly kind: "error"; readonly status: number; readonly errorType: string; readonly message: string };

export interface FakeConverseOptions {
  readonly region: string;
  readonly accessKeys?: readonly AccessKey[];
  readonly apiKeys?: readonly string[];
  /** Default: a tool call when tools are offered and the last turn holds no tool result. */
  readonly script?: (r: ConverseReceived) => ConverseScript | undefined;
}

export type FakeConverse = FakeServer<ConverseReceived>;

const PATH = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream|count-tokens)$/;
const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/]+)\//;

export async function startFakeConverse(opts: FakeConverseOptions): Promise<FakeConverse> {
  const keys = new Map((opts.accessKeys ?? []).map((k) => [k.accessKeyId, k]));
  return startFakeServer<ConverseReceived>((r, res) => {
    void checked(r, opts, keys).then((auth) => {
      Object.assign(r, { auth });
      answer(r, res, opts);
    }, (err: Error) => bedrockError(res, 500, "InternalServerException", `fake: ${err.message}`));
  }, {
    describe: (base, req) => {
      const m = PATH.exec(base.path);
      const authorization = req.headers.authorization ?? "";
      const credential = AUTH.exec(authorization)?.[1] ?? (authorization.startsWith("Bearer ") ? authorization.slice(7) : undefined);
      const operation = m?.[2] as ConverseOperation | undefined;
      return {
        ...base, modelId: m ? decodeURIComponent(m[1]) : undefined, operation,
        streamed: operation === "converse-stream" || operation === "invoke-with-response-stream", counted: operation === "count-tokens", credential, auth: "none",
      };
    },
  });
}

function answer(r: ConverseReceived, res: http.ServerResponse, opts: FakeConverseOptions): void {
  if (r.method !== "POST" || r.operation === undefined) return bedrockError(res, 404, "UnknownOperationException", "");
  if (r.auth === "none") return bedrockError(res, 403, "MissingAuthenticationTokenException", "Missing Authentication Token");
  if (r.auth === "unknown-key") return bedrockError(res, 403, "UnrecognizedClientException", "The security token included in the request is invalid.");
  if (r.auth === "signature-mismatch") return bedrockError(res, 403, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided.");
  if (r.operation === "invoke" || r.operation === "invoke-with-response-stream") return answerInvoke(r, res);
  if (r.operation === "count-tokens") return answerCount(r, res);
  const problem = converseProblem(r.body);
  if (problem) return bedrockError(res, 400, "ValidationException", problem);
  const script = opts.script?.(r) ?? defaultScript(r.body);
  if (script.kind === "error") return bedrockError(res, script.status, script.errorType, script.message);
  const toolName = firstToolName(r.body);
  if (r.operation === "converse") {
    sendJson(res, 200, converseJson(script.kind === "tool" ? toolName : undefined), { "x-amzn-requestid": "fake-converse-request-id" });
    return;
  }
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "fake-converse-request-id" });
  // In pieces that split frames, as TCP may.
  const all = Buffer.concat(streamFrames(script, toolName));
  const piece = 41;
  for (let i = 0; i < all.length; i += piece) res.write(all.subarray(i, i + piece));
  res.end();
}

/** A tool call when tools are offered and the last turn does not answer one. */
function defaultScript(body: Record<string, unknown>): ConverseScript {
  const turns = body.messages as { content: Record<string, unknown>[] }[];
  const answered = turns.at(-1)?.content.some((b) => "toolResult" in b);
  return firstToolName(body) !== undefined && !answered ? { kind: "tool" } : { kind: "text" };
}

function firstToolName(body: Record<string, unknown>): string | undefined {
  const tools = (body.toolConfig as { tools?: { toolSpec?: { name?: string } }[] } | undefined)?.tools;
  return tools?.[0]?.toolSpec?.name;
}

/** A small Claude answer for InvokeModel (its body is not this fake's to check). */
function answerInvoke(r: ConverseReceived, res: http.ServerResponse): void {
  if (r.body.anthropic_version !== "bedrock-2023-05-31") return bedrockError(res, 400, "ValidationException", "Malformed input request: #: required key [anthropic_version] not found");
  sendJson(res, 200, {
    id: "msg_bdrk_invoke", type: "message", role: "assistant", model: r.modelId, content: [{ type: "text", text: INVOKE_TEXT }],
    stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 7 },
  }, { "x-amzn-requestid": "fake-request-id" });
}

/** CountTokens: Claude's foundation models only (Bedrock refuses the others, Nova,
 * Llama, …, whatever the input), `{input: {invokeModel: {body}}}` or
 * `{input: {converse: {messages, system?}}}`. */
function answerCount(r: ConverseReceived, res: http.ServerResponse): void {
  if (!/^anthropic\./.test(r.modelId ?? "")) return bedrockError(res, 400, "ValidationException", "The provided model doesn't support counting tokens.");
  const input = r.body.input as { converse?: Record<string, unknown>; invokeModel?: unknown } | undefined;
  const keys = Object.keys(r.body);
  if (keys.length !== 1 || !isObject(input) || Object.keys(input).length !== 1 || !(isObject(input.converse) || isObject(input.invokeModel))) {
    return bedrockError(res, 400, "ValidationException", "input must hold exactly one of invokeModel, converse");
  }
  let problem: string | undefined;
  if (isObject(input.converse)) {
    const extra = Object.keys(input.converse).find((k) => k !== "messages" && k !== "system");
    problem = extra ? `Malformed input request: extraneous key [${extra}] is not permitted` : converseProblem(input.converse);
  } else if (countedBody(r.body).anthropic_version !== "bedrock-2023-05-31") {
    problem = "Malformed input request: #: required key [anthropic_version] not found";
  }
  if (problem) return bedrockError(res, 400, "ValidationException", problem);
  sendJson(res, 200, { inputTokens: CONVERSE_COUNT }, { "x-amzn-requestid": "fake-request-id" });
}

const TOP_LEVEL = new Set([
  "messages", "system", "inferenceConfig", "toolConfig", "guardrailConfig", "additionalModelRequestFields", "promptVariables",
  "additionalModelResponseFieldPaths", "requestMetadata", "performanceConfig",
]);
const INFERENCE = new Set(["maxTokens", "temperature", "topP", "stopSequences"]);
const BLOCKS = new Set(["text", "image", "document", "video", "toolUse", "toolResult", "guardContent", "cachePoint", "reasoningContent", "citationsContent"]);
const IMAGE_FORMATS = new Set(["png", "jpeg", "gif", "webp"]);

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** What Bedrock refuses in a Converse body (the first problem), or undefined. */
export function converseProblem(body: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) return `Malformed input request: extraneous key [${key}] is not permitted`;
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "A conversation must start with a user message.";
  let expected = "user";
  let toolBlocks = false;
  for (const [i, m] of body.messages.entries()) {
    if (!isObject(m) || m.role !== expected) return `messages.${i}: A conversation must alternate between user and assistant roles.`;
    expected = expected === "user" ? "assistant" : "user";
    if (!Array.isArray(m.content) || m.content.length === 0) return `messages.${i}.content: must have at least one content block`;
    for (const [j, b] of m.content.entries()) {
      const problem = blockProblem(b, `messages.${i}.content.${j}`);
      if (problem) return problem;
      if ("toolUse" in b || "toolResult" in b) toolBlocks = true;
    }
  }
  if (body.system !== undefined && (!Array.isArray(body.system) || body.system.some((s) => !isObject(s) || typeof s.text !== "string" || s.text === ""))) {
    return "system: each block must be {text}";
  }
  if (body.inferenceConfig !== undefined) {
    if (!isObject(body.inferenceConfig)) return "inferenceConfig must be an object";
    for (const [key, value] of Object.entries(body.inferenceConfig)) {
      if (!INFERENCE.has(key)) return `Malformed input request: extraneous key [inferenceConfig.${key}] is not permitted`;
      if (key === "stopSequences" ? !Array.isArray(value) : typeof value !== "number") return `inferenceConfig.${key} has the wrong type`;
    }
  }
  if (body.toolConfig !== undefined) {
    const problem = toolConfigProblem(body.toolConfig);
    if (problem) return problem;
  } else if (toolBlocks) {
    return "The toolConfig field must be defined when using toolUse and toolResult content blocks.";
  }
  return undefined;
}

function blockProblem(b: unknown, at: string): string | undefined {
  if (!isObject(b)) return `${at}: a content block must be an object`;
  const keys = Object.keys(b);
  if (keys.length !== 1 || !BLOCKS.has(keys[0])) return `${at}: a content block must have exactly one of ${[...BLOCKS].join(", ")} (got ${keys.join(", ")})`;
  if ("text" in b && (typeof b.text !== "string" || b.text.trim() === "")) return `${at}: The text field in the ContentBlock object is blank.`;
  if ("image" in b) {
    const image = b.image as Record<string, unknown>;
    if (!IMAGE_FORMATS.has(String(image?.format)) || typeof (image?.source as { bytes?: unknown })?.bytes !== "string") return `${at}.image: format and source.bytes are required`;
  }
  if ("toolUse" in b) {
    const t = b.toolUse as Record<string, unknown>;
    if (typeof t?.toolUseId !== "string" || typeof t.name !== "string" || !isObject(t.input)) return `${at}.toolUse: toolUseId, name and input are required`;
  }
  if ("toolResult" in b) {
    const t = b.toolResult as Record<string, unknown>;
    if (typeof t?.toolUseId !== "string" || !Array.isArray(t.content)) return `${at}.toolResult: toolUseId and content are required`;
    if (t.status !== undefined && t.status !== "success" && t.status !== "error") return `${at}.toolResult.status must be success or error`;
  }
  return undefined;
}

function toolConfigProblem(config: unknown): string | undefined {
  if (!isObject(config) || !Array.isArray(config.tools) || config.tools.length === 0) return "toolConfig.tools must hold at least one tool";
  for (const [i, t] of config.tools.entries()) {
    const spec = isObject(t) ? t.toolSpec : undefined;
    if (!isObject(t) || Object.keys(t).length !== 1 || !isObject(spec)) return `toolConfig.tools.${i}: must be {toolSpec}`;
    if (typeof spec.name !== "string" || !isObject(spec.inputSchema) || !isObject(spec.inputSchema.json)) return `toolConfig.tools.${i}.toolSpec: name and inputSchema.json are required`;
  }
  const choice = config.toolChoice;
  if (choice !== undefined) {
    const ok = isObject(choice) && Object.keys(choice).length === 1
      && (isObject(choice.auto) || isObject(choice.any) || (isObject(choice.tool) && typeof choice.tool.name === "string"));
    if (!ok) return "toolConfig.toolChoice must be one of auto, any, tool";
  }
  return undefined;
}

function usage(): Record<string, number> {
  return { inputTokens: CONVERSE_USAGE.input, outputTokens: CONVERSE_USAGE.output, totalTokens: CONVERSE_USAGE.input + CONVERSE_USAGE.output };
}

/** Converse's JSON answer: text, or a text and a call of `tool`. */
function converseJson(tool: string | undefined): Record<string, unknown> {
  const content = tool === undefined
    ? [{ text: CONVERSE_TEXT }]
    : [{ text: CONVERSE_TOOL.preamble }, { toolUse: { toolUseId: CONVERSE_TOOL.id, name: tool, input: CONVERSE_TOOL.input } }];
  return { output: { message: { role: "assistant", content } }, stopReason: tool === undefined ? "end_turn" : "tool_use", usage: usage(), metrics: { latencyMs: 312 } };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function str(value: string): MessageHeaders[string] {
  return { type: "string", value };
}

/** One ConverseStream event frame, with the padding Bedrock adds. */
export function converseEventFrame(eventType: string, payload: Record<string, unknown>): Buffer {
  return Buffer.from(codec.encode({
    headers: { ":event-type": str(eventType), ":content-type": str("application/json"), ":message-type": str("event") },
    body: fromUtf8(JSON.stringify({ ...payload, p: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ" })),
  }));
}

/** The frames of a ConverseStream answer. */
function streamFrames(script: ConverseScript, tool: string | undefined): Buffer[] {
  const f = converseEventFrame;
  const text = script.kind === "tool" ? CONVERSE_TOOL.preamble : CONVERSE_TEXT;
  const half = Math.ceil(text.length / 2);
  const frames = [
    f("messageStart", { role: "assistant" }),
    f("contentBlockDelta", { contentBlockIndex: 0, delta: { text: text.slice(0, half) } }),
  ];
  if (script.kind === "exception") return [...frames, exceptionFrame(script.exceptionType, script.message)];
  frames.push(
    f("contentBlockDelta", { contentBlockIndex: 0, delta: { text: text.slice(half) } }),
    f("contentBlockStop", { contentBlockIndex: 0 }),
  );
  if (script.kind === "tool") {
    const input = JSON.stringify(CONVERSE_TOOL.input);
    const cut = input.indexOf(",") + 1;
    frames.push(
      f("contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: CONVERSE_TOOL.id, name: tool ?? "tool" } } }),
      f("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: input.slice(0, cut) } } }),
      f("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: input.slice(cut) } } }),
      f("contentBlockStop", { contentBlockIndex: 1 }),
    );
  }
  frames.push(f("messageStop", { stopReason: script.kind === "tool" ? "tool_use" : "end_turn" }));
  if (script.kind !== "no-metadata") frames.push(f("metadata", { usage: usage(), metrics: { latencyMs: 312 } }));
  return frames;
}
