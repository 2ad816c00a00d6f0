// A fake Vertex AI: a Google OAuth token endpoint and the publisher-model endpoints, on
// one 127.0.0.1 server. The token endpoint verifies the service account's signed JWT as
// Google does (RS256 with the public half of a key pair made here, iss, aud = token_uri,
// scope, iat/exp) and issues short-lived tokens; the model endpoints check the Bearer
// token, the URL (project, location, publisher, model, method) and Vertex's body
// (anthropic_version, no model), then have the real-format fakes answer: Claude's
// rawPredict/streamRawPredict through fake-anthropic's /v1/messages, Gemini's methods
// through fake-gemini's. Google-shaped errors on cue.

import { generateKeyPairSync, verify } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bearerKey, sendJson, startFakeServer, type BaseReceived } from "./fake-server.js";

export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";
export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** A model request the fake received, with what its URL names. */
export interface VertexReceived extends BaseReceived {
  readonly project: string;
  readonly location: string;
  readonly publisher: string;
  readonly model: string;
  /** The model method: "rawPredict", "streamGenerateContent", … */
  readonly operation: string;
  readonly query: string;
  readonly token: string;
}

/** One token the fake issued, and the claims of the assertion it was issued for. */
export interface Mint {
  readonly token: string;
  readonly claims: Record<string, unknown>;
  readonly expiresAt: number;
}

/** A Google error the model endpoint answers instead of serving. */
export interface GoogleErrorScript {
  readonly status: number;
  /** google.rpc.Code name: PERMISSION_DENIED, RESOURCE_EXHAUSTED, … */
  readonly googleStatus: string;
  readonly message: string;
  /** An ErrorInfo reason in details. */
  readonly reason?: string;
}

export interface FakeVertexOptions {
  /** The project and location the fake serves; a request for others gets 403/404. */
  readonly project: string;
  /** Locations served (e.g. ["us-east5", "global"]). */
  readonly locations: readonly string[];
  /** Where Claude's and Gemini's answers come from (fake-anthropic, fake-gemini). */
  readonly anthropicUrl?: string;
  readonly anthropicKey?: string;
  readonly geminiUrl?: string;
  readonly geminiKey?: string;
  /** Seconds each issued token lives (Google: 3599). */
  readonly tokenLifetimeS?: number;
  /** The project_id the key file names; default `project`; null: none. */
  readonly keyFileProject?: string | null;
}

export interface FakeVertex {
  /** Base URL (channels[].base_url). */
  readonly url: string;
  /** The token endpoint, as the key file names it. */
  readonly tokenUri: string;
  /** The service-account key file written for this fake. */
  readonly keyFile: string;
  readonly clientEmail: string;
  readonly received: readonly VertexReceived[];
  readonly mints: Mint[];
  /** Token requests refused (each with the reason). */
  readonly refusals: string[];
  /** While true, the token endpoint refuses every assertion (400 invalid_grant). */
  refuseTokens: boolean;
  /** Per request: a Google error to answer, or undefined to serve. */
  script: ((r: VertexReceived) => GoogleErrorScript | undefined) | undefined;
  close(): Promise<void>;
}

const MODEL_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):([A-Za-z]+)$/;

function googleError(res: http.ServerResponse, status: number, googleStatus: string, message: string, reason?: string): void {
  const details = reason ? [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "googleapis.com" }] : undefined;
  sendJson(res, status, { error: { code: status, message, status: googleStatus, ...(details ? { details } : {}) } });
}

function b64urlJson(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
}

/** Forwards `body` to a real-format fake and relays its answer as it comes. */
function forward(target: URL, headers: http.OutgoingHttpHeaders, body: string, res: http.ServerResponse): void {
  const req = http.request(target, { method: "POST", headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) }, agent: false }, (up) => {
    const { "content-length": _l, connection: _c, "transfer-encoding": _t, ...rest } = up.headers;
    res.writeHead(up.statusCode ?? 502, rest);
    up.pipe(res);
  });
  req.on("error", () => { if (!res.headersSent) googleError(res, 503, "UNAVAILABLE", "backend unavailable"); else res.destroy(); });
  req.end(body);
}

export async function startFakeVertex(opts: FakeVertexOptions): Promise<FakeVertex> {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const clientEmail = "gateway@fake-project.iam.gserviceaccount.com";
  const lifetimeS = opts.tokenLifetimeS ?? 3599;
  const tokens = new Map<string, number>();
  const mints: Mint[] = [];
  const refusals: string[] = [];
  const control = { refuseTokens: false, script: undefined as FakeVertex["script"], tokenUri: "" };

  function token(raw: Buffer, res: http.ServerResponse): void {
    const form = new URLSearchParams(raw.toString("utf8"));
    const refuse = (why: string) => {
      refusals.push(why);
      sendJson(res, 400, { error: "invalid_grant", error_description: why });
    };
    if (form.get("grant_type") !== JWT_BEARER) return refuse(`grant_type ${form.get("grant_type")}`);
    const parts = (form.get("assertion") ?? "").split(".");
    if (parts.length !== 3) return refuse("assertion is not a JWT");
    const header = b64urlJson(parts[0]);
    const claims = b64urlJson(parts[1]);
    if (header.alg !== "RS256") return refuse(`alg ${String(header.alg)}`);
    if (!verify("RSA-SHA256", Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], "base64url"))) {
      return refuse("Invalid JWT Signature.");
    }
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== clientEmail) return refuse(`iss ${String(claims.iss)}`);
    if (claims.aud !== control.tokenUri) return refuse(`aud ${String(claims.aud)}`);
    if (typeof claims.scope !== "string" || !claims.scope.split(" ").includes(CLOUD_PLATFORM_SCOPE)) return refuse(`scope ${String(claims.scope)}`);
    if (typeof claims.iat !== "number" || typeof claims.exp !== "number") return refuse("no iat/exp");
    if (claims.iat > now + 60 || claims.exp <= now || claims.exp - claims.iat > 3600) return refuse("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.");
    if (control.refuseTokens) return refuse("Invalid JWT Signature.");
    const issued = `ya29.fake-${mints.length + 1}-${Math.random().toString(36).slice(2)}`;
    const expiresAt = Date.now() + lifetimeS * 1000;
    tokens.set(issued, expiresAt);
    mints.push({ token: issued, claims, expiresAt });
    sendJson(res, 200, { access_token: issued, expires_in: lifetimeS, token_type: "Bearer" });
  }

  function model(r: VertexReceived, res: http.ServerResponse): void {
    const expiry = tokens.get(r.token);
    if (expiry === undefined || Date.now() >= expiry) {
      return googleError(res, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "ACCESS_TOKEN_EXPIRED");
    }
    if (r.headers["x-goog-api-key"] !== undefined || r.headers["x-api-key"] !== undefined || r.headers["anthropic-version"] !== undefined) {
      return googleError(res, 400, "INVALID_ARGUMENT", "fake vertex: an API key or anthropic-version header was sent");
    }
    if (r.project !== opts.project) return googleError(res, 403, "PERMISSION_DENIED", `Permission denied on resource project ${r.project}.`, "IAM_PERMISSION_DENIED");
    if (!opts.locations.includes(r.location)) return googleError(res, 404, "NOT_FOUND", `location ${r.location} not served`);
    const scripted = control.script?.(r);
    if (scripted) return googleError(res, scripted.status, scripted.googleStatus, scripted.message, scripted.reason);
    if (r.publisher === "anthropic" && r.model === "count-tokens") {
      // Token counting is a model of its own; the model counted for is in the body.
      if (r.operation !== "rawPredict") return googleError(res, 404, "NOT_FOUND", `method ${r.operation}`);
      if (r.body.anthropic_version !== VERTEX_ANTHROPIC_VERSION) return googleError(res, 400, "INVALID_ARGUMENT", `anthropic_version ${String(r.body.anthropic_version)}`);
      if (typeof r.body.model !== "string") return googleError(res, 400, "INVALID_ARGUMENT", "model is required in the body");
      const { anthropic_version: _v, ...rest } = r.body;
      return forward(new URL("/v1/messages/count_tokens", opts.anthropicUrl), {
        "x-api-key": opts.anthropicKey ?? "", "anthropic-version": "2023-06-01",
      }, JSON.stringify(rest), res);
    }
    if (r.publisher === "anthropic") {
      const streamed = r.operation === "streamRawPredict";
      if (r.operation !== "rawPredict" && !streamed) return googleError(res, 404, "NOT_FOUND", `method ${r.operation}`);
      if (r.body.anthropic_version !== VERTEX_ANTHROPIC_VERSION) return googleError(res, 400, "INVALID_ARGUMENT", `anthropic_version ${String(r.body.anthropic_version)}`);
      if ("model" in r.body) return googleError(res, 400, "INVALID_ARGUMENT", "model is not allowed in the body");
      if ((r.body.stream === true) !== streamed) return googleError(res, 400, "INVALID_ARGUMENT", "stream does not match the method");
      const { anthropic_version: _v, ...rest } = r.body;
      return forward(new URL("/v1/messages", opts.anthropicUrl), {
        "x-api-key": opts.anthropicKey ?? "", "anthropic-version": "2023-06-01",
        ...(r.headers["anthropic-beta"] ? { "anthropic-beta": r.headers["anthropic-beta"] } : {}),
      }, JSON.stringify({ ...rest, model: r.model }), res);
    }
    if (r.publisher === "google") {
      if (!["generateContent", "streamGenerateContent", "countTokens"].includes(r.operation)) return googleError(res, 404, "NOT_FOUND", `method ${r.operation}`);
      if (r.operation === "streamGenerateContent" && r.query !== "?alt=sse") return googleError(res, 400, "INVALID_ARGUMENT", "fake vertex streams SSE only");
      return forward(new URL(`/v1beta/models/${r.model}:${r.operation}${r.query}`, opts.geminiUrl), { "x-goog-api-key": opts.geminiKey ?? "" }, r.raw.toString("utf8"), res);
    }
    return googleError(res, 404, "NOT_FOUND", `Publisher ${r.publisher} not found.`);
  }

  const server = await startFakeServer<VertexReceived>((r, res) => {
    if (r.path === "/token" && r.method === "POST") return token(r.raw, res);
    if (!r.model) return googleError(res, 404, "NOT_FOUND", `no route ${r.path}`);
    model(r, res);
  }, {
    describe: (base): VertexReceived => {
      const q = base.path.indexOf("?");
      const path = q === -1 ? base.path : base.path.slice(0, q);
      const m = MODEL_PATH.exec(path);
      return {
        ...base, query: q === -1 ? "" : base.path.slice(q), token: bearerKey(base.headers),
        project: m?.[1] ?? "", location: m?.[2] ?? "", publisher: m?.[3] ?? "", model: m ? decodeURIComponent(m[4]) : "", operation: m?.[5] ?? "",
      };
    },
  });
  control.tokenUri = `${server.url}/token`;
  const dir = mkdtempSync(join(tmpdir(), "fake-vertex-"));
  const keyFile = join(dir, "service-account.json");
  const keyProject = opts.keyFileProject === undefined ? opts.project : opts.keyFileProject;
  writeFileSync(keyFile, JSON.stringify({
    type: "service_account", ...(keyProject === null ? {} : { project_id: keyProject }), private_key_id: "0123456789abcdef",
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), client_email: clientEmail,
    client_id: "100000000000000000001", auth_uri: "https://accounts.google.com/o/oauth2/auth", token_uri: control.tokenUri,
  }, null, 2));

  const all = server.received;
  return {
    url: server.url, tokenUri: control.tokenUri, keyFile, clientEmail, mints, refusals,
    // Model requests only; token requests are in `mints` and `refusals`.
    get received() { return all.filter((r) => r.model !== ""); },
    get refuseTokens() { return control.refuseTokens; },
    set refuseTokens(v: boolean) { control.refuseTokens = v; },
    get script() { return control.script; },
    set script(s: FakeVertex["script"]) { control.script = s; },
    close: () => server.close(),
  };
}
