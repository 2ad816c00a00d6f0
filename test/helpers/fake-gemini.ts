// A fake Gemini API (generativelanguage.googleapis.com) upstream speaking the real wire format
// (GenerateContentResponse JSON, CRLF-delimited SSE chunks, google.rpc error bodies). Sibling
// of fake-openai.ts: a script per request makes it fail, stall, think, call functions, block
// on safety or stream on cue.

import type http from "node:http";
import {
  sendJson, sendLines, splitText, startFakeServer, type BaseReceived, type FakeServer, type KeyFaultScript,
} from "./fake-server.js";

/** What the fake received, for assertions (`path` e.g. `/v1beta/models/m:streamGenerateContent?alt=sse`). */
export interface Received extends BaseReceived {
  /** Parsed from the path; "" when the path is not a generate or count call. */
  readonly model: string;
  readonly action: "generateContent" | "streamGenerateContent" | "countTokens" | "";
  /** `v1beta`, `v1` or `v1alpha`; "" when unparsed. */
  readonly apiVersion: string;
  readonly query: Readonly<Record<string, string>>;
  /** The key presented, from `x-goog-api-key` or else `?key=`; "" when none. */
  readonly key: string;
  /** `body.safetySettings` as received (undefined when absent), to assert pass-through. */
  readonly safetySettings: unknown;
}

/** How to answer one request. Default: a normal reply, streamed when the action is streamGenerateContent. */
export type Script =
  | { readonly kind: "ok"; readonly text?: string; readonly chunks?: number; readonly chunkDelayMs?: number }
  /** A functionCall part; finishReason STOP (Gemini has no "tool" finish reason). Streamed whole in one chunk. */
  | { readonly kind: "function_call"; readonly name: string; readonly args: Record<string, unknown> }
  /** A `thought: true` part (with `thoughtSignature` when `signature` is given), then the text;
   * usage includes thoughtsTokenCount (`geminiFakeThinkingUsage`). */
  | { readonly kind: "thinking"; readonly thought?: string; readonly text?: string; readonly signature?: string }
  /**
   * Blocked by safety. Default: one candidate, finishReason SAFETY, safetyRatings, no content.
   * `prompt: true`: no candidates; promptFeedback.blockReason SAFETY.
   */
  | { readonly kind: "safety"; readonly prompt?: boolean }
  /** An inlineData image part (`image/png`, `fakePngBase64` unless given), after an optional text part. */
  | { readonly kind: "image"; readonly text?: string; readonly data?: string }
  /** Usage with cachedContentTokenCount (`geminiFakeCacheUsage`). */
  | { readonly kind: "cache"; readonly text?: string }
  /**
   * A google.rpc error body. `googleStatus` defaults from the status (429 → RESOURCE_EXHAUSTED, …).
   * `inStream`: for stream requests, answer 200, send one text chunk, then `data: {"error":…}`.
   */
  | { readonly kind: "error"; readonly status: number; readonly googleStatus?: string; readonly message?: string; readonly headers?: Record<string, string>; readonly inStream?: boolean }
  | { readonly kind: "hang" }
  | { readonly kind: "destroy" };

export interface FakeGeminiOptions {
  /** Keys the fake accepts (`x-goog-api-key` or `?key=`); others get Google's 400, no key 403. Empty: any key. */
  readonly keys?: readonly string[];
  /** Keys answered with Google's error for that fault, read per request (a test may change it). */
  readonly keyFaults?: ReadonlyMap<string, KeyFaultScript>;
  /** Name echoed in replies, to tell channels apart. */
  readonly name?: string;
  /** Port to listen on; default 0 (a free one). */
  readonly port?: number;
  /** Chooses the answer per request; default `{kind:"ok"}`. */
  readonly script?: (req: Received) => Script;
  /** Refuse a thought signature Gemini did not issue, as the API does (400 INVALID_ARGUMENT).
   * Off by default. */
  readonly verifySignatures?: boolean;
  /**
   * Refuse a body with a top-level field the API does not know, as the real API does: 400
   * INVALID_ARGUMENT "Invalid JSON payload received. Unknown name \"<field>\": Cannot find
   * field.", quoting the field's name (whatever it says) in the message and a
   * google.rpc.BadRequest detail. Off by default.
   */
  readonly rejectUnknownFields?: boolean;
}

export type FakeGemini = FakeServer<Received>;

/** The keys a Tool may have. */
const TOOL_KEYS = new Set([
  "functionDeclarations", "function_declarations", "googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval",
  "codeExecution", "code_execution", "urlContext", "url_context", "computerUse", "fileSearch", "googleMaps", "enterpriseWebSearch", "retrieval",
]);

/** The API's 400 for tools it refuses: an unknown Tool key (another protocol's tool sent as
 * is), or a built-in tool beside function declarations without server-side tool
 * invocations turned on; undefined when the tools are valid. */
function toolsRefusal(body: Record<string, unknown>): string | undefined {
  const tools = body.tools;
  if (!Array.isArray(tools)) return undefined;
  let functions = false;
  let builtIn = false;
  for (const t of tools) {
    for (const key of Object.keys((t ?? {}) as object)) {
      if (!TOOL_KEYS.has(key)) return `Invalid JSON payload received. Unknown name ${JSON.stringify(key)} at 'tools[0]': Cannot find field.`;
      if (key === "functionDeclarations" || key === "function_declarations") functions = true;
      else builtIn = true;
    }
  }
  const config = (body.toolConfig ?? body.tool_config) as Record<string, unknown> | undefined;
  if (functions && builtIn && config?.includeServerSideToolInvocations !== true) {
    return "Please enable tool_config.include_server_side_tool_invocations to use Built-in tools with Function calling.";
  }
  return undefined;
}

/** What the fake's `:countTokens` answers (`totalTokens`), whatever it is sent. */
export const GEMINI_FAKE_COUNT = 3141;

/** Usage (final totals) reported by ok, function_call, image replies. */
export const geminiFakeUsage = { promptTokenCount: 12, candidatesTokenCount: 5, totalTokenCount: 17 } as const;
/** Usage reported by `thinking` (totalTokenCount includes thoughts; candidatesTokenCount does not). */
export const geminiFakeThinkingUsage = { promptTokenCount: 12, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 20 } as const;
/** Usage reported by `cache` (promptTokenCount includes the cached tokens). */
export const geminiFakeCacheUsage = { promptTokenCount: 12, candidatesTokenCount: 5, cachedContentTokenCount: 8, totalTokenCount: 17 } as const;
/** Usage reported by safety blocks (nothing generated). */
export const geminiFakeBlockedUsage = { promptTokenCount: 12, totalTokenCount: 12 } as const;

const PART_DATA = ["text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"];

/** The API's rules on `contents`: roles user or model, and each part one kind of data, an
 * inlineData with its mimeType and data. Images (inlineData) are taken in model turns too:
 * an image model's earlier picture is how multi-turn image editing works. */
function contentsFault(contents: unknown): string | undefined {
  if (contents === undefined) return undefined;
  if (!Array.isArray(contents)) return "Invalid value at 'contents': expected a list.";
  for (const [i, c] of contents.entries()) {
    const role = (c as { role?: unknown })?.role;
    if (role !== undefined && role !== "user" && role !== "model") return `Please use a valid role: user, model. (contents[${i}])`;
    const parts = (c as { parts?: unknown })?.parts;
    if (!Array.isArray(parts) || parts.length === 0) return `contents[${i}].parts: must not be empty.`;
    for (const [j, p] of parts.entries()) {
      const data = PART_DATA.filter((k) => (p as Record<string, unknown>)?.[k] !== undefined);
      if (data.length !== 1) return `contents[${i}].parts[${j}]: oneof field 'data' must be set exactly once (found ${data.length}).`;
      const inline = (p as { inlineData?: { mimeType?: unknown; data?: unknown } }).inlineData;
      if (inline && (typeof inline.mimeType !== "string" || typeof inline.data !== "string")) {
        return `contents[${i}].parts[${j}].inline_data: mime_type and data are required.`;
      }
    }
  }
  return undefined;
}

/** A 1×1 PNG, the `image` script's default inlineData. */
export const fakePngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** Response header on every generate reply: whether the request carried `safetySettings`. */
export const SAFETY_ECHO_HEADER = "x-fake-safety-settings-received";

/** Starts the fake on 127.0.0.1 with a free port. */
export function startFakeGemini(opts: FakeGeminiOptions = {}): Promise<FakeGemini> {
  return startFakeServer((r, res, seq) => answer(r, res, opts, seq), { port: opts.port, describe });
}

/** The generate call a request makes: model, action and API version from the path, the key presented. */
function describe(base: BaseReceived): Received {
  const url = new URL(base.path || "/", "http://fake");
  const m = /^\/(v1beta|v1|v1alpha)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(url.pathname);
  const header = base.headers["x-goog-api-key"];
  return {
    ...base,
    model: m ? decodeURIComponent(m[2]) : "",
    action: m ? (m[3] as Received["action"]) : "",
    apiVersion: m ? m[1] : "",
    query: Object.fromEntries(url.searchParams),
    key: typeof header === "string" && header !== "" ? header : url.searchParams.get("key") ?? "",
    safetySettings: base.body.safetySettings,
  };
}

function statusName(status: number): string {
  switch (status) {
    case 400: return "INVALID_ARGUMENT";
    case 401: return "UNAUTHENTICATED";
    case 403: return "PERMISSION_DENIED";
    case 404: return "NOT_FOUND";
    case 409: return "ABORTED";
    case 429: return "RESOURCE_EXHAUSTED";
    case 499: return "CANCELLED";
    case 501: return "UNIMPLEMENTED";
    case 503: return "UNAVAILABLE";
    case 504: return "DEADLINE_EXCEEDED";
    default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
  }
}

function defaultMessage(status: number): string {
  switch (status) {
    case 429: return "Resource has been exhausted (e.g. check quota).";
    case 500: return "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting";
    case 503: return "The model is overloaded. Please try again later.";
    case 504: return "Deadline expired before operation could complete.";
    default: return `fake error ${status}`;
  }
}

/** The top-level fields of a GenerateContentRequest and of a CountTokensRequest (proto JSON takes either spelling). */
const GENERATE_FIELDS = new Set([
  "contents", "tools", "toolConfig", "tool_config", "safetySettings", "safety_settings", "systemInstruction", "system_instruction",
  "generationConfig", "generation_config", "cachedContent", "cached_content", "labels",
]);
const COUNT_FIELDS = new Set(["contents", "generateContentRequest", "generate_content_request"]);

const errorObject = (code: number, message: string, status: string, details?: object[]) =>
  ({ error: { code, message, status, ...(details ? { details } : {}) } });

function googleError(res: http.ServerResponse, code: number, message: string, status: string, details?: object[], headers?: Record<string, string>) {
  sendJson(res, code, errorObject(code, message, status, details), { "content-type": "application/json; charset=UTF-8", ...headers }, 2);
}

/** A google.rpc QuotaFailure for the free tier's request quota of one model, per day or per minute. */
function quotaFailure(per: "Day" | "Minute"): object[] {
  return [
    { "@type": "type.googleapis.com/google.rpc.Help", links: [{ description: "Learn more about Gemini API quotas", url: "https://ai.google.dev/gemini-api/docs/rate-limits" }] },
    { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{
      quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
      quotaId: `GenerateRequestsPer${per}PerProjectPerModel-FreeTier`,
      quotaDimensions: { location: "global", model: "gemini-2.5-flash" }, quotaValue: per === "Day" ? "250" : "10",
    }] },
    { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "43s" },
  ];
}

const quotaMessage = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.";

/** Google's answers for a key at fault, as the Gemini API sends them. */
function geminiKeyFault(res: http.ServerResponse, fault: KeyFaultScript): void {
  switch (fault) {
    case "invalid_key":
      return googleError(res, 400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT", [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com",
          metadata: { service: "generativelanguage.googleapis.com" } },
        { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US", message: "API key not valid. Please pass a valid API key." },
      ]);
    case "forbidden":
      return googleError(res, 403, "Permission denied: Consumer 'api_key:fake' has been suspended.", "PERMISSION_DENIED", [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "CONSUMER_SUSPENDED", domain: "googleapis.com",
          metadata: { service: "generativelanguage.googleapis.com", consumer: "projects/fake" } },
      ]);
    case "no_credit": return googleError(res, 429, quotaMessage, "RESOURCE_EXHAUSTED", quotaFailure("Day"));
    case "rate_limited": return googleError(res, 429, quotaMessage, "RESOURCE_EXHAUSTED", quotaFailure("Minute"));
  }
}

/** Whether a part carries a thought signature Gemini did not issue. Gemini's (protobuf in
 * base64) start with "C"; the documented "skip_thought_signature_validator" is accepted. */
function foreignThoughtSignature(body: Record<string, unknown>): boolean {
  const contents = Array.isArray(body.contents) ? body.contents as { parts?: unknown }[] : [];
  return contents.some((c) => Array.isArray(c?.parts) && (c.parts as { thoughtSignature?: unknown }[]).some((p) =>
    p?.thoughtSignature !== undefined && p.thoughtSignature !== "skip_thought_signature_validator"
    && !(typeof p.thoughtSignature === "string" && /^C[A-Za-z0-9+/_-]+=*$/.test(p.thoughtSignature))));
}

function answer(r: Received, res: http.ServerResponse, opts: FakeGeminiOptions, seq: number): void {
  if (r.action === "" || r.method !== "POST") {
    const path = r.path.split("?")[0];
    return googleError(res, 404, `Requested entity was not found. (${path})`, "NOT_FOUND");
  }
  const fault = opts.keyFaults?.get(r.key);
  if (fault) return geminiKeyFault(res, fault);
  if (opts.keys && opts.keys.length > 0) {
    if (r.key === "") {
      return googleError(res, 403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", "PERMISSION_DENIED");
    }
    if (!opts.keys.includes(r.key)) {
      return googleError(res, 400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT", [
        { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com",
          metadata: { service: "generativelanguage.googleapis.com" } },
        { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US", message: "API key not valid. Please pass a valid API key." },
      ]);
    }
  }
  const unknown = opts.rejectUnknownFields
    ? Object.keys(r.body).find((f) => !(r.action === "countTokens" ? COUNT_FIELDS : GENERATE_FIELDS).has(f)) : undefined;
  if (unknown !== undefined) {
    const message = `Invalid JSON payload received. Unknown name ${JSON.stringify(unknown)}: Cannot find field.`;
    return googleError(res, 400, message, "INVALID_ARGUMENT", [
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ description: message }] },
    ]);
  }
  const contentFault = r.action === "countTokens" ? undefined : contentsFault(r.body.contents);
  if (contentFault !== undefined) return googleError(res, 400, contentFault, "INVALID_ARGUMENT");
  const badTools = r.action === "countTokens" ? undefined : toolsRefusal(r.body);
  if (badTools !== undefined) return googleError(res, 400, badTools, "INVALID_ARGUMENT");
  if (opts.verifySignatures && foreignThoughtSignature(r.body)) {
    return googleError(res, 400, "Unable to submit request because Thought signature is not valid.", "INVALID_ARGUMENT");
  }
  const script = opts.script?.(r) ?? { kind: "ok" };
  const stream = r.action === "streamGenerateContent";
  switch (script.kind) {
    case "hang": return;
    case "destroy": res.socket?.destroy(); return;
    case "error":
      if (!(script.inStream && stream)) {
        return googleError(res, script.status, script.message ?? defaultMessage(script.status),
          script.googleStatus ?? statusName(script.status), undefined, script.headers);
      }
      return streamAnswer(r, res, script, opts, seq);
    default:
      // A CountTokensResponse; every other script answers the count too.
      if (r.action === "countTokens") {
        return sendJson(res, 200, { totalTokens: GEMINI_FAKE_COUNT, promptTokensDetails: [{ modality: "TEXT", tokenCount: GEMINI_FAKE_COUNT }] },
          headersFor(r, "application/json; charset=UTF-8"), 2);
      }
      return stream ? streamAnswer(r, res, script, opts, seq) : jsonAnswer(r, res, script, opts, seq);
  }
}

function lastUserText(r: Received): string {
  const contents = (r.body.contents as { parts?: { text?: unknown }[] }[] | undefined) ?? [];
  const parts = contents[contents.length - 1]?.parts ?? [];
  const text = parts.map((p) => (typeof p.text === "string" ? p.text : "")).join("");
  return text !== "" ? text : "hello";
}

function replyText(r: Received, script: Script, opts: FakeGeminiOptions): string {
  if ((script.kind === "ok" || script.kind === "thinking" || script.kind === "cache") && script.text !== undefined) return script.text;
  return `${opts.name ?? "fake"} says: ${lastUserText(r)}`;
}

type Part = Record<string, unknown>;

const blockedRatings = [
  { category: "HARM_CATEGORY_SEXUALLY_EXPLICIT", probability: "NEGLIGIBLE" },
  { category: "HARM_CATEGORY_HATE_SPEECH", probability: "NEGLIGIBLE" },
  { category: "HARM_CATEGORY_HARASSMENT", probability: "HIGH", blocked: true },
  { category: "HARM_CATEGORY_DANGEROUS_CONTENT", probability: "NEGLIGIBLE" },
];

function usageFor(script: Script): Record<string, unknown> {
  const u = script.kind === "thinking" ? geminiFakeThinkingUsage
    : script.kind === "cache" ? geminiFakeCacheUsage
    : script.kind === "safety" ? geminiFakeBlockedUsage
    : geminiFakeUsage;
  return {
    ...u,
    promptTokensDetails: [{ modality: "TEXT", tokenCount: u.promptTokenCount }],
    ...(script.kind === "cache" ? { cacheTokensDetails: [{ modality: "TEXT", tokenCount: geminiFakeCacheUsage.cachedContentTokenCount }] } : {}),
  };
}

const meta = (r: Received, seq: number) => ({ modelVersion: r.model, responseId: `fakeResp${String(seq).padStart(6, "0")}` });

const candidate = (parts: Part[], finishReason?: string) =>
  ({ content: { parts, role: "model" }, ...(finishReason ? { finishReason } : {}), index: 0 });

/** The full reply as a single response (non-stream), or null for prompt-blocked. */
function fullParts(r: Received, script: Script, opts: FakeGeminiOptions): Part[] {
  switch (script.kind) {
    case "function_call": return [{ functionCall: { name: script.name, args: script.args } }];
    case "thinking": return [
      { text: script.thought ?? "Let me think about this step by step.", thought: true, ...(script.signature !== undefined && { thoughtSignature: script.signature }) },
      { text: replyText(r, script, opts) },
    ];
    case "image": return [...(script.text !== undefined ? [{ text: script.text }] : []), { inlineData: { mimeType: "image/png", data: script.data ?? fakePngBase64 } }];
    default: return [{ text: replyText(r, script, opts) }];
  }
}

function safetyBody(r: Received, script: Script & { kind: "safety" }, seq: number): object {
  return script.prompt
    ? { promptFeedback: { blockReason: "SAFETY", safetyRatings: blockedRatings }, usageMetadata: usageFor(script), ...meta(r, seq) }
    : { candidates: [{ finishReason: "SAFETY", index: 0, safetyRatings: blockedRatings }], usageMetadata: usageFor(script), ...meta(r, seq) };
}

const headersFor = (r: Received, contentType: string) => ({
  "content-type": contentType, "x-goog-request-id": "fake-goog-req", [SAFETY_ECHO_HEADER]: String(r.safetySettings !== undefined),
});

/** The response field mask a request carries, as Google reads it: `fields` (or `$fields`)
 * in the query, else the `X-Goog-FieldMask` header; undefined when there is none. */
function fieldMask(r: Received): string | undefined {
  const header = r.headers["x-goog-fieldmask"];
  return r.query.fields ?? r.query.$fields ?? (typeof header === "string" ? header : undefined);
}

/** The answer with only the top-level fields a mask names (`candidates.content` keeps
 * `candidates`): a mask without `usageMetadata` drops the usage, as Google does. */
function masked(body: object, mask: string | undefined): object {
  if (mask === undefined) return body;
  const keep = new Set(mask.split(",").map((path) => path.trim().split(/[.(/]/)[0]));
  if (keep.has("*")) return body;
  return Object.fromEntries(Object.entries(body).filter(([k]) => keep.has(k)));
}

function jsonAnswer(r: Received, res: http.ServerResponse, script: Script, opts: FakeGeminiOptions, seq: number): void {
  const body = script.kind === "safety" ? safetyBody(r, script, seq)
    : { candidates: [candidate(fullParts(r, script, opts), "STOP")], usageMetadata: usageFor(script), ...meta(r, seq) };
  sendJson(res, 200, masked(body, fieldMask(r)), headersFor(r, "application/json; charset=UTF-8"), 2);
}

function streamAnswer(r: Received, res: http.ServerResponse, script: Script, opts: FakeGeminiOptions, seq: number): void {
  const events: object[] = [];
  if (script.kind === "safety") {
    events.push(safetyBody(r, script, seq));
  } else if (script.kind === "error") {
    events.push({ candidates: [candidate([{ text: replyText(r, script, opts) }])], usageMetadata: { promptTokenCount: geminiFakeUsage.promptTokenCount, totalTokenCount: geminiFakeUsage.promptTokenCount }, ...meta(r, seq) });
    events.push(errorObject(script.status, script.message ?? defaultMessage(script.status), script.googleStatus ?? statusName(script.status)));
  } else {
    // One part per chunk: thoughts first, then the text split over chunks, then any whole part.
    const pieces: Part[] = [];
    for (const p of fullParts(r, script, opts)) {
      if (typeof p.text === "string" && p.thought !== true) {
        const n = script.kind === "ok" && script.chunks ? script.chunks : 3;
        for (const t of splitText(p.text, n)) pieces.push({ text: t });
      } else pieces.push(p);
    }
    const full = usageFor(script);
    const final = full.candidatesTokenCount as number;
    pieces.forEach((p, i) => {
      const last = i === pieces.length - 1;
      // Running totals; the last chunk carries exactly the exported usage.
      const cand = last ? final : Math.max(1, Math.floor((final * (i + 1)) / pieces.length));
      const usage = last ? full : { ...full, candidatesTokenCount: cand, totalTokenCount: (full.totalTokenCount as number) - final + cand };
      events.push({ candidates: [candidate([p], last ? "STOP" : undefined)], usageMetadata: usage, ...meta(r, seq) });
    });
  }
  const sse = r.query.alt === "sse";
  res.writeHead(200, headersFor(r, sse ? "text/event-stream" : "application/json; charset=UTF-8"));
  // Without alt=sse Gemini streams one JSON array (`[{…}`, then `\n,\r\n{…}` per chunk, then
  // `]`); with it, `data: …\r\n\r\n` events. A field mask applies to every chunk.
  const mask = fieldMask(r);
  const chunks = events.map((e) => JSON.stringify("error" in e ? e : masked(e, mask)));
  const lines = sse
    ? chunks.map((c) => `data: ${c}\r\n\r\n`)
    : chunks.map((c, i) => `${i === 0 ? "[" : "\n,\r\n"}${c}${i === chunks.length - 1 ? "]" : ""}`);
  sendLines(res, lines, script.kind === "ok" ? script.chunkDelayMs ?? 0 : 0);
}
