// A fake OpenAI-protocol upstream speaking the real wire format (JSON bodies, SSE chunks,
// OpenAI error bodies). Tests, the demo and the benchmark drive the gateway against it;
// a script per request makes it fail, stall or stream on cue.

import type http from "node:http";
import {
  bearerKey, sendJson, sendLines, sendOpenAIError, startFakeServer, type BaseReceived, type FakeServer, type KeyFaultScript,
} from "./fake-server.js";

/** What the fake received, for assertions. */
export type Received = BaseReceived;

/** How to answer one request. Default: a normal completion, streamed if asked. */
export type Script =
  | { readonly kind: "ok"; readonly text?: string; readonly chunks?: number; readonly chunkDelayMs?: number }
  | { readonly kind: "error"; readonly status: number; readonly message?: string; readonly headers?: Record<string, string> }
  /** Streamed as OpenAI does: the name in one chunk, the arguments in two more. `whole`: as
   * vLLM and Ollama do, name and complete arguments in one chunk. */
  | { readonly kind: "tool_call"; readonly name: string; readonly args: string; readonly whole?: boolean }
  /** `reasoning_content` (DeepSeek's field; `field: "reasoning"` for OpenRouter's), then the text. */
  | { readonly kind: "reasoning"; readonly reasoning?: string; readonly text?: string; readonly field?: "reasoning_content" | "reasoning" }
  /** As long as the request allows, as a model that always writes to its limit:
   * completion tokens = max_completion_tokens (or max_tokens; `unlimited` when it sets
   * none) × n, `reasoning` of them hidden reasoning (a misbehaving provider: `overrun`
   * more than allowed). Streamed: the role chunk at once, then nothing (hidden reasoning)
   * until `stallMs` passes (never, when absent), then the text, the finish and the usage. */
  | { readonly kind: "metered"; readonly unlimited: number; readonly reasoning?: number; readonly stallMs?: number; readonly overrun?: number }
  | { readonly kind: "hang" }
  | { readonly kind: "destroy" }
  /** Speech as SSE whose `speech.audio.done` carries no usage (a misbehaving provider). */
  | { readonly kind: "speech_without_usage" }
  /** Speech as SSE cut after its first delta (the connection dropped). */
  | { readonly kind: "speech_cut" }
  /** Speech as raw audio even when SSE was asked for (a provider ignoring stream_format). */
  | { readonly kind: "speech_raw" };

export interface FakeOpenAIOptions {
  /** Keys the fake accepts; others get OpenAI's 401. Empty: any key. */
  readonly keys?: readonly string[];
  /** Keys answered with OpenAI's error for that fault, read per request (a test may change it). */
  readonly keyFaults?: ReadonlyMap<string, KeyFaultScript>;
  /** Name echoed in replies, to tell channels apart. */
  readonly name?: string;
  /** Port to listen on; default 0 (a free one). */
  readonly port?: number;
  /** Chooses the answer per request; default `{kind:"ok"}`. */
  readonly script?: (req: Received) => Script;
  /** What `GET /v1/videos/{id}` says of a job; default completed. */
  readonly videoJob?: (id: string) => VideoJobScript;
  /** The keys' organization: a chat request whose `OpenAI-Organization` header names
   * another gets OpenAI's 401 mismatched_organization. Unset: the header is not checked. */
  readonly organization?: string;
  /** What each named model supports: the chat API refuses, as OpenAI does, reasoning_effort
   * toward a model without reasoning and an output limit above the model's maximum. */
  readonly models?: Readonly<Record<string, { readonly reasoning?: boolean; readonly maxOutput?: number }>>;
}

/** A video job's state as the fake reports it: a status (with OpenAI's `error` when
 * failed), an OpenAI error answer, or a dropped connection. */
export type VideoJobScript =
  | { readonly status: "queued" | "in_progress" | "completed" | "failed"; readonly error?: { code: string; message: string } }
  | { readonly httpError: number }
  | { readonly destroy: true };

export type FakeOpenAI = FakeServer<Received>;

export const fakeUsage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17,
  prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 1 } };

/** Starts the fake on 127.0.0.1 with a free port. */
export function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  return startFakeServer((r, res) => answer(r, res, opts), { port: opts.port });
}

/** Embedding vectors the fake returns: 3 dimensions, one vector per input. */
export const fakeEmbeddingUsage = { prompt_tokens: 8, total_tokens: 8 };

function answer(r: Received, res: http.ServerResponse, opts: FakeOpenAIOptions): void {
  if (r.method === "POST" && otherPaths.has(r.path)) return answerOther(r, res, opts);
  if (r.path.startsWith("/v1/videos")) return answerVideo(r, res, opts);
  if (r.path !== "/v1/chat/completions" || r.method !== "POST") {
    return sendOpenAIError(res, 404, `Unknown path ${r.path}`, "invalid_request_error", "unknown_url");
  }
  const key = bearerKey(r.headers);
  const fault = opts.keyFaults?.get(key);
  if (fault) return sendOpenAIKeyFault(res, fault, key);
  if (opts.keys && opts.keys.length > 0 && !opts.keys.includes(key)) {
    return sendOpenAIError(res, 401, `Incorrect API key provided: ${key.slice(0, 3)}***. You can find your API key at https://platform.openai.com/account/api-keys.`, "invalid_request_error", "invalid_api_key");
  }
  const organization = r.headers["openai-organization"];
  if (opts.organization !== undefined && organization !== undefined && organization !== opts.organization) {
    return sendOpenAIError(res, 401, "OpenAI-Organization header should match organization for API key", "invalid_request_error", "mismatched_organization");
  }
  const refusal = capabilityRefusal(r.body, opts.models?.[String(r.body.model)]);
  if (refusal) return sendJson(res, 400, { error: { ...refusal, type: "invalid_request_error" } });
  const script = opts.script?.(r) ?? { kind: "ok" };
  switch (script.kind) {
    case "hang": return;
    case "destroy": res.socket?.destroy(); return;
    case "error":
      return sendOpenAIError(res, script.status, script.message ?? `fake error ${script.status}`,
        script.status === 429 ? "rate_limit_exceeded" : script.status >= 500 ? "server_error" : "invalid_request_error", null, script.headers);
    case "metered":
      return meteredAnswer(r, res, script);
    default:
      return r.body.stream === true ? streamAnswer(r, res, script, opts) : jsonAnswer(r, res, script, opts);
  }
}

/** OpenAI's refusal of a field the model does not support (its words and `param`). */
function capabilityRefusal(
  body: Record<string, unknown>, model: { readonly reasoning?: boolean; readonly maxOutput?: number } | undefined,
): { message: string; param: string; code: string } | undefined {
  if (!model) return undefined;
  if (model.reasoning === false && body.reasoning_effort !== undefined) {
    return { message: "Unrecognized request argument supplied: reasoning_effort", param: "reasoning_effort", code: "unsupported_parameter" };
  }
  for (const param of ["max_completion_tokens", "max_tokens"]) {
    const v = body[param];
    if (model.maxOutput !== undefined && typeof v === "number" && v > model.maxOutput) {
      return {
        message: `${param} is too large: ${v}. This model supports at most ${model.maxOutput} completion tokens, whereas you provided ${v}.`,
        param, code: "invalid_value",
      };
    }
  }
  return undefined;
}

/** OpenAI's answers for a key at fault, as the API sends them. */
export function sendOpenAIKeyFault(res: http.ServerResponse, fault: KeyFaultScript, key: string): void {
  switch (fault) {
    case "invalid_key":
      return sendOpenAIError(res, 401, `Incorrect API key provided: ${key.slice(0, 3)}***. You can find your API key at https://platform.openai.com/account/api-keys.`, "invalid_request_error", "invalid_api_key");
    case "forbidden":
      return sendOpenAIError(res, 403, "Country, region, or territory not supported", "request_forbidden", "unsupported_country_region_territory");
    case "no_credit":
      return sendOpenAIError(res, 429, "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.", "insufficient_quota", "insufficient_quota");
    case "rate_limited":
      return sendOpenAIError(res, 429, "Rate limit reached for gpt-4o-mini in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.", "requests", "rate_limit_exceeded", { "retry-after": "20" });
  }
}

function replyText(r: Received, script: Script, opts: FakeOpenAIOptions): string {
  if ((script.kind === "ok" || script.kind === "reasoning") && script.text !== undefined) return script.text;
  const messages = (r.body.messages as { content?: unknown }[] | undefined) ?? [];
  const last = messages[messages.length - 1]?.content;
  return `${opts.name ?? "fake"} says: ${typeof last === "string" ? last : "hello"}`;
}

const base = (r: Received) => ({ id: "chatcmpl-fake123", created: 1_700_000_000, model: String(r.body.model), system_fingerprint: "fp_fake" });

function jsonAnswer(r: Received, res: http.ServerResponse, script: Script, opts: FakeOpenAIOptions): void {
  const message = script.kind === "tool_call"
    ? { role: "assistant", content: null, refusal: null,
        tool_calls: [{ id: "call_fake1", type: "function", function: { name: script.name, arguments: script.args } }] }
    : { role: "assistant", content: replyText(r, script, opts), refusal: null, ...reasoningOf(script) };
  const body = {
    ...base(r), object: "chat.completion",
    choices: [{ index: 0, message, logprobs: null, finish_reason: script.kind === "tool_call" ? "tool_calls" : "stop" }],
    usage: fakeUsage, service_tier: "default",
  };
  sendJson(res, 200, body, { "openai-organization": "org-secret", "x-request-id": "req_fake" });
}

function streamAnswer(r: Received, res: http.ServerResponse, script: Script, opts: FakeOpenAIOptions): void {
  const withUsage = (r.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const u = withUsage ? { usage: null } : {};
  const events: object[] = [];
  // Every chunk names the service tier, as OpenAI's do.
  const chunk = (delta: object, finish: string | null) =>
    ({ ...base(r), object: "chat.completion.chunk", service_tier: "default", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...u });
  events.push(chunk({ role: "assistant", content: "", refusal: null }, null));
  if (script.kind === "tool_call" && script.whole) {
    events.push(chunk({ tool_calls: [{ index: 0, id: "call_fake1", type: "function", function: { name: script.name, arguments: script.args } }] }, null));
    events.push(chunk({}, "tool_calls"));
  } else if (script.kind === "tool_call") {
    events.push(chunk({ tool_calls: [{ index: 0, id: "call_fake1", type: "function", function: { name: script.name, arguments: "" } }] }, null));
    const half = Math.ceil(script.args.length / 2);
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: script.args.slice(0, half) } }] }, null));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: script.args.slice(half) } }] }, null));
    events.push(chunk({}, "tool_calls"));
  } else {
    const reasoning = reasoningOf(script);
    for (const [field, value] of Object.entries(reasoning)) {
      const half = Math.ceil(value.length / 2);
      events.push(chunk({ [field]: value.slice(0, half) }, null), chunk({ [field]: value.slice(half) }, null));
    }
    const text = replyText(r, script, opts);
    const n = script.kind === "ok" && script.chunks ? script.chunks : Math.min(4, Math.max(1, text.length));
    const size = Math.ceil(text.length / n);
    for (let i = 0; i < n; i++) events.push(chunk({ content: text.slice(i * size, (i + 1) * size) }, null));
    events.push(chunk({}, "stop"));
  }
  if (withUsage) events.push({ ...base(r), object: "chat.completion.chunk", service_tier: "default", choices: [], usage: fakeUsage });
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "openai-organization": "org-secret" });
  const lines = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).concat("data: [DONE]\n\n");
  sendLines(res, lines, script.kind === "ok" ? script.chunkDelayMs ?? 0 : 0);
}

/** The reasoning field of a `reasoning` script's message, else none. */
function reasoningOf(script: Script): Record<string, string> {
  if (script.kind !== "reasoning") return {};
  return { [script.field ?? "reasoning_content"]: script.reasoning ?? "Let me think about this step by step." };
}

const otherPaths = new Set([
  "/v1/embeddings", "/v1/moderations", "/v1/images/generations", "/v1/images/edits", "/v1/audio/speech", "/v1/audio/transcriptions",
  "/v1/rerank",
]);

/** A 1×1 PNG, what the fake "generates". */
export const fakeImageBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/** Bytes the fake "speaks": an MP3 frame header and padding. */
export const fakeAudio = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(412)]);

/** /v1/embeddings, /v1/moderations, /v1/images/generations and /v1/audio/speech in OpenAI's real shapes. */
function answerOther(r: Received, res: http.ServerResponse, opts: FakeOpenAIOptions): void {
  const key = bearerKey(r.headers);
  const fault = opts.keyFaults?.get(key);
  if (fault) return sendOpenAIKeyFault(res, fault, key);
  if (opts.keys && opts.keys.length > 0 && !opts.keys.includes(key)) {
    return sendOpenAIError(res, 401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
  }
  const script = opts.script?.(r);
  if (script?.kind === "error") return sendOpenAIError(res, script.status, script.message ?? `fake error ${script.status}`, "invalid_request_error", null);
  const input = r.body.input;
  const inputs = Array.isArray(input) ? input : [input];
  if (r.path === "/v1/rerank") {
    const documents = (r.body.documents as unknown[]) ?? [];
    return sendJson(res, 200, {
      model: String(r.body.model),
      results: documents.map((_, index) => ({ index, relevance_score: 1 / (index + 1) })).slice(0, Number(r.body.top_n ?? documents.length)),
      usage: { total_tokens: 25 },
    });
  }
  if (r.path === "/v1/audio/transcriptions") return answerTranscription(r, res);
  if (r.path === "/v1/images/edits") {
    if (!String(r.headers["content-type"]).startsWith("multipart/form-data")) {
      return sendOpenAIError(res, 400, "Expected multipart/form-data", "invalid_request_error", null);
    }
    return sendJson(res, 200, { created: 1_700_000_000, data: [{ b64_json: fakeImageBase64 }] });
  }
  if (r.path === "/v1/images/generations") {
    if (r.body.stream === true && String(r.body.model).startsWith("gpt-image")) {
      // gpt-image-1 streams partial images as SSE; the usage comes in the completed event.
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`event: image_generation.partial_image\ndata: ${JSON.stringify({ type: "image_generation.partial_image", b64_json: fakeImageBase64, partial_image_index: 0 })}\n\n` +
        `event: image_generation.completed\ndata: ${JSON.stringify({ type: "image_generation.completed", b64_json: fakeImageBase64,
          usage: { input_tokens: 20, output_tokens: 1056, total_tokens: 1076, input_tokens_details: { text_tokens: 20, image_tokens: 0 } } })}\n\n`);
      return;
    }
    return sendJson(res, 200, {
      created: 1_700_000_000,
      data: [{ b64_json: fakeImageBase64, revised_prompt: String(r.body.prompt) }],
      ...(String(r.body.model).startsWith("gpt-image") && {
        usage: { input_tokens: 20, output_tokens: 1056, total_tokens: 1076, input_tokens_details: { text_tokens: 20, image_tokens: 0 } },
      }),
    });
  }
  if (r.path === "/v1/audio/speech") return answerSpeech(r, res, script);
  if (r.path === "/v1/embeddings") {
    return sendJson(res, 200, {
      object: "list",
      data: inputs.map((_, index) => ({ object: "embedding", index, embedding: [0.1 * (index + 1), -0.2, 0.3] })),
      model: String(r.body.model),
      usage: fakeEmbeddingUsage,
    });
  }
  sendJson(res, 200, {
    id: "modr-fake1",
    model: String(r.body.model),
    results: inputs.map(() => ({ flagged: false, categories: { harassment: false, violence: false }, category_scores: { harassment: 0.001, violence: 0.002 } })),
  });
}

/** What the token-priced speech models (gpt-4o-mini-tts) "speak": three SSE deltas' worth
 * of bytes that are no text. */
export const fakeSpeechAudio = Buffer.from(Array.from({ length: 9000 }, (_, i) => (i * 37 + (i >> 8)) & 0xff));
/** The usage gpt-4o-mini-tts reports in `speech.audio.done`. */
export const fakeSpeechUsage = { input_tokens: 14, output_tokens: 1500, total_tokens: 1514 };
/** Content-Type of each speech `response_format`. */
export const speechContentTypes: Readonly<Record<string, string>> = {
  mp3: "audio/mpeg", opus: "audio/opus", aac: "audio/aac", flac: "audio/flac", wav: "audio/wav", pcm: "audio/pcm",
};

/** /v1/audio/speech as OpenAI answers it: raw audio (tts-1's fixed frame, the token-priced
 * models' own bytes) in the content type of `response_format`, or, with `stream_format:
 * "sse"` (which tts-1 and tts-1-hd refuse), `speech.audio.delta` events with the audio in
 * base64 and a `speech.audio.done` with the usage. */
function answerSpeech(r: Received, res: http.ServerResponse, script: Script | undefined): void {
  const model = String(r.body.model);
  const classic = /^tts-1/.test(model);
  const format = typeof r.body.response_format === "string" ? r.body.response_format : "mp3";
  const type = speechContentTypes[format];
  if (!type) return sendOpenAIError(res, 400, `Invalid value: '${format}'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.`, "invalid_request_error", "invalid_value");
  const sse = r.body.stream_format === "sse";
  if (sse && classic) return sendOpenAIError(res, 400, "stream_format 'sse' is not supported for tts-1 or tts-1-hd.", "invalid_request_error", "unsupported_value");
  const audio = classic ? fakeAudio : fakeSpeechAudio;
  if (!sse || script?.kind === "speech_raw") {
    res.writeHead(200, { "content-type": type, "content-length": audio.length });
    res.end(audio);
    return;
  }
  const third = Math.ceil(audio.length / 3);
  const lines = [0, 1, 2].map((i) => `data: ${JSON.stringify({ type: "speech.audio.delta", audio: audio.subarray(i * third, (i + 1) * third).toString("base64") })}\n\n`);
  const done = script?.kind === "speech_without_usage" ? {} : { usage: fakeSpeechUsage };
  lines.push(`data: ${JSON.stringify({ type: "speech.audio.done", ...done })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream" });
  if (script?.kind === "speech_cut") {
    res.write(lines[0] + lines[1], () => res.socket?.destroy());
    return;
  }
  sendLines(res, lines, 20);
}

/** What the fake transcribes any audio to. */
export const fakeTranscript = "Hello from the fake transcriber.";
/** Usage of a token-priced transcription (gpt-4o-transcribe's shape). */
export const fakeTranscriptionTokens = { type: "tokens", input_tokens: 40, output_tokens: 9, total_tokens: 49, input_token_details: { audio_tokens: 40, text_tokens: 0 } };

/** The last value of a multipart text field, read from the raw body (the fake's own reading). */
function multipartField(r: Received, name: string): string | undefined {
  const all = [...r.raw.toString("latin1").matchAll(new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)`, "g"))];
  return all.at(-1)?.[1];
}

/** /v1/audio/transcriptions as OpenAI answers it: JSON with usage (whisper: the audio's
 * duration; gpt-4o-transcribe: tokens), or the bare transcript for text, srt and vtt,
 * which carry no usage. */
function answerTranscription(r: Received, res: http.ServerResponse): void {
  const model = multipartField(r, "model") ?? "";
  const usage = model.startsWith("whisper") ? { type: "duration", seconds: 12.5 } : fakeTranscriptionTokens;
  const format = multipartField(r, "response_format") ?? "json";
  if (multipartField(r, "stream") === "true" && !model.startsWith("whisper")) {
    // OpenAI streams gpt-4o-transcribe's transcript as SSE; the usage comes in the done event.
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(`data: ${JSON.stringify({ type: "transcript.text.delta", delta: fakeTranscript })}\n\n` +
      `data: ${JSON.stringify({ type: "transcript.text.done", text: fakeTranscript, usage: fakeTranscriptionTokens })}\n\n`);
    return;
  }
  const plain = (body: string) => {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  switch (format) {
    case "text": return plain(`${fakeTranscript}\n`);
    case "srt": return plain(`1\n00:00:00,000 --> 00:00:02,000\n${fakeTranscript}\n\n`);
    case "vtt": return plain(`WEBVTT\n\n00:00:00.000 --> 00:00:02.000\n${fakeTranscript}\n\n`);
    case "verbose_json":
      return sendJson(res, 200, { task: "transcribe", language: "english", duration: 12.5, text: fakeTranscript, segments: [], usage });
    default: return sendJson(res, 200, { text: fakeTranscript, usage });
  }
}

/** Bytes of the fake's "video". */
export const fakeVideo = Buffer.concat([Buffer.from("\x00\x00\x00\x18ftypmp42"), Buffer.alloc(64, 7)]);
let videoSeq = 0;

/** Video jobs as OpenAI's /v1/videos speaks them: create (JSON or multipart), status, content. */
function answerVideo(r: Received, res: http.ServerResponse, opts: FakeOpenAIOptions): void {
  if (r.method === "POST" && r.path === "/v1/videos") {
    const raw = r.raw.toString("latin1");
    const field = (name: string) => r.body[name] ?? new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)`).exec(raw)?.[1];
    return sendJson(res, 200, {
      id: `video_fake${++videoSeq}`, object: "video", model: String(field("model")), status: "queued", progress: 0,
      seconds: String(field("seconds") ?? "8"), size: "1280x720", created_at: 1_700_000_000,
    });
  }
  const m = /^\/v1\/videos\/([^/?]+)(\/content)?/.exec(r.path);
  if (r.method === "GET" && m) {
    if (m[2]) {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": fakeVideo.length });
      res.end(fakeVideo);
      return;
    }
    const job = opts.videoJob?.(m[1]) ?? { status: "completed" };
    if ("destroy" in job) return void res.socket?.destroy();
    if ("httpError" in job) {
      return sendOpenAIError(res, job.httpError, `fake video error ${job.httpError}`, job.httpError >= 500 ? "server_error" : "invalid_request_error", null);
    }
    const done = job.status === "completed" || job.status === "failed";
    return sendJson(res, 200, {
      id: m[1], object: "video", model: "sora-2", status: job.status, progress: job.status === "completed" ? 100 : done ? 0 : 40,
      seconds: "8", size: "1280x720", prompt: null, remixed_from_video_id: null, created_at: 1_700_000_000,
      completed_at: done ? 1_700_000_100 : null, expires_at: job.status === "completed" ? 1_700_086_500 : null,
      error: job.status === "failed" ? job.error ?? { code: "generation_failed", message: "The video could not be generated." } : null,
    });
  }
  sendOpenAIError(res, 404, `Unknown path ${r.path}`, "invalid_request_error", "unknown_url");
}

/** The `metered` script: usage as long as the request allows, streamed after a silence. */
function meteredAnswer(r: Received, res: http.ServerResponse, script: Script & { kind: "metered" }): void {
  const cap = [r.body.max_completion_tokens, r.body.max_tokens].find((v): v is number => typeof v === "number") ?? script.unlimited;
  const n = typeof r.body.n === "number" ? r.body.n : 1;
  const completion = cap * n + (script.overrun ?? 0);
  const usage = { prompt_tokens: 12, completion_tokens: completion, total_tokens: 12 + completion,
    completion_tokens_details: { reasoning_tokens: Math.min(script.reasoning ?? 0, completion) } };
  const text = "As long as allowed.";
  if (r.body.stream !== true) {
    const choices = Array.from({ length: n }, (_, index) => ({ index, message: { role: "assistant", content: text, refusal: null }, logprobs: null, finish_reason: "length" }));
    return sendJson(res, 200, { ...base(r), object: "chat.completion", choices, usage });
  }
  const chunk = (body: object) => `data: ${JSON.stringify({ ...base(r), object: "chat.completion.chunk", ...body })}\n\n`;
  const delta = (d: object, finish: string | null) => chunk({ choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }], usage: null });
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  res.write(delta({ role: "assistant", content: "", refusal: null }, null));
  if (script.stallMs === undefined) return; // thinking, silent, the connection held open
  setTimeout(() => {
    if (res.destroyed) return;
    res.end(delta({ content: text }, null) + delta({}, "length") + chunk({ choices: [], usage }) + "data: [DONE]\n\n");
  }, script.stallMs);
}
