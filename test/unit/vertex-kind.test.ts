// Kind vertex's pure parts: a channel's settings (and the problems the config reports),
// the request made Vertex's for each operation, and Google's errors read into the
// channel protocol's shape and judged for key faults.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { stringify } from "yaml";
import { compileSource, ConfigError } from "../../src/config/index.js";
import { judgeKeyFault } from "../../src/providers/provider.js";
import type { WireRequest } from "../../src/providers/kind.js";
import type { Channel } from "../../src/runtime/types.js";
import { vertexAnswer, vertexKeyFaults } from "../../src/providers/vertex/errors.js";
import { vertexRequest } from "../../src/providers/vertex/request.js";
import { compileVertex } from "../../src/providers/vertex/settings.js";

const dir = mkdtempSync(join(tmpdir(), "vertex-kind-"));
const pem = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();

function keyFile(name: string, fields: Record<string, unknown>): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(fields));
  return file;
}

const good = keyFile("good.json", {
  type: "service_account", project_id: "from-key", private_key: pem, client_email: "sa@from-key.iam.gserviceaccount.com",
  token_uri: "https://oauth2.googleapis.com/token",
});
const noProject = keyFile("no-project.json", { type: "service_account", private_key: pem, client_email: "sa@x.iam.gserviceaccount.com" });
const userCreds = keyFile("user.json", { type: "authorized_user", client_id: "x", client_secret: "y", refresh_token: "z" });
const badKey = keyFile("bad-key.json", { type: "service_account", private_key: "not a key", client_email: "sa@x.iam.gserviceaccount.com" });

describe("vertex settings", () => {
  test("region and key file: project from the key file, Google's regional host, the file as the one key", () => {
    const c = compileVertex({ name: "v", region: "us-east5", credentials_file: good }, {});
    assert.deepEqual(c.problems, []);
    assert.deepEqual(c.settings, { region: "us-east5", project: "from-key", credentialsFile: good });
    assert.deepEqual(c.keys, [good]);
    assert.equal(c.baseUrl, "https://us-east5-aiplatform.googleapis.com");
  });

  test("global has no regional prefix; project and base_url as given win", () => {
    assert.equal(compileVertex({ name: "v", region: "global", credentials_file: good }, {}).baseUrl, "https://aiplatform.googleapis.com");
    const c = compileVertex({ name: "v", region: "global", project: "mine", base_url: "http://127.0.0.1:9", credentials_file: good }, {});
    assert.equal(c.settings.project, "mine");
    assert.equal(c.baseUrl, "http://127.0.0.1:9");
  });

  test("GOOGLE_APPLICATION_CREDENTIALS when credentials_file is absent", () => {
    const c = compileVertex({ name: "v", region: "global" }, { GOOGLE_APPLICATION_CREDENTIALS: good });
    assert.deepEqual(c.problems, []);
    assert.deepEqual(c.keys, [good]);
  });

  test("problems name the key: region, credentials, project, a file that is no service-account key, other kinds' settings", () => {
    const problems = (raw: Parameters<typeof compileVertex>[0]) => compileVertex(raw, {}).problems.join("\n");
    assert.match(problems({ name: "v", credentials_file: good }), /region is required/);
    assert.match(problems({ name: "v", region: "global" }), /credentials_file is required .*GOOGLE_APPLICATION_CREDENTIALS/);
    assert.match(problems({ name: "v", region: "global", credentials_file: noProject }), /project is required.*no project_id/);
    assert.equal(problems({ name: "v", region: "global", project: "p", credentials_file: noProject }), "");
    assert.match(problems({ name: "v", region: "global", credentials_file: userCreds }), /not a service-account key.*authorized_user/);
    assert.match(problems({ name: "v", region: "global", credentials_file: badKey }), /private_key that is not a PEM private key/);
    assert.match(problems({ name: "v", region: "global", credentials_file: join(dir, "missing.json") }), /cannot be read \(ENOENT\)/);
    assert.match(problems({ name: "v", region: "global", credentials_file: good, api_version: "x" }), /api_version is not a setting of kind vertex/);
    assert.match(problems({ name: "v", region: "global", credentials_file: good, keys: ["sk"] }), /keys is not used by kind vertex/);
  });

  test("the config reports them at the channel, and takes a gemini protocol but not openai", () => {
    const yaml = (channel: Record<string, unknown>) => stringify({
      groups: { default: { multiplier: 1 } }, users: { alice: { credit: 1, groups: ["default"] } },
      tokens: [{ name: "t", key: "sk-t", user: "alice", group: "default" }],
      channels: [{ name: "vx", kind: "vertex", groups: ["default"], models: ["m"], ...channel }],
      models: { m: { price: { input: 1, output: 1 } } },
    });
    const compile = (channel: Record<string, unknown>) => compileSource(yaml(channel), { path: join(dir, "gateway.yaml"), env: {}, generation: 1 });
    const ok = compile({ region: "global", protocol: "gemini", credentials_file: "good.json" }).runtime;
    const vx = ok.channels.get("vx")!;
    assert.equal(vx.protocol, "gemini");
    assert.deepEqual(vx.keys, [good], "credentials_file is resolved against the config file's folder");
    assert.throws(() => compile({ credentials_file: "good.json" }), (err: unknown) => err instanceof ConfigError && /region is required/.test(err.message));
    assert.throws(() => compile({ region: "global", protocol: "openai", credentials_file: "good.json" }),
      (err: unknown) => err instanceof ConfigError && /speaks anthropic or gemini, not openai/.test(err.message));
  });
});

function channel(protocol: "anthropic" | "gemini"): Channel {
  return {
    name: "vx", kind: "vertex", protocol, settings: { region: "us-east5", project: "proj", credentialsFile: good },
    baseUrl: new URL("https://us-east5-aiplatform.googleapis.com"), keys: [good],
  } as unknown as Channel;
}

function wire(path: string, body: object, extra: Partial<WireRequest> = {}): WireRequest {
  const raw = Buffer.from(JSON.stringify(body));
  return {
    url: new URL(`https://api.example${path}`), path, body: raw, upstreamModel: "claude-x@1", stream: false,
    headers: {
      "x-api-key": "secret", "anthropic-version": "2023-06-01", "anthropic-beta": "b1", "content-length": String(raw.length),
      "content-type": "application/json",
    },
    ...extra,
  };
}

describe("vertex requests", () => {
  test("Claude messages: rawPredict, model out of the body, Vertex's anthropic_version in, the token instead of the key", () => {
    const r = vertexRequest(channel("anthropic"), wire("/v1/messages", { model: "claude-x", max_tokens: 5, messages: [] }), "ya29.t");
    assert.equal(r.url.href, "https://us-east5-aiplatform.googleapis.com/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-x@1:rawPredict");
    assert.deepEqual(JSON.parse(r.body.toString()), { max_tokens: 5, messages: [], anthropic_version: "vertex-2023-10-16" });
    assert.equal(r.headers.authorization, "Bearer ya29.t");
    assert.equal(r.headers["x-api-key"], undefined);
    assert.equal(r.headers["anthropic-version"], undefined);
    assert.equal(r.headers["anthropic-beta"], "b1");
    assert.equal(r.headers["content-length"], String(r.body.length));
  });

  test("Claude streamed: streamRawPredict with stream kept; token counting on count-tokens with the model", () => {
    const s = vertexRequest(channel("anthropic"), wire("/v1/messages", { model: "m", stream: true }, { stream: true }), "t");
    assert.match(s.url.pathname, /\/models\/claude-x@1:streamRawPredict$/);
    assert.equal(JSON.parse(s.body.toString()).stream, true);
    const c = vertexRequest(channel("anthropic"), wire("/v1/messages/count_tokens", { model: "m", messages: [] }), "t");
    assert.match(c.url.pathname, /\/publishers\/anthropic\/models\/count-tokens:rawPredict$/);
    assert.deepEqual(JSON.parse(c.body.toString()), { model: "claude-x@1", messages: [], anthropic_version: "vertex-2023-10-16" });
  });

  test("Gemini: the method and its query on the google publisher, body as sent, no anthropic headers", () => {
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    const req = wire("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", body, { upstreamModel: "gemini-2.5-flash", stream: true });
    const r = vertexRequest(channel("gemini"), { ...req, headers: { ...req.headers, "x-goog-api-key": "secret" } }, "t");
    assert.equal(r.url.href, "https://us-east5-aiplatform.googleapis.com/v1/projects/proj/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    assert.deepEqual(JSON.parse(r.body.toString()), body);
    assert.equal(r.headers["x-goog-api-key"], undefined);
    assert.equal(r.headers["anthropic-beta"], undefined);
    assert.equal(r.headers["anthropic-version"], undefined);
    const count = vertexRequest(channel("gemini"), wire("/v1beta/models/g:countTokens", body, { upstreamModel: "g" }), "t");
    assert.match(count.url.pathname, /\/publishers\/google\/models\/g:countTokens$/);
  });
});

async function text(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString("utf8");
}

function googleAnswer(status: number, body: unknown) {
  const raw = JSON.stringify(body);
  return { status, headers: { "content-type": "application/json; charset=UTF-8", "content-length": String(raw.length) }, body: Readable.from([Buffer.from(raw)]) };
}

describe("vertex errors", () => {
  const denied = { error: { code: 403, message: "Permission denied.", status: "PERMISSION_DENIED" } };

  test("on a Claude channel Google's errors take Anthropic's shape, by status name", async () => {
    for (const [status, name, type] of [
      [403, "PERMISSION_DENIED", "permission_error"], [401, "UNAUTHENTICATED", "authentication_error"],
      [429, "RESOURCE_EXHAUSTED", "rate_limit_error"], [404, "NOT_FOUND", "not_found_error"], [400, "INVALID_ARGUMENT", "invalid_request_error"],
      [500, "INTERNAL", "api_error"],
    ] as const) {
      const a = vertexAnswer(channel("anthropic"), googleAnswer(status, [{ error: { code: status, message: "m", status: name } }]));
      assert.equal(a.headers["content-length"], undefined);
      assert.deepEqual(JSON.parse(await text(a.body)), { type: "error", error: { type, message: "m" } }, name);
    }
  });

  test("Claude's own errors (Anthropic's shape) and successes pass as they are", async () => {
    const own = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    assert.deepEqual(JSON.parse(await text(vertexAnswer(channel("anthropic"), googleAnswer(529, own)).body)), own);
    const ok = googleAnswer(200, { id: "msg" });
    assert.equal(vertexAnswer(channel("anthropic"), ok), ok);
  });

  test("on a Gemini channel Google's shape stays (unwrapped from an array)", async () => {
    const a = vertexAnswer(channel("gemini"), googleAnswer(403, [denied]));
    assert.deepEqual(JSON.parse(await text(a.body)), denied);
  });

  test("key faults: an unusable token or a denied service account; not a bad request or a per-minute quota", () => {
    const judge = (status: number, body: unknown) => judgeKeyFault(vertexKeyFaults, status, JSON.stringify(body))?.fault;
    assert.equal(judge(403, denied), "auth");
    assert.equal(judge(401, { error: { code: 401, message: "m", status: "UNAUTHENTICATED" } }), "auth");
    assert.equal(judge(403, { type: "error", error: { type: "permission_error", message: "m" } }), "auth");
    assert.equal(judge(401, { type: "error", error: { type: "authentication_error", message: "m" } }), "auth");
    assert.equal(judge(403, { error: { code: 403, message: "m", status: "PERMISSION_DENIED", details: [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "BILLING_DISABLED" }] } }), "quota");
    assert.equal(judge(400, { error: { code: 400, message: "API_KEY_INVALID", status: "INVALID_ARGUMENT" } }), undefined);
    assert.equal(judge(400, { type: "error", error: { type: "invalid_request_error", message: "credit balance is too low" } }), undefined);
    assert.equal(judge(429, { error: { code: 429, message: "m", status: "RESOURCE_EXHAUSTED" } }), undefined);
    assert.equal(judge(429, { type: "error", error: { type: "rate_limit_error", message: "m" } }), undefined);
  });
});
