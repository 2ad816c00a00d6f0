// A fake Azure OpenAI resource speaking Azure's real wire format: deployment URLs
// (/openai/deployments/{deployment}/…?api-version=…) and the v1 API (/openai/v1/…, the
// deployment named in the body's model), the `api-key` header (or an Entra bearer token),
// Azure's error bodies ({"error":{"code":"401",…}}, "DeploymentNotFound", "404"), Azure's
// stream quirks (a first chunk with no choices and prompt_filter_results; content filter
// results on every choice), and its response headers (apim-request-id, x-ms-region,
// x-ms-deployment-name), and video jobs on the v1 API (/openai/v1/videos: create, status,
// content). Anything else is refused as Azure refuses it.

import type http from "node:http";
import { fakeVideo, type VideoJobScript } from "./fake-openai.js";
import { sendJson, sendLines, startFakeServer, type BaseReceived, type FakeServer } from "./fake-server.js";

/** What the fake received, with what it read from the URL. */
export interface AzureReceived extends BaseReceived {
  /** The URL's path without the query. */
  readonly pathname: string;
  /** The api-version query value, when there is one. */
  readonly apiVersion: string | null;
  /** The `api-key` header, or "" when there is none. */
  readonly apiKey: string;
  /** The deployment the request addressed (from the URL, or the body's model on v1). */
  readonly deployment: string | undefined;
}

/** How the fake answers a key: refused (Azure's 401), forbidden (Azure's 403 of network
 * rules), or rate limited (Azure's 429 of a deployment's token limit). */
export type AzureKeyFault = "invalid_key" | "forbidden" | "rate_limited";

export interface FakeAzureOptions {
  /** api-key values the resource accepts. */
  readonly keys: readonly string[];
  /** Entra access tokens it accepts as `Authorization: Bearer`. */
  readonly tokens?: readonly string[];
  /** Whether it accepts a bearer token not in `tokens` (a fake Entra's current tokens). */
  readonly acceptsToken?: (token: string) => boolean;
  /** Its deployments. */
  readonly deployments: readonly string[];
  /** The api-versions its deployment URLs take. */
  readonly apiVersions: readonly string[];
  /** Keys answered with that fault, read per request (a test may change it). */
  readonly keyFaults?: ReadonlyMap<string, AzureKeyFault>;
  /** The answer's text. */
  readonly text?: string;
  /** What `GET /openai/v1/videos/{id}` says of a job, read per request; default completed. */
  readonly videoJob?: (id: string) => VideoJobScript;
}

export type FakeAzure = FakeServer<AzureReceived>;

export const azureUsage = { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 };
export const azureEmbeddingUsage = { prompt_tokens: 6, total_tokens: 6 };

/** Operations Azure serves per deployment (the rest only on v1). */
const DEPLOYMENT_URL = /^\/openai\/deployments\/([^/]+)(\/chat\/completions|\/embeddings)$/;
const V1_URL = /^\/openai\/v1(\/chat\/completions|\/embeddings|\/responses)$/;

export function startFakeAzure(opts: FakeAzureOptions): Promise<FakeAzure> {
  return startFakeServer<AzureReceived>((r, res, seq) => answer(r, res, seq, opts), {
    describe: (base) => {
      const url = new URL(base.path, "http://azure.invalid");
      const m = DEPLOYMENT_URL.exec(url.pathname);
      const apiKey = typeof base.headers["api-key"] === "string" ? base.headers["api-key"] : "";
      const deployment = m ? decodeURIComponent(m[1]) : typeof base.body.model === "string" ? base.body.model : undefined;
      return { ...base, pathname: url.pathname, apiVersion: url.searchParams.get("api-version"), apiKey, deployment };
    },
  });
}

/** Azure's error body: `code` is a string (a status or a name). */
function sendAzureError(res: http.ServerResponse, status: number, code: string, message: string, headers: http.OutgoingHttpHeaders = {}): void {
  sendJson(res, status, { error: { code, message } }, { "apim-request-id": "f2c1e7a4-0000-4000-8000-000000000000", ...headers });
}

const notFound = (res: http.ServerResponse) => sendAzureError(res, 404, "404", "Resource not found");

function answer(r: AzureReceived, res: http.ServerResponse, seq: number, opts: FakeAzureOptions): void {
  const bearer = typeof r.headers.authorization === "string" && r.headers.authorization.startsWith("Bearer ")
    ? r.headers.authorization.slice(7) : "";
  const byToken = bearer !== "" && ((opts.tokens ?? []).includes(bearer) || opts.acceptsToken?.(bearer) === true);
  if (bearer !== "" && !byToken) {
    // Azure's answer to a token that is not (or no longer) good.
    sendAzureError(res, 401, "401", "Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.");
    return;
  }
  if (!byToken && !opts.keys.includes(r.apiKey)) {
    sendAzureError(res, 401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.");
    return;
  }
  const fault = opts.keyFaults?.get(byToken ? bearer : r.apiKey);
  if (fault === "invalid_key") {
    sendAzureError(res, 401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.");
    return;
  }
  if (fault === "forbidden") {
    sendAzureError(res, 403, "403", "Access denied due to Virtual Network/Firewall rules.");
    return;
  }
  if (fault === "rate_limited") {
    sendAzureError(res, 429, "429", "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second.", { "retry-after": "1" });
    return;
  }
  if (r.pathname === "/openai/v1/videos" || r.pathname.startsWith("/openai/v1/videos/")) return answerVideo(r, res, seq, opts);
  const deploymentUrl = DEPLOYMENT_URL.exec(r.pathname);
  const v1 = V1_URL.exec(r.pathname);
  let operation: string;
  if (deploymentUrl) {
    // A deployment URL without a known api-version is not found (Azure's 404).
    if (r.apiVersion === null || !opts.apiVersions.includes(r.apiVersion)) return notFound(res);
    operation = deploymentUrl[2];
  } else if (v1) {
    // The v1 API takes no dated api-version.
    if (r.apiVersion !== null && r.apiVersion !== "preview") {
      sendAzureError(res, 400, "BadRequest", "API version not supported");
      return;
    }
    operation = v1[1];
  } else {
    return notFound(res);
  }
  if (r.deployment === undefined || !opts.deployments.includes(r.deployment)) {
    sendAzureError(res, 404, "DeploymentNotFound", "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.");
    return;
  }
  const head = {
    "apim-request-id": `0b8e3c2a-0000-4000-8000-${String(seq).padStart(12, "0")}`,
    "x-ms-region": "Sweden Central", "x-ms-deployment-name": r.deployment, "azureml-model-session": "d123-20251101000000",
  };
  if (operation === "/embeddings") {
    sendJson(res, 200, { object: "list", model: "text-embedding-3-small", data: [{ object: "embedding", index: 0, embedding: [0.25, -0.5] }], usage: azureEmbeddingUsage }, head);
    return;
  }
  const text = opts.text ?? "Hello from Azure.";
  if (operation === "/responses") {
    sendJson(res, 200, {
      id: `resp_azure${seq}`, object: "response", created_at: 1_760_000_000, status: "completed", model: r.deployment,
      output: [{ id: `msg_azure${seq}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }],
      usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 },
    }, head);
    return;
  }
  const id = `chatcmpl-azure${seq}`;
  const filter = { hate: { filtered: false, severity: "safe" }, self_harm: { filtered: false, severity: "safe" }, sexual: { filtered: false, severity: "safe" }, violence: { filtered: false, severity: "safe" } };
  const model = "gpt-4o-mini-2024-07-18";
  if (r.body.stream !== true) {
    sendJson(res, 200, {
      id, object: "chat.completion", created: 1_760_000_000, model, system_fingerprint: "fp_azure",
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }],
      choices: [{ index: 0, finish_reason: "stop", logprobs: null, content_filter_results: filter, message: { role: "assistant", content: text, refusal: null } }],
      usage: azureUsage,
    }, head);
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", ...head });
  const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const base = { id, object: "chat.completion.chunk", created: 1_760_000_000, model, system_fingerprint: "fp_azure" };
  const lines = [
    // Azure's first chunk: no choices, the prompt's filter results.
    chunk({ id: "", object: "", created: 0, model: "", choices: [], prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }] }),
    chunk({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null, logprobs: null }] }),
    ...[text.slice(0, 6), text.slice(6)].map((piece) =>
      chunk({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null, logprobs: null, content_filter_results: filter }] })),
    chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop", logprobs: null, content_filter_results: {} }] }),
    ...(isObject(r.body.stream_options) && r.body.stream_options.include_usage === true ? [chunk({ ...base, choices: [], usage: azureUsage })] : []),
    "data: [DONE]\n\n",
  ];
  sendLines(res, lines);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Video jobs on the v1 API, as Sora on Azure serves them: the deployment named in the
 * create's `model` (JSON or multipart), then the job's status and its video by id. */
function answerVideo(r: AzureReceived, res: http.ServerResponse, seq: number, opts: FakeAzureOptions): void {
  if (r.apiVersion !== null && r.apiVersion !== "preview") {
    sendAzureError(res, 400, "BadRequest", "API version not supported");
    return;
  }
  if (r.method === "POST" && r.pathname === "/openai/v1/videos") {
    const field = (name: string) => r.body[name] ?? new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)`).exec(r.raw.toString("latin1"))?.[1];
    const deployment = field("model");
    if (typeof deployment !== "string" || !opts.deployments.includes(deployment)) {
      sendAzureError(res, 404, "DeploymentNotFound", "The API deployment for this resource does not exist.");
      return;
    }
    sendJson(res, 200, {
      id: `video_azure${seq}`, object: "video", model: deployment, status: "queued", progress: 0,
      seconds: String(field("seconds") ?? "4"), size: "1280x720", created_at: 1_760_000_000,
    }, { "apim-request-id": `0b8e3c2a-0000-4000-8000-${String(seq).padStart(12, "0")}` });
    return;
  }
  const m = /^\/openai\/v1\/videos\/([^/]+)(\/content)?$/.exec(r.pathname);
  if (r.method !== "GET" || !m) return notFound(res);
  if (m[2]) {
    res.writeHead(200, { "content-type": "video/mp4", "content-length": fakeVideo.length });
    res.end(fakeVideo);
    return;
  }
  const id = decodeURIComponent(m[1]);
  const job = opts.videoJob?.(id) ?? { status: "completed" };
  if ("destroy" in job) return void res.socket?.destroy();
  if ("httpError" in job) return sendAzureError(res, job.httpError, String(job.httpError), `fake video error ${job.httpError}`);
  const done = job.status === "completed" || job.status === "failed";
  sendJson(res, 200, {
    id, object: "video", model: "sora-2", status: job.status, progress: job.status === "completed" ? 100 : done ? 0 : 40,
    seconds: "4", size: "1280x720", created_at: 1_760_000_000, completed_at: done ? 1_760_000_100 : null,
    error: job.status === "failed" ? job.error ?? { code: "generation_failed", message: "The video could not be generated." } : null,
  });
}
