// fast-check arbitraries for fuzzing the gateway over raw HTTP: each route's valid request as
// a seed, then mutated JSON bodies and multipart forms, headers, credentials and framing
// (Content-Length, chunked, split writes, a body cut short).

import fc from "fast-check";
import { chunked, requestBytes, type RawSend } from "./raw-http.js";

export interface FormPart {
  readonly name: string;
  readonly value?: string;
  readonly filename?: string;
  readonly type?: string;
  readonly data?: Uint8Array;
}

export interface FuzzRoute {
  readonly name: string;
  readonly method: "GET" | "POST";
  /** Models to ask for (the route is fuzzed with each). */
  readonly models: readonly string[];
  readonly target: (model: string, stream: boolean) => string;
  readonly auth: "bearer" | "x-api-key" | "goog";
  readonly body: "json" | "multipart" | "none" | "upgrade";
  readonly json?: (model: string, stream: boolean) => Record<string, unknown>;
  readonly form?: (model: string) => FormPart[];
  readonly headers?: readonly [string, string][];
}

export interface FuzzCase {
  /** What was sent, for the failure message. */
  readonly label: string;
  readonly send: RawSend;
}

/** Models per route family; an empty list leaves the route out. */
export interface RouteModels {
  readonly chat: readonly string[];
  readonly messages: readonly string[];
  readonly generate: readonly string[];
  readonly responses: readonly string[];
  readonly embeddings: readonly string[];
  readonly images: readonly string[];
  readonly edits: readonly string[];
  readonly transcriptions: readonly string[];
  readonly speech: readonly string[];
  readonly rerank: readonly string[];
  readonly moderations: readonly string[];
  readonly videos: readonly string[];
  readonly realtime: readonly string[];
  /** GET routes (models, billing, video jobs) and unknown paths. */
  readonly gets: boolean;
}

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8]);
const say = [{ role: "user", content: "hello" }];

/** Every route the gateway serves, with a valid seed request each. */
export function fuzzRoutes(m: RouteModels): FuzzRoute[] {
  const openai = (name: string, path: string, models: readonly string[], json: FuzzRoute["json"]): FuzzRoute =>
    ({ name, method: "POST", models, target: () => path, auth: "bearer", body: "json", json });
  const routes: FuzzRoute[] = [
    openai("chat-completions", "/v1/chat/completions", m.chat, (model, stream) => ({ model, messages: say, stream, max_tokens: 16 })),
    openai("responses", "/v1/responses", m.responses, (model, stream) => ({ model, input: "hello", stream })),
    {
      name: "messages", method: "POST", models: m.messages, target: () => "/v1/messages", auth: "x-api-key", body: "json",
      headers: [["anthropic-version", "2023-06-01"]],
      json: (model, stream) => ({ model, max_tokens: 16, messages: say, stream }),
    },
    {
      name: "generate-content", method: "POST", models: m.generate, auth: "goog", body: "json",
      target: (model, stream) => `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
      json: () => ({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
    },
    openai("embeddings", "/v1/embeddings", m.embeddings, (model) => ({ model, input: "hello" })),
    openai("images", "/v1/images/generations", m.images, (model) => ({ model, prompt: "a fox" })),
    openai("speech", "/v1/audio/speech", m.speech, (model) => ({ model, input: "hello", voice: "alloy" })),
    openai("rerank", "/v1/rerank", m.rerank, (model) => ({ model, query: "q", documents: ["a", "b"] })),
    openai("moderations", "/v1/moderations", m.moderations, (model) => ({ model, input: "hello" })),
    openai("videos", "/v1/videos", m.videos, (model) => ({ model, prompt: "a fox", seconds: "8" })),
    {
      name: "image-edits", method: "POST", models: m.edits, target: () => "/v1/images/edits", auth: "bearer", body: "multipart",
      form: (model) => [{ name: "image", filename: "a.png", type: "image/png", data: png }, { name: "prompt", value: "a hat" }, { name: "model", value: model }],
    },
    {
      name: "transcriptions", method: "POST", models: m.transcriptions, target: () => "/v1/audio/transcriptions", auth: "bearer", body: "multipart",
      form: (model) => [{ name: "model", value: model }, { name: "file", filename: "a.wav", type: "audio/wav", data: png }],
    },
    {
      name: "videos-upload", method: "POST", models: m.videos, target: () => "/v1/videos", auth: "bearer", body: "multipart",
      form: (model) => [{ name: "model", value: model }, { name: "prompt", value: "a fox" }, { name: "seconds", value: "8" },
        { name: "input_reference", filename: "first.png", type: "image/png", data: png }],
    },
    {
      name: "realtime", method: "GET", models: m.realtime, auth: "bearer", body: "upgrade",
      target: (model) => `/v1/realtime?model=${encodeURIComponent(model)}`,
    },
  ];
  if (m.gets) {
    const get = (name: string, path: string, auth: FuzzRoute["auth"] = "bearer"): FuzzRoute =>
      ({ name, method: "GET", models: [""], target: () => path, auth, body: "none" });
    routes.push(
      get("models", "/v1/models"), get("gemini-models", "/v1beta/models", "goog"),
      get("billing-subscription", "/v1/dashboard/billing/subscription"), get("billing-usage", "/dashboard/billing/usage"),
      get("video-job", "/v1/videos/video_unknown1"), get("video-content", "/v1/videos/video_unknown1/content"),
    );
  }
  return routes.filter((r) => r.models.length > 0);
}

type JsonMutation =
  | { kind: "none" }
  | { kind: "set"; key: string; value: unknown }
  | { kind: "delete"; key: string }
  | { kind: "replace"; value: unknown }
  | { kind: "truncate"; at: number }
  | { kind: "flip"; at: number[]; byte: number }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "empty" };

const fieldName = fc.oneof(
  fc.constantFrom("model", "messages", "stream", "max_tokens", "input", "prompt", "contents", "n", "seconds", "documents",
    "tools", "stream_options", "metadata", "system", "size", "voice", "query", "top_n", "temperature", "prompt_cache_key",
    "generationConfig", "thinking", "reasoning_effort", "tool_choice", "response_format", "input_reference", "image"),
  fc.string({ maxLength: 12 }),
);

const jsonMutation: fc.Arbitrary<JsonMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "none" as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("set" as const), key: fieldName, value: fc.jsonValue({ maxDepth: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), key: fieldName }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("replace" as const), value: fc.jsonValue({ maxDepth: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: fc.nat({ max: 400 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("flip" as const), at: fc.array(fc.nat({ max: 400 }), { minLength: 1, maxLength: 4 }), byte: fc.nat({ max: 255 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("bytes" as const), bytes: fc.uint8Array({ maxLength: 200 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "empty" as const }) },
);

function mutateJson(seed: Record<string, unknown>, m: JsonMutation): Buffer {
  switch (m.kind) {
    case "none": return Buffer.from(JSON.stringify(seed));
    case "set": return Buffer.from(JSON.stringify({ ...seed, [m.key]: m.value }));
    case "delete": {
      const copy = { ...seed };
      delete copy[m.key];
      return Buffer.from(JSON.stringify(copy));
    }
    case "replace": return Buffer.from(JSON.stringify(m.value) ?? "");
    case "truncate": {
      const b = Buffer.from(JSON.stringify(seed));
      return b.subarray(0, m.at % (b.length + 1));
    }
    case "flip": {
      const b = Buffer.from(JSON.stringify(seed));
      for (const at of m.at) b[at % b.length] = m.byte;
      return b;
    }
    case "bytes": return Buffer.from(m.bytes);
    case "empty": return Buffer.alloc(0);
  }
}

type FormMutation =
  | { kind: "none" }
  | { kind: "truncate"; at: number }
  | { kind: "no-closing" }
  | { kind: "no-final-crlf" }
  | { kind: "garble-headers"; part: number }
  | { kind: "wrong-boundary" }
  | { kind: "no-boundary-param" }
  | { kind: "quoted-boundary" }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "drop-part"; part: number }
  | { kind: "extra-parts"; parts: FormPart[] }
  | { kind: "set-field"; name: string; value: string };

const formPart: fc.Arbitrary<FormPart> = fc.oneof(
  fc.record({ name: fieldName, value: fc.string({ maxLength: 40 }) }),
  fc.record({ name: fieldName, filename: fc.string({ maxLength: 20 }), type: fc.constantFrom("image/png", "audio/wav", "application/octet-stream", ""), data: fc.uint8Array({ maxLength: 300 }) }),
);

const formMutation: fc.Arbitrary<FormMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "none" as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: fc.nat({ max: 1000 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "no-closing" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "no-final-crlf" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("garble-headers" as const), part: fc.nat({ max: 5 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "wrong-boundary" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "no-boundary-param" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "quoted-boundary" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("insert" as const), at: fc.nat({ max: 1000 }), bytes: fc.uint8Array({ minLength: 1, maxLength: 30 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop-part" as const), part: fc.nat({ max: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("extra-parts" as const), parts: fc.array(formPart, { maxLength: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("set-field" as const), name: fieldName, value: fc.string({ maxLength: 40 }) }) },
);

function encodeForm(parts: readonly FormPart[], boundary: string): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    const disposition = p.filename !== undefined
      ? `form-data; name="${p.name}"; filename="${p.filename}"` : `form-data; name="${p.name}"`;
    const type = p.filename !== undefined ? `Content-Type: ${p.type || "application/octet-stream"}\r\n` : "";
    out.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(p.data ?? p.value ?? ""), Buffer.from("\r\n"));
  }
  out.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(out);
}

/** The form's bytes and the Content-Type it is sent with. */
function mutateForm(seed: FormPart[], boundary: string, m: FormMutation): { body: Buffer; type: string } {
  let parts = seed;
  let type = `multipart/form-data; boundary=${boundary}`;
  if (m.kind === "drop-part") parts = seed.filter((_, i) => i !== m.part % seed.length);
  if (m.kind === "extra-parts") parts = [...seed, ...m.parts];
  if (m.kind === "set-field") parts = [{ name: m.name, value: m.value }, ...seed];
  if (m.kind === "wrong-boundary") type = `multipart/form-data; boundary=${boundary}x`;
  if (m.kind === "no-boundary-param") type = "multipart/form-data";
  if (m.kind === "quoted-boundary") type = `multipart/form-data; boundary="${boundary}"`;
  let body = encodeForm(parts, boundary);
  const closing = Buffer.from(`--${boundary}--\r\n`);
  switch (m.kind) {
    case "truncate": body = body.subarray(0, m.at % (body.length + 1)); break;
    case "no-closing": body = body.subarray(0, body.length - closing.length); break;
    case "no-final-crlf": body = body.subarray(0, body.length - 2); break;
    case "garble-headers": {
      const text = body.toString("latin1");
      let at = -1;
      for (let i = 0; i <= m.part % parts.length; i++) at = text.indexOf("Content-Disposition", at + 1);
      if (at !== -1) body = Buffer.concat([body.subarray(0, at), Buffer.from("X-Nothing"), body.subarray(at + 19)]);
      break;
    }
    case "insert": {
      const at = m.at % (body.length + 1);
      body = Buffer.concat([body.subarray(0, at), Buffer.from(m.bytes), body.subarray(at)]);
      break;
    }
  }
  return { body, type };
}

/** A printable header value (no CR/LF: node refuses those on the way in, tested apart). */
const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });
const headerName = fc.oneof(
  fc.constantFrom("anthropic-version", "anthropic-beta", "x-gateway-session-id", "accept", "accept-encoding", "x-goog-api-key",
    "openai-beta", "x-api-key", "authorization", "content-encoding", "expect", "x-forwarded-for", "user-agent", "range"),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/),
);

type Framing =
  | { kind: "length" }
  | { kind: "chunked"; cuts: number[] }
  | { kind: "split"; cuts: number[] }
  | { kind: "cut-short"; keep: number };

const framing: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: "length" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("chunked" as const), cuts: fc.array(fc.nat({ max: 600 }), { maxLength: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("split" as const), cuts: fc.array(fc.nat({ max: 800 }), { maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cut-short" as const), keep: fc.nat({ max: 600 }) }) },
);

export interface CaseOptions {
  /** The valid access token. */
  readonly token: string;
  /** Extra headers sent on every request (e.g. the upstream misbehaviour to ask for). */
  readonly always?: fc.Arbitrary<[string, string][]>;
}

/** One request: a route and model, a (mutated) body, headers, credentials and framing. */
export function fuzzCase(routes: readonly FuzzRoute[], opts: CaseOptions): fc.Arbitrary<FuzzCase> {
  return fc.record({
    // Multipart routes weigh more: their parser is the one most ways a body can be broken.
    route: fc.oneof(...routes.map((r) => ({ weight: r.body === "multipart" ? 3 : 1, arbitrary: fc.constant(r) }))),
    pick: fc.nat(),
    stream: fc.boolean(),
    credential: fc.oneof(
      { weight: 12, arbitrary: fc.constant("valid") },
      { weight: 1, arbitrary: fc.constantFrom("invalid", "missing", "other-header") },
    ),
    contentType: fc.oneof(
      { weight: 6, arbitrary: fc.constant("right") },
      { weight: 1, arbitrary: fc.constantFrom("none", "text/plain", "application/json; charset=utf-16", "multipart/form-data", "application/x-www-form-urlencoded") },
      { weight: 1, arbitrary: headerValue },
    ),
    json: jsonMutation,
    form: formMutation,
    boundary: fc.stringMatching(/^[A-Za-z0-9'()+_,-]{1,40}$/),
    extra: fc.array(fc.tuple(headerName, headerValue), { maxLength: 3 }),
    always: opts.always ?? fc.constant([] as [string, string][]),
    upgrade: fc.record({
      upgrade: fc.constantFrom("websocket", "websocket", "h2c", "none"),
      key: fc.oneof(fc.constant("dGhlIHNhbXBsZSBub25jZQ=="), fc.constant(""), headerValue),
      version: fc.constantFrom("13", "13", "8", "99", ""),
    }),
    framing,
  }).map((c) => {
    const route = c.route;
    const model = route.models[c.pick % route.models.length];
    const headers: [string, string][] = [["host", "127.0.0.1"]];
    const credential = c.credential === "valid" ? opts.token : c.credential === "invalid" ? "sk-gw-nobody-000000000000" : undefined;
    const authHeader = c.credential === "other-header" ? "x-nothing" : route.auth === "bearer" ? "authorization"
      : route.auth === "x-api-key" ? "x-api-key" : "x-goog-api-key";
    if (credential !== undefined || c.credential === "other-header") {
      headers.push([authHeader, authHeader === "authorization" ? `Bearer ${credential ?? opts.token}` : credential ?? opts.token]);
    }
    headers.push(...(route.headers ?? []), ...c.extra, ...c.always);
    let body: Buffer | undefined;
    let type: string | undefined;
    let label = `${route.name} ${model} stream=${c.stream} credential=${c.credential}`;
    if (route.body === "json") {
      body = mutateJson(route.json!(model, c.stream), c.json);
      type = "application/json";
      label += ` json=${JSON.stringify(c.json).slice(0, 160)}`;
    } else if (route.body === "multipart") {
      const form = mutateForm(route.form!(model), c.boundary, c.form);
      body = form.body;
      type = form.type;
      label += ` form=${JSON.stringify(c.form).slice(0, 160)}`;
    }
    if (route.body === "upgrade") {
      if (c.upgrade.upgrade !== "none") headers.push(["upgrade", c.upgrade.upgrade], ["connection", "Upgrade"]);
      if (c.upgrade.key) headers.push(["sec-websocket-key", c.upgrade.key]);
      if (c.upgrade.version) headers.push(["sec-websocket-version", c.upgrade.version]);
      label += ` upgrade=${JSON.stringify(c.upgrade)}`;
    }
    if (type !== undefined && c.contentType !== "right") type = c.contentType === "none" ? undefined : c.contentType;
    if (type !== undefined) headers.push(["content-type", type]);
    label += ` content-type=${JSON.stringify(type)} headers=${JSON.stringify([...c.extra, ...c.always])} framing=${c.framing.kind}`;
    const target = route.target(model, c.stream);
    return { label, send: frame(route.method, target, headers, body, c.framing) };
  });
}

/** The bytes to send for a framing; a cut-short body declares more than it sends, then the
 * client half-closes. */
function frame(method: string, target: string, headers: [string, string][], body: Buffer | undefined, f: Framing): RawSend {
  const payload = body ?? Buffer.alloc(0);
  if (method === "GET" && payload.length === 0) return { pieces: [requestBytes(method, target, headers)] };
  switch (f.kind) {
    case "chunked":
      return { pieces: [requestBytes(method, target, [...headers, ["transfer-encoding", "chunked"]], chunked(payload, f.cuts))] };
    case "cut-short": {
      const keep = payload.subarray(0, f.keep % (payload.length + 1));
      return { pieces: [requestBytes(method, target, [...headers, ["content-length", String(payload.length + 1)]], keep)], then: "end" };
    }
    case "split": {
      const bytes = requestBytes(method, target, [...headers, ["content-length", String(payload.length)]], payload);
      const at = [...new Set(f.cuts.map((c) => c % bytes.length))].sort((a, b) => a - b);
      const pieces: Buffer[] = [];
      let from = 0;
      for (const to of [...at, bytes.length]) {
        if (to > from) pieces.push(bytes.subarray(from, to));
        from = Math.max(from, to);
      }
      return { pieces };
    }
    case "length":
      return { pieces: [requestBytes(method, target, [...headers, ["content-length", String(payload.length)]], payload)] };
  }
}
