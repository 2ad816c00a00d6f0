// Test-only "kind fronts": small servers that speak a provider kind's wire towards the
// gateway and let a first-party fake (fake-anthropic, fake-openai) answer behind them, so a
// replay through a kind gets the very answers the first-party replay gets. Each front checks
// the kind's credentials as the provider does, takes the kind's URL and body, forwards the
// request in the first-party API's form (the one the fake records, so a test reads what the
// kind made of the client's request), and frames the answer as the provider does.
// - Bedrock: SigV4 checked (fake-bedrock's checker), /model/{id}/invoke,
//   /invoke-with-response-stream and /count-tokens; answers re-framed into event-stream
//   `chunk` frames, counts into {"inputTokens"}.
// - Azure OpenAI: the `api-key` header, /openai/deployments/{d}/chat/completions?api-version=;
//   streams open with Azure's choice-less prompt-filter chunk.
// - DeepSeek: Bearer keys at /chat/completions.
// (Vertex needs no front: fake-vertex forwards to fake-anthropic and fake-gemini itself.)

import http from "node:http";
import { chunkFrame, countedBody, checked, bedrockError, type AccessKey } from "./fake-bedrock.js";
import { dataOf, sseEvents } from "./client-wire.js";
import { bearerKey, sendJson, sendOpenAIError, startFakeServer, type BaseReceived, type FakeServer } from "./fake-server.js";

/** What the fake behind a front answered: status, headers and the whole body. */
interface Answered {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Posts `body` to `url` and reads the whole answer (the fakes answer at once). */
function post(url: URL, headers: http.OutgoingHttpHeaders, body: string): Promise<Answered> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST", agent: false,
      headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Relays an answer as it came (but for the framing headers the relay sets anew). */
function relay(res: http.ServerResponse, a: Answered, extra: http.OutgoingHttpHeaders = {}, prefix = ""): void {
  const { "content-length": _l, connection: _c, "transfer-encoding": _t, ...rest } = a.headers;
  res.writeHead(a.status, { ...rest, ...extra });
  res.end(prefix === "" ? a.body : Buffer.concat([Buffer.from(prefix), a.body]));
}

export interface BedrockFrontOptions {
  readonly accessKey: AccessKey;
  /** The fake Anthropic that answers, and the key it takes. */
  readonly anthropicUrl: string;
  readonly anthropicKey: string;
}

const BEDROCK_PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|count-tokens)$/;

/** A Bedrock Runtime (Claude through InvokeModel) in front of a fake Anthropic. */
export function startBedrockFront(opts: BedrockFrontOptions): Promise<FakeServer<BaseReceived>> {
  const keys = new Map([[opts.accessKey.accessKeyId, opts.accessKey]]);
  return startFakeServer((r, res) => {
    void (async () => {
      const auth = await checked(r, {}, keys);
      if (auth !== "signature-ok") return bedrockError(res, 403, "InvalidSignatureException", `fake front: ${auth}`);
      const m = BEDROCK_PATH.exec(r.path);
      if (r.method !== "POST" || !m) return bedrockError(res, 404, "UnknownOperationException", "");
      const model = decodeURIComponent(m[1]);
      const operation = m[2];
      const counted = operation === "count-tokens";
      const body = counted ? countedBody(r.body) : r.body;
      if (body.anthropic_version !== "bedrock-2023-05-31") return bedrockError(res, 400, "ValidationException", "Malformed input request: #: required key [anthropic_version] not found");
      for (const key of ["model", "stream"]) {
        if (key in body) return bedrockError(res, 400, "ValidationException", `Malformed input request: #: extraneous key [${key}] is not permitted`);
      }
      // Back to the Anthropic API's form: the model from the URL, streaming from the
      // operation, betas as the header. A count's body names an output cap InvokeModel
      // needs and the Messages count does not take.
      const { anthropic_version: _v, anthropic_beta: betas, ...rest } = body;
      const { max_tokens: _m, ...countable } = rest;
      const messages = counted ? { ...countable, model } : { ...rest, model, ...(operation === "invoke-with-response-stream" ? { stream: true } : {}) };
      const headers = {
        "x-api-key": opts.anthropicKey, "anthropic-version": "2023-06-01",
        ...(Array.isArray(betas) ? { "anthropic-beta": betas.join(",") } : {}),
      };
      const a = await post(new URL(counted ? "/v1/messages/count_tokens" : "/v1/messages", opts.anthropicUrl), headers, JSON.stringify(messages));
      const ids = { "x-amzn-requestid": "front-request-id" };
      if (a.status !== 200) return bedrockError(res, a.status, a.status >= 500 ? "InternalServerException" : "ValidationException", a.body.toString("utf8"));
      if (counted) return sendJson(res, 200, { inputTokens: (JSON.parse(a.body.toString("utf8")) as { input_tokens: number }).input_tokens }, ids);
      if (operation === "invoke") return sendJson(res, 200, JSON.parse(a.body.toString("utf8")), ids);
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", ...ids });
      // Each Anthropic event in a chunk frame (Bedrock sends no pings), the metrics on the
      // last; written in pieces that split frames, as TCP may.
      const usage = { input: 0, output: 0 };
      const frames = sseEvents(a.body.toString("utf8")).map(dataOf).filter((e) => e.type !== "ping").map((e) => {
        if (e.type === "message_start") usage.input = e.message.usage.input_tokens;
        if (e.type === "message_delta") usage.output = e.usage.output_tokens;
        const metrics = { inputTokenCount: usage.input, outputTokenCount: usage.output, invocationLatency: 42, firstByteLatency: 12 };
        return chunkFrame(e.type === "message_stop" ? { ...e, "amazon-bedrock-invocationMetrics": metrics } : e);
      });
      const all = Buffer.concat(frames);
      for (let i = 0; i < all.length; i += 37) res.write(all.subarray(i, i + 37));
      res.end();
    })().catch((err: Error) => { if (!res.headersSent) bedrockError(res, 500, "InternalServerException", `fake front: ${err.message}`); else res.destroy(); });
  });
}

export interface OpenAIFrontOptions {
  /** The key the front takes from the gateway. */
  readonly key: string;
  /** The fake OpenAI that answers, and the key it takes. */
  readonly openaiUrl: string;
  readonly openaiKey: string;
}

const AZURE_CHAT = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;

/** Azure's first stream chunk: no choices, the prompt's content-filter results. */
const AZURE_FIRST_CHUNK = `data: ${JSON.stringify({
  id: "", object: "", created: 0, model: "", choices: [],
  prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: "safe" } } }],
})}\n\n`;

/** An Azure OpenAI resource (deployment URLs under `apiVersion`) in front of a fake OpenAI. */
export function startAzureFront(opts: OpenAIFrontOptions & { readonly apiVersion: string }): Promise<FakeServer<BaseReceived>> {
  return startFakeServer((r, res) => {
    if (r.headers["api-key"] !== opts.key) return sendJson(res, 401, { error: { code: "401", message: "Access denied due to invalid subscription key." } });
    const url = new URL(r.path, "http://azure.invalid");
    const m = AZURE_CHAT.exec(url.pathname);
    if (r.method !== "POST" || !m || url.searchParams.get("api-version") !== opts.apiVersion) {
      return sendJson(res, 404, { error: { code: "404", message: "Resource not found" } });
    }
    // The deployment is the model; OpenAI's API takes it in the body.
    const body: Record<string, unknown> = { ...r.body, model: decodeURIComponent(m[1]) };
    void post(new URL("/v1/chat/completions", opts.openaiUrl), { authorization: `Bearer ${opts.openaiKey}` }, JSON.stringify(body)).then(
      (a) => relay(res, a, { "apim-request-id": "front-apim-id" }, a.status === 200 && body.stream === true ? AZURE_FIRST_CHUNK : ""),
      () => res.destroy(),
    );
  });
}

/** DeepSeek's API (chat completions at /chat/completions) in front of a fake OpenAI. */
export function startDeepSeekFront(opts: OpenAIFrontOptions): Promise<FakeServer<BaseReceived>> {
  return startFakeServer((r, res) => {
    if (bearerKey(r.headers) !== opts.key) return sendOpenAIError(res, 401, "Authentication Fails, Your api key is invalid", "authentication_error", "invalid_request_error");
    if (r.method !== "POST" || r.path !== "/chat/completions") return sendOpenAIError(res, 404, "Not Found", "invalid_request_error", "invalid_request_error");
    void post(new URL("/v1/chat/completions", opts.openaiUrl), { authorization: `Bearer ${opts.openaiKey}` }, r.raw.toString("utf8")).then(
      (a) => relay(res, a), () => res.destroy(),
    );
  });
}
