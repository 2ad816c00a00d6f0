import assert from "node:assert/strict";
import { test } from "node:test";
import { compose } from "../../src/pipeline/compose.js";
import { protocolOfPath, matchRoute } from "../../src/pipeline/routes.js";
import { errors } from "../../src/errors/catalogue.js";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { renderError } from "../../src/protocols/render-error.js";
import { allowedValues, upstreamRequestHeaders, downstreamResponseHeaders } from "../../src/upstream/headers.js";
import { providers } from "../../src/providers/index.js";
import { exhaustedError, shouldFailOver } from "../../src/upstream/failover.js";

test("compose runs stages in order, around next()", async () => {
  const seen: string[] = [];
  const run = compose<string[]>([
    async (c, next) => { c.push("a>"); await next(); c.push("<a"); },
    async (c, next) => { c.push("b"); await next(); },
  ]);
  await run(seen);
  assert.deepEqual(seen, ["a>", "b", "<a"]);
});

test("compose refuses a double next()", async () => {
  const run = compose<object>([async (_c, next) => { await next(); await next(); }]);
  await assert.rejects(run({}), /more than once/);
});

test("routes match exact paths, gemini model paths and report wrong methods", () => {
  const chat = matchRoute("POST", "/v1/chat/completions");
  assert.equal(chat.kind === "ok" && chat.route.name, "chat-completions");
  const gen = matchRoute("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent");
  assert.equal(gen.kind === "ok" && gen.pathModel, "gemini-2.5-flash");
  assert.equal(matchRoute("GET", "/v1/chat/completions").kind, "method");
  assert.equal(matchRoute("POST", "/chat/completions").kind, "not-found");
  assert.equal(matchRoute("POST", "/v1beta/models/x:unknownAction").kind, "not-found");
  assert.equal(matchRoute("POST", "/v1beta/models/%E0%A4%A:generateContent").kind, "not-found");
  assert.equal(protocolOfPath("/v1beta/whatever"), "gemini");
  assert.equal(protocolOfPath("/v1/messages/x"), "anthropic");
});

test("Google's GA path: /v1/models/{model}:{action} is generate-content on v1; other /v1/models/{id} names one model", () => {
  const ga = matchRoute("POST", "/v1/models/gemini-2.5-flash:streamGenerateContent");
  assert.ok(ga.kind === "ok");
  assert.equal(ga.route.name, "generate-content");
  assert.equal(ga.route.protocol, "gemini");
  assert.equal(ga.route.apiVersion, "v1");
  assert.equal(ga.pathModel, "gemini-2.5-flash");
  const count = matchRoute("POST", "/v1/models/m:countTokens");
  assert.equal(count.kind === "ok" && count.route.name, "generate-content-count-tokens");
  const beta = matchRoute("POST", "/v1beta/models/m:generateContent");
  assert.equal(beta.kind === "ok" && beta.route.apiVersion, "v1beta");
  // OpenAI's fine-tuned ids hold colons: one model, not an action.
  const ft = matchRoute("GET", "/v1/models/ft:gpt-4o-mini:org:abc123");
  assert.ok(ft.kind === "ok");
  assert.equal(ft.route.terminal, "models");
  assert.equal(ft.pathModel, "ft:gpt-4o-mini:org:abc123");
  const one = matchRoute("GET", "/v1beta/models/gemini-2.5-flash");
  assert.equal(one.kind === "ok" && one.route.protocol, "gemini");
  assert.equal(protocolOfPath("/v1/models/m:countTokens"), "gemini");
  assert.equal(protocolOfPath("/v1/models"), "openai");
});

test("each family renders errors in its own wire shape with our code alongside", () => {
  const err = new GatewayError(errors.invalidToken);
  assert.deepEqual(JSON.parse(renderError("openai", err)),
    { error: { message: err.message, type: "gateway_error", code: "invalid_token", param: null } });
  const a = JSON.parse(renderError("anthropic", err));
  assert.equal(a.type, "error");
  assert.equal(a.error.type, "authentication_error");
  assert.equal(a.error.code, "invalid_token");
  const g = JSON.parse(renderError("gemini", err));
  assert.equal(g.error.code, 401);
  assert.equal(g.error.status, "UNAUTHENTICATED");
  assert.equal(g.error.details[0].reason, "invalid_token");
});

test("only allow-listed client headers go upstream; credentials and hop-by-hop headers never", () => {
  const client = {
    authorization: "Bearer client", "x-api-key": "client", "x-goog-api-key": "client", cookie: "c=1",
    connection: "keep-alive", "x-forwarded-for": "1.2.3.4", "anthropic-beta": "b,context-1m-2025-08-07", "user-agent": "sdk",
    "content-length": "999", "accept-encoding": "gzip", "x-gateway-debug": "1", "anthropic-version": "2023-06-01",
    "openai-organization": "org-x", "x-stainless-os": "Linux", accept: "text/html",
  };
  const out = upstreamRequestHeaders({
    client, policy: providers.anthropic.requestHeaders, betas: undefined, auth: { "x-api-key": "upstream" },
    bodyLength: 42, contentType: "application/json", accept: "application/json", passThrough: true,
  });
  assert.deepEqual(out, {
    "anthropic-version": "2023-06-01", "anthropic-beta": "context-1m-2025-08-07", "user-agent": "sdk", accept: "application/json",
    "accept-encoding": "identity", "content-type": "application/json", "content-length": "42", "x-api-key": "upstream",
  });
  // Converted: the encoder's version, not the client's; a channel's own beta list.
  const converted = upstreamRequestHeaders({
    client: { ...client, "anthropic-version": "2099-01-01" }, policy: providers.anthropic.requestHeaders, betas: new Set(["b"]),
    auth: {}, bodyLength: 1, contentType: "application/json", accept: "application/json", passThrough: false,
  });
  assert.equal(converted["anthropic-version"], "2023-06-01");
  assert.equal(converted["anthropic-beta"], "b");
  assert.equal(allowedValues("x, y ,z", new Set(["z", "y"])), "y,z");
  assert.equal(allowedValues("x", new Set(["z"])), undefined);
  assert.deepEqual(downstreamResponseHeaders({ "openai-organization": "org", "set-cookie": ["x"], "x-request-id": "r",
    "content-length": "3", "content-type": "application/json" }, ["openai-organization"]),
  { "x-request-id": "r", "content-type": "application/json" });
});

test("failover: which statuses retry, and what the client sees when none are left", () => {
  for (const s of [429, 500, 502, 503]) assert.equal(shouldFailOver(s), true, String(s));
  // A 401/403 that blames the key is a key fault, met before (the next key, then channel); one that does not is the request's answer.
  for (const s of [200, 400, 401, 403, 404, 413, 422, 504]) assert.equal(shouldFailOver(s), false, String(s));
  const limited = exhaustedError({ kind: "status", status: 429, retryAfter: "7" });
  assert.equal(limited.status, 429);
  assert.deepEqual(limited.headers, { "retry-after": "7" });
  assert.equal(exhaustedError({ kind: "status", status: 503 }).status, 503);
  assert.equal(exhaustedError({ kind: "status", status: 401 }).status, 502);
  assert.equal(exhaustedError({ kind: "status", status: 599 }).status, 502);
});

test("multipart: fields are read wherever they stand; a field's value is replaced in place", async () => {
  const { parseMultipart, replaceField } = await import("../../src/media/multipart.js");
  const form = new FormData();
  form.set("image", new Blob([new Uint8Array([1, 2, 3])], { type: "image/png" }), "a.png");
  form.set("prompt", "a hat");
  form.set("model", "m1");
  const request = new Request("http://x/", { method: "POST", body: form });
  const contentType = request.headers.get("content-type")!;
  const body = Buffer.from(await request.arrayBuffer());
  const parts = await parseMultipart(body, contentType);
  assert.deepEqual(parts.fields, { prompt: "a hat", model: "m1" });
  assert.deepEqual(parts.files, [{ field: "image", filename: "a.png", mimeType: "image/png", size: 3 }]);
  const renamed = replaceField(body, contentType, "model", "m1-2024");
  assert.deepEqual((await parseMultipart(renamed, contentType)).fields, { prompt: "a hat", model: "m1-2024" });
  assert.equal(replaceField(body, contentType, "model", "m1"), body, "unchanged when equal");
  await assert.rejects(parseMultipart(Buffer.from("garbage"), "multipart/form-data"), /malformed/);
});
