// The HTTP server around the chain: request ids on every response, JSON errors for unknown
// paths and bad bodies, /healthz and /metrics, the token's model list, live config swaps
// under an in-flight stream, and graceful drain with and without a deadline.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import {
  CHANNEL_KEY, TOKEN, channel, closedPort, config, hello, postChat, rawRequest, token, type RawResponse,
} from "./support.js";

const GLOB = "sk-gw-glob-token-for-models-01";
const VIDEO = "sk-gw-video-group-token-00002";

const models = {
  "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
  "gpt-4o-2024-08-06": { endpoint: "chat", price: { input: 2.5, output: 10 } },
  "claude-sonnet-4-5": { price: { input: 3, output: 15 } },
  "gemini-2.5-flash": { price: { input: 0.3, output: 2.5 } },
  "o4-mini": { endpoint: "responses", price: { input: 1.1, output: 4.4 } },
  "gpt-unrouted": { price: { input: 1, output: 1 } },
  "gpt-4o-dead": { price: { input: 1, output: 1 } },
};

describe("server", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let deadUrl: string;
  let script: Script = { kind: "ok" };

  before(async () => {
    fake = await startFakeOpenAI({ name: "main", keys: [CHANNEL_KEY], script: () => script });
    deadUrl = `http://127.0.0.1:${await closedPort()}`;
    gw = await startTestGateway(config({
      server: { max_body: "1KiB" },
      models,
      tokens: [
        token("alice-main", TOKEN),
        token("glob", GLOB, { models: ["gpt-4o-*"] }),
        token("video", VIDEO, { group: "video" }),
      ],
      channels: [
        channel("main", fake.url, { models: ["gpt-4o-mini", "gpt-4o-2024-08-06", "claude-sonnet-4-5", "o4-mini"] }),
        channel("video", fake.url, { groups: ["video"], models: ["gemini-2.5-flash"] }),
        channel("off", fake.url, { models: ["gpt-unrouted"], status: "disabled" }),
        channel("dead", deadUrl, { models: ["gpt-4o-dead"] }),
      ],
    }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const ids: string[] = [];

  function idOf(r: RawResponse): string {
    const id = r.headers["x-gateway-request-id"];
    assert.equal(typeof id, "string", `no X-Gateway-Request-Id on ${r.status}`);
    assert.ok((id as string).length >= 8);
    ids.push(id as string);
    return id as string;
  }

  function assertJsonError(r: RawResponse, status: number, code: string, type: string): void {
    assert.equal(r.status, status, r.text);
    assert.match(String(r.headers["content-type"]), /^application\/json/);
    assert.ok(!/<html/i.test(r.text));
    assert.equal(r.json?.error?.code, code, r.text);
    assert.equal(r.json.error.type, type, r.text);
    idOf(r);
  }

  test("200 carries a request id", async () => {
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 200, r.text);
    idOf(r);
  });

  test("401 carries a request id", async () => {
    assertJsonError(await postChat(gw.url, hello, { authorization: "Bearer nope" }), 401, "invalid_token", "gateway_error");
  });

  test("unknown paths: JSON 404 in the caller's protocol shape, never HTML", async () => {
    for (const path of ["/", "/chat/completions", "/v1/chat/completion", "/v2/chat/completions", "/index.html"]) {
      const r = await rawRequest(gw.url + path, { method: "POST", headers: auth, body: JSON.stringify(hello) });
      assertJsonError(r, 404, "not_found", "invalid_request_error");
      assert.match(r.json.error.message, /base URL/i);
    }
    const g = await rawRequest(`${gw.url}/v1beta/models/gemini-2.5-flash:bogusAction`, { method: "POST", body: "{}" });
    assert.equal(g.status, 404);
    idOf(g);
    assert.equal(g.json.error.code, 404);
    assert.equal(g.json.error.status, "NOT_FOUND");
    const g2 = await rawRequest(`${gw.url}/v1beta/nothing-here`);
    assert.equal(g2.status, 404);
    assert.equal(g2.json.error.status, "NOT_FOUND");
    idOf(g2);
    const m = await rawRequest(`${gw.url}/v1/messages/count_tokens_typo`, { method: "POST", body: "{}" });
    assert.equal(m.status, 404);
    assert.equal(m.json.type, "error");
    assert.equal(m.json.error.type, "not_found_error");
    idOf(m);
  });

  test("405 with Allow for a wrong method", async () => {
    const r = await rawRequest(`${gw.url}/v1/chat/completions`, { headers: auth });
    assertJsonError(r, 405, "method_not_allowed", "invalid_request_error");
    assert.equal(r.headers.allow, "POST");
    const r2 = await rawRequest(`${gw.url}/v1/models`, { method: "POST", headers: auth, body: "{}" });
    assertJsonError(r2, 405, "method_not_allowed", "invalid_request_error");
    assert.equal(r2.headers.allow, "GET");
  });

  test("413 for a body over max_body (declared length and chunked)", async () => {
    const big = JSON.stringify({ ...hello, messages: [{ role: "user", content: "x".repeat(2048) }] });
    const r = await rawRequest(`${gw.url}/v1/chat/completions`, { method: "POST", headers: auth, body: big });
    assertJsonError(r, 413, "body_too_large", "invalid_request_error");
    const chunked = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { ...auth, "transfer-encoding": "chunked" }, body: big,
    });
    assertJsonError(chunked, 413, "body_too_large", "invalid_request_error");
    // just under the limit is fine
    const small = JSON.stringify({ ...hello, messages: [{ role: "user", content: "x".repeat(900) }] });
    assert.ok(Buffer.byteLength(small) <= 1024);
    assert.equal((await postChat(gw.url, JSON.parse(small))).status, 200);
    // the SDK maps it to an APIError with status 413
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "y".repeat(4096) }] }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 413,
    );
  });

  test("400 for malformed JSON, a non-object body and a missing model", async () => {
    const bad = await rawRequest(`${gw.url}/v1/chat/completions`, { method: "POST", headers: auth, body: "{\"model\": " });
    assertJsonError(bad, 400, "invalid_json", "invalid_request_error");
    const arr = await rawRequest(`${gw.url}/v1/chat/completions`, { method: "POST", headers: auth, body: "[1,2]" });
    assertJsonError(arr, 400, "invalid_json", "invalid_request_error");
    const noModel = await postChat(gw.url, { messages: hello.messages });
    assertJsonError(noModel, 400, "missing_required_parameter", "invalid_request_error");
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ messages: hello.messages } as never),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.code === "missing_required_parameter",
    );
  });

  test("503 (no channel) and 502 (unreachable) carry a request id", async () => {
    assertJsonError(await postChat(gw.url, { ...hello, model: "gpt-unrouted" }), 503, "channel_not_found", "gateway_error");
    assertJsonError(await postChat(gw.url, { ...hello, model: "gpt-4o-dead" }), 502, "upstream_unavailable", "gateway_error");
  });

  test("unparseable HTTP and oversized headers still get a JSON error with a request id", async () => {
    const rawExchange = (bytes: string) => new Promise<string>((resolve, reject) => {
      const socket = net.connect(gw.port, "127.0.0.1", () => socket.write(bytes));
      let got = "";
      socket.on("data", (c: Buffer) => { got += c.toString("latin1"); });
      socket.on("end", () => resolve(got));
      socket.on("error", reject);
    });
    const parse = (text: string) => {
      const [head, body] = text.split("\r\n\r\n");
      const status = Number(head.split(" ")[1]);
      const id = /^x-gateway-request-id: *(\S+)/im.exec(head)?.[1];
      return { status, id, json: JSON.parse(body) };
    };
    const bad = parse(await rawExchange("THIS IS NOT HTTP\r\n\r\n"));
    assert.equal(bad.status, 400);
    assert.ok(bad.id);
    ids.push(bad.id!);
    assert.equal(bad.json.error.type, "invalid_request_error");
    const huge = parse(await rawExchange(`GET /v1/models HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`));
    assert.equal(huge.status, 431);
    assert.ok(huge.id);
    ids.push(huge.id!);
  });

  test("an unknown Expect gets a JSON 417, and a body sent anyway is read, not met with a reset", async () => {
    // Closing at once would reset a connection the client is still writing its body to, and
    // a reset can throw away the answer before the client reads it: the body is read and
    // discarded instead, so the connection stays usable for the next request.
    const body = JSON.stringify({ ...hello, pad: "x".repeat(600) });
    const socket = net.connect(gw.port, "127.0.0.1");
    let got = "";
    socket.on("data", (c: Buffer) => { got += c.toString("latin1"); });
    socket.on("error", () => {});
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\n` +
      `content-type: application/json\r\nexpect: something-else\r\ncontent-length: ${body.length}\r\n\r\n`);
    await eventually(() => got.includes("\r\n\r\n") && got.includes("}"), 3000, "the 417");
    assert.match(got, /^HTTP\/1\.1 417 /, got);
    assert.match(got, /x-gateway-request-id: \S+/i);
    assert.equal(JSON.parse(got.split("\r\n\r\n")[1]).error.code, "expectation_failed");
    for (let at = 0; at < body.length; at += 100) socket.write(body.slice(at, at + 100));
    got = "";
    socket.write(`GET /v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\n\r\n`);
    await eventually(() => /^HTTP\/1\.1 \d+/.test(got) || socket.destroyed, 3000, "the next answer on the same connection");
    assert.match(got, /^HTTP\/1\.1 200 /, `the connection did not survive: ${JSON.stringify(got)}`);
    socket.destroy();
  });

  test("/healthz and /metrics carry a request id; ids are unique", async () => {
    const h = await rawRequest(`${gw.url}/healthz`);
    assert.equal(h.status, 200);
    assert.equal(h.json.status, "ok");
    idOf(h);
    const m = await rawRequest(`${gw.url}/metrics`);
    assert.equal(m.status, 200);
    idOf(m);
    assert.ok(ids.length >= 20, `ids seen: ${ids.length}`);
    assert.equal(new Set(ids).size, ids.length, "request ids must be unique");
  });

  test("/metrics exposes the gateway metrics and never a key or token", async () => {
    const r = await rawRequest(`${gw.url}/metrics`);
    assert.equal(r.status, 200);
    assert.match(String(r.headers["content-type"]), /^text\/plain/);
    for (const name of [
      "gateway_requests_total", "gateway_request_duration_seconds", "gateway_upstream_duration_seconds",
      "gateway_tokens_total", "gateway_cost_total", "gateway_inflight_requests", "gateway_config_reloads_total",
    ]) {
      assert.match(r.text, new RegExp(`^# TYPE ${name} `, "m"), `missing ${name}`);
    }
    assert.match(r.text, /^gateway_requests_total\{[^}]*model="gpt-4o-mini"[^}]*status="200"[^}]*\} \d+/m);
    assert.match(r.text, /^gateway_tokens_total\{model="gpt-4o-mini",kind="output"\} \d+/m);
    for (const secret of [TOKEN, GLOB, VIDEO, CHANNEL_KEY, "Bearer"]) {
      assert.ok(!r.text.includes(secret), `metrics contain ${secret}`);
    }
  });

  test("GET /v1/models lists exactly the models usable by the token", async () => {
    const list = async (key: string) => {
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const page = await client.models.list();
      for (const m of page.data) {
        assert.equal(m.object, "model");
        assert.equal(typeof m.created, "number");
        assert.equal(typeof m.owned_by, "string");
      }
      return page.data.map((m) => m.id).sort();
    };
    // default group: models with an enabled channel (not the disabled one's, not the video group's)
    assert.deepEqual(await list(TOKEN), ["claude-sonnet-4-5", "gpt-4o-2024-08-06", "gpt-4o-dead", "gpt-4o-mini", "o4-mini"]);
    // narrowed by the token's allowlist glob
    assert.deepEqual(await list(GLOB), ["gpt-4o-2024-08-06", "gpt-4o-dead", "gpt-4o-mini"]);
    // another group, other routes
    assert.deepEqual(await list(VIDEO), ["gemini-2.5-flash"]);
    const raw = await rawRequest(`${gw.url}/v1/models`, { headers: auth });
    assert.equal(raw.status, 200);
    assert.equal(raw.json.object, "list");
    idOf(raw);
  });
});

describe("config swap under an in-flight stream", () => {
  let a: FakeOpenAI;
  let b: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    const slow: Script = { kind: "ok", text: "old config answers slowly", chunks: 6, chunkDelayMs: 50 };
    a = await startFakeOpenAI({ name: "old", script: () => slow });
    b = await startFakeOpenAI({ name: "new" });
    gw = await startTestGateway(config({ channels: [channel("old", a.url)] }));
  });
  after(async () => {
    await gw?.close();
    await a?.close();
    await b?.close();
    destroyAgents();
  });

  test("the stream finishes on the old channel; new requests use the new config", async () => {
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }], stream: true,
    });
    let text = "";
    let swapped = false;
    let during: string | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (!swapped && text.length > 0) {
        swapped = true;
        gw.swapConfig(config({ channels: [channel("new", b.url, { model_map: { "gpt-4o-mini": "gpt-4o-mini-v2" } })] }));
        const r = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "y" }] });
        during = r.choices[0].message.content ?? undefined;
      }
    }
    assert.ok(swapped);
    assert.equal(text, "old config answers slowly");
    assert.equal(during, "new says: y");
    assert.equal(a.received.length, 1);
    assert.equal(b.received.length, 1);
    assert.equal(b.received[0].body.model, "gpt-4o-mini-v2");
    const again = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "z" }] });
    assert.equal(again.choices[0].message.content, "new says: z");
    assert.equal(a.received.length, 1);
  });

  test("a swapped-in token list takes effect at once", async () => {
    const NEW = "sk-gw-brand-new-token-000001";
    gw.swapConfig(config({ tokens: [token("fresh", NEW)], channels: [channel("new", b.url)] }));
    assert.equal((await postChat(gw.url, hello)).status, 401);
    assert.equal((await postChat(gw.url, hello, { authorization: `Bearer ${NEW}` })).status, 200);
  });
});

describe("graceful drain", () => {
  let fake: FakeOpenAI;
  let script: Script = { kind: "ok" };

  before(async () => {
    fake = await startFakeOpenAI({ name: "drain", script: () => script });
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
  });

  test("drain lets an in-flight stream finish, refuses new work, and reports forced 0", async () => {
    const gw = await startTestGateway(config({ channels: [channel("main", fake.url)] }));
    try {
      script = { kind: "ok", text: "draining but finishing every word", chunks: 8, chunkDelayMs: 40 };
      const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }], stream: true,
      });
      let text = "";
      let drained: Promise<{ forced: number }> | undefined;
      let newWork: RawResponse | Error | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        if (!drained && text.length > 0) {
          drained = gw.drain(5000);
          // a new connection while draining: refused, or answered 503
          newWork = await postChat(gw.url, hello).catch((err: Error) => err);
        }
      }
      assert.ok(drained, "drain started mid-stream");
      assert.equal(text, "draining but finishing every word");
      if (newWork instanceof Error) {
        assert.match(String((newWork as NodeJS.ErrnoException).code), /ECONNREFUSED|ECONNRESET/);
      } else {
        assert.equal(newWork?.status, 503);
        assert.equal(newWork.json.error.code, "shutting_down");
        assert.ok(newWork.headers["x-gateway-request-id"]);
      }
      const { forced } = await drained;
      assert.equal(forced, 0);
      await assert.rejects(postChat(gw.url, hello), (err: NodeJS.ErrnoException) => err.code === "ECONNREFUSED");
    } finally {
      await gw.close().catch(() => {});
    }
  });

  test("drain deadline: a hanging upstream is cut off and counted as forced", async () => {
    const gw = await startTestGateway(config({ server: { upstream_timeout: "30s" }, channels: [channel("main", fake.url)] }));
    try {
      script = { kind: "hang" };
      const seen = fake.received.length;
      const pending = postChat(gw.url, hello).catch((err: Error) => err);
      await eventually(() => fake.received.length > seen, 3000, "the request to reach the upstream");
      const started = Date.now();
      const { forced } = await gw.drain(300);
      const took = Date.now() - started;
      assert.ok(forced >= 1, `forced ${forced}`);
      assert.ok(took >= 250 && took < 3000, `drain took ${took} ms`);
      const outcome = await pending;
      // the client's connection was closed without an answer
      assert.ok(outcome instanceof Error || outcome.status >= 500, `client got ${outcome instanceof Error ? outcome.message : outcome.status}`);
    } finally {
      await gw.close().catch(() => {});
    }
  });
});
