// Channel selection and failover end to end: priority, weight, disabled channels,
// model_map, key rotation, which upstream failures fail over and which do not, attempt
// bounds, timeouts, and that upstream error bodies never leak the channel key.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import {
  CHANNEL_KEY, TOKEN, capturingSink, channel, closedPort, config, hello, postChat, rawRequest, type Obj,
} from "./support.js";

interface Upstream {
  fake: FakeOpenAI;
  script: Script;
}

describe("routing and failover", () => {
  const ups: Record<"a" | "b" | "c", Upstream> = {} as never;
  let deadUrl: string;
  const open: TestGateway[] = [];

  before(async () => {
    for (const name of ["a", "b", "c"] as const) {
      const u: Upstream = { fake: undefined as never, script: { kind: "ok" } };
      u.fake = await startFakeOpenAI({ name, script: () => u.script });
      ups[name] = u;
    }
    deadUrl = `http://127.0.0.1:${await closedPort()}`;
  });

  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    for (const u of Object.values(ups)) {
      u.fake.received.length = 0;
      u.script = { kind: "ok" };
    }
  });

  after(async () => {
    for (const u of Object.values(ups)) await u.fake?.close();
    destroyAgents();
  });

  async function gateway(channels: Obj[], server: Obj = {}, sink?: ReturnType<typeof capturingSink>): Promise<TestGateway> {
    const gw = await startTestGateway(config({ channels, server }), { usage: sink });
    open.push(gw);
    return gw;
  }

  const count = (name: "a" | "b" | "c") => ups[name].fake.received.length;

  test("priority: every request goes to the highest-priority channel", async () => {
    const gw = await gateway([
      channel("low", ups.a.fake.url, { priority: 0, weight: 100 }),
      channel("high", ups.b.fake.url, { priority: 10 }),
    ]);
    for (let i = 0; i < 20; i++) {
      const r = await postChat(gw.url, hello);
      assert.equal(r.status, 200);
      assert.equal(r.json.choices[0].message.content, "b says: hello");
    }
    assert.equal(count("a"), 0);
    assert.equal(count("b"), 20);
  });

  test("weight: 3:1 among equal priority lands roughly 3:1 over 200 requests", async () => {
    const gw = await gateway([
      channel("heavy", ups.a.fake.url, { weight: 3 }),
      channel("light", ups.b.fake.url, { weight: 1 }),
    ]);
    const total = 200;
    for (let sent = 0; sent < total; sent += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => postChat(gw.url, hello)));
      for (const r of batch) assert.equal(r.status, 200);
    }
    assert.equal(count("a") + count("b"), total, "no retries on success");
    // expected 150 : 50; σ ≈ 6.1, so ±30 is about 5σ
    assert.ok(count("a") >= 120 && count("a") <= 180, `heavy got ${count("a")} of ${total}`);
    assert.ok(count("b") >= 20, `light got ${count("b")} of ${total}`);
  });

  test("a disabled channel is never used, even at top priority", async () => {
    const gw = await gateway([
      channel("off", ups.a.fake.url, { priority: 100, status: "disabled" }),
      channel("on", ups.b.fake.url),
    ]);
    for (let i = 0; i < 10; i++) assert.equal((await postChat(gw.url, hello)).status, 200);
    assert.equal(count("a"), 0);
    assert.equal(count("b"), 10);
  });

  test("model_map: the upstream gets the mapped name; billing records the client's name and the upstream's", async () => {
    const sink = capturingSink();
    const gw = await gateway([
      channel("mapped", ups.a.fake.url, { model_map: { "gpt-4o-mini": "gpt-4o-mini-2024-07-18" } }),
    ], {}, sink);
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const out = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    assert.equal(out.choices[0].message.content, "a says: hi");
    assert.equal(ups.a.fake.received[0].body.model, "gpt-4o-mini-2024-07-18");
    // the rest of the body is untouched
    assert.deepEqual(ups.a.fake.received[0].body.messages, [{ role: "user", content: "hi" }]);
    assert.equal(sink.records.length, 1);
    const rec = sink.records[0];
    assert.equal(rec.modelName, "gpt-4o-mini");
    assert.equal(rec.upstreamModel, "gpt-4o-mini-2024-07-18");
    assert.equal(rec.channel, "mapped");
    assert.equal(rec.status, 200);
    assert.equal(rec.token, "alice-main");
    assert.deepEqual(rec.usage, { input: 10, cacheRead: 2, cacheWrite: 0, output: 5, reasoning: 1 });
  });

  test("several keys on a channel rotate round-robin", async () => {
    const keys = ["sk-up-key-one", "sk-up-key-two", "sk-up-key-three"];
    const gw = await gateway([channel("multi", ups.a.fake.url, { keys })]);
    for (let i = 0; i < 6; i++) assert.equal((await postChat(gw.url, hello)).status, 200);
    const used = ups.a.fake.received.map((r) => String(r.headers.authorization).replace(/^Bearer /, ""));
    assert.deepEqual([...used].sort(), [...keys, ...keys].sort(), `keys used: ${used.join(", ")}`);
    // consecutive requests use different keys
    for (let i = 1; i < used.length; i++) assert.notEqual(used[i], used[i - 1]);
  });

  for (const status of [500, 502, 503, 429]) {
    test(`failover: first channel answers ${status} → the next channel serves the request`, async () => {
      const sink = capturingSink();
      const gw = await gateway([
        channel("first", ups.a.fake.url, { priority: 10 }),
        channel("second", ups.b.fake.url),
      ], {}, sink);
      ups.a.script = { kind: "error", status, message: `first failed ${status}` };
      const r = await postChat(gw.url, hello);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.choices[0].message.content, "b says: hello");
      assert.equal(count("a"), 1);
      assert.equal(count("b"), 1);
      assert.ok(!r.text.includes(`first failed`));
      assert.equal(sink.records[0].attempts, 2);
      assert.equal(sink.records[0].channel, "second");
    });
  }

  test("failover: connection refused (closed port) → the next channel serves the request", async () => {
    const gw = await gateway([
      channel("dead", deadUrl, { priority: 10 }),
      channel("alive", ups.b.fake.url),
    ]);
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 200, r.text);
    assert.equal(count("b"), 1);
  });

  test("failover: upstream drops the connection → the next channel serves the request", async () => {
    const gw = await gateway([
      channel("flaky", ups.a.fake.url, { priority: 10 }),
      channel("alive", ups.b.fake.url),
    ]);
    ups.a.script = { kind: "destroy" };
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 200, r.text);
    assert.equal(count("b"), 1);
  });

  test("failover: upstream 401 (channel key rejected) → next channel; the key never reaches the client", async () => {
    const strict = await startFakeOpenAI({ keys: ["sk-some-other-key"] });
    try {
      const gw = await gateway([
        channel("bad-key", strict.url, { priority: 10 }),
        channel("good", ups.b.fake.url),
      ]);
      const r = await postChat(gw.url, hello);
      assert.equal(r.status, 200, r.text);
      assert.equal(strict.received.length, 1);
      assert.equal(count("b"), 1);

      // and when only the bad-key channel exists, the client sees a gateway error, not the upstream's
      const only = await gateway([channel("bad-key", strict.url)]);
      const r2 = await postChat(only.url, hello);
      assert.equal(r2.status, 502, r2.text);
      assert.equal(r2.json.error.type, "gateway_error");
      assert.equal(r2.json.error.code, "upstream_auth_failed");
      for (const leak of [CHANNEL_KEY, CHANNEL_KEY.slice(0, 10), "Incorrect API key", "platform.openai.com"]) {
        assert.ok(!r2.text.includes(leak), `client saw "${leak}": ${r2.text}`);
      }
      assert.ok(!JSON.stringify(r2.headers).includes(CHANNEL_KEY.slice(0, 10)));
    } finally {
      await strict.close();
    }
  });

  test("400 from upstream is not retried and its body is relayed", async () => {
    const gw = await gateway([
      channel("first", ups.a.fake.url, { priority: 10 }),
      channel("second", ups.b.fake.url),
    ]);
    ups.a.script = { kind: "error", status: 400, message: "Invalid 'messages[0].role': bogus." };
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 400);
    assert.equal(r.json.error.message, "Invalid 'messages[0].role': bogus.");
    assert.equal(r.json.error.type, "invalid_request_error");
    assert.ok(r.headers["x-gateway-request-id"]);
    assert.equal(count("a"), 1);
    assert.equal(count("b"), 0, "a 400 must not be retried");

    // the SDK sees it as a BadRequestError
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.status === 400,
    );
    assert.equal(count("b"), 0);
  });

  test("every channel answers 429 → the client gets 429 with the upstream's Retry-After", async () => {
    const gw = await gateway([
      channel("first", ups.a.fake.url, { priority: 10 }),
      channel("second", ups.b.fake.url),
    ]);
    ups.a.script = { kind: "error", status: 429, headers: { "retry-after": "7" } };
    ups.b.script = { kind: "error", status: 429, headers: { "retry-after": "7" } };
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 429, r.text);
    assert.equal(r.headers["retry-after"], "7");
    assert.equal(r.json.error.type, "gateway_error");
    assert.equal(count("a"), 1);
    assert.equal(count("b"), 1);

    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] }),
      (err: unknown) => err instanceof OpenAI.RateLimitError && err.status === 429,
    );
  });

  test("every channel fails with 5xx → 5xx gateway error, upstream body not echoed", async () => {
    const gw = await gateway([channel("first", ups.a.fake.url, { priority: 10 }), channel("second", ups.b.fake.url)]);
    ups.a.script = { kind: "error", status: 500, message: "internal detail of account acct_123" };
    ups.b.script = { kind: "error", status: 503, message: "internal detail of account acct_123" };
    const r = await postChat(gw.url, hello);
    assert.ok(r.status >= 500 && r.status <= 503, `status ${r.status}`);
    assert.equal(r.json.error.type, "gateway_error");
    assert.ok(!r.text.includes("acct_123"));
  });

  test("every channel unreachable → 502", async () => {
    const gw = await gateway([
      channel("dead1", deadUrl, { priority: 10 }),
      channel("dead2", deadUrl.replace("127.0.0.1", "localhost")),
    ]);
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.error.type, "gateway_error");
    assert.equal(r.json.error.code, "upstream_unavailable");
  });

  test("an upstream that hangs beyond upstream_timeout → 504 and no retry", async () => {
    const gw = await gateway([
      channel("slow", ups.a.fake.url, { priority: 10 }),
      channel("second", ups.b.fake.url),
    ], { upstream_timeout: "300ms" });
    ups.a.script = { kind: "hang" };
    const started = Date.now();
    const r = await postChat(gw.url, hello);
    const took = Date.now() - started;
    assert.equal(r.status, 504, r.text);
    assert.equal(r.json.error.code, "upstream_timeout");
    assert.ok(took >= 280 && took < 2500, `took ${took} ms`);
    assert.equal(count("a"), 1);
    assert.equal(count("b"), 0, "a timed-out request is not retried");
  });

  test("upstream 504 is not retried either", async () => {
    const gw = await gateway([channel("first", ups.a.fake.url, { priority: 10 }), channel("second", ups.b.fake.url)]);
    ups.a.script = { kind: "error", status: 504 };
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 504, r.text);
    assert.equal(count("b"), 0);
  });

  test("upstream_attempts bounds the tries: 2 of 3 failing channels", async () => {
    const gw = await gateway([
      channel("c1", ups.a.fake.url, { priority: 30 }),
      channel("c2", ups.b.fake.url, { priority: 20 }),
      channel("c3", ups.c.fake.url, { priority: 10 }),
    ], { upstream_attempts: 2 });
    for (const u of Object.values(ups)) u.script = { kind: "error", status: 500 };
    const r = await postChat(gw.url, hello);
    assert.ok(r.status >= 500, `status ${r.status}`);
    assert.equal(count("a") + count("b") + count("c"), 2);
    assert.equal(count("c"), 0, "the lowest priority is the one left out");
  });

  test("failover steps down in priority and skips channels already tried", async () => {
    const gw = await gateway([
      channel("t1a", ups.a.fake.url, { priority: 10 }),
      channel("t1b", ups.b.fake.url, { priority: 10 }),
      channel("t2", ups.c.fake.url, { priority: 0 }),
    ], { upstream_attempts: 3 });
    ups.a.script = { kind: "error", status: 502 };
    ups.b.script = { kind: "error", status: 502 };
    const r = await postChat(gw.url, hello);
    assert.equal(r.status, 200, r.text);
    assert.equal(count("a"), 1);
    assert.equal(count("b"), 1);
    assert.equal(count("c"), 1);
  });

  test("no channel for the model in the token's group → 503 gateway_error channel_not_found", async () => {
    const gw = await gateway([
      channel("main", ups.a.fake.url),
      channel("video-only", ups.b.fake.url, { groups: ["video"], models: ["gpt-4o-2024-08-06"] }),
    ]);
    const r = await postChat(gw.url, { ...hello, model: "gpt-4o-2024-08-06" });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.error.type, "gateway_error");
    assert.equal(r.json.error.code, "channel_not_found");
    assert.match(r.json.error.message, /gpt-4o-2024-08-06/);
    assert.equal(count("a") + count("b"), 0);

    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: "gpt-4o-2024-08-06", messages: [{ role: "user", content: "x" }] }),
      (err: unknown) => err instanceof OpenAI.InternalServerError && err.status === 503 && err.code === "channel_not_found",
    );
  });

  test("a stream that stalls after its first chunk beyond stream_idle_timeout ends with an error event, upstream closed", async () => {
    let closed = 0;
    const staller = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.on("close", () => closed++);
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${JSON.stringify({ id: "s", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini",
          choices: [{ index: 0, delta: { content: "partial" }, finish_reason: null }] })}\n\n`);
      });
    });
    await new Promise<void>((r) => staller.listen(0, "127.0.0.1", r));
    try {
      const gw = await gateway([
        channel("stall", `http://127.0.0.1:${(staller.address() as AddressInfo).port}`, { priority: 10 }),
        channel("second", ups.b.fake.url),
      ], { stream_idle_timeout: "1s" });
      const started = Date.now();
      const outcome = await postChat(gw.url, { ...hello, stream: true });
      const took = Date.now() - started;
      // bytes already reached the client: no failover; the stream ends with an error event
      // in the OpenAI shape instead of hanging
      assert.equal(outcome.status, 200);
      assert.ok(!outcome.text.includes("[DONE]"), "the stream must not look complete");
      const events = outcome.text.trim().split("\n\n").map((e) => JSON.parse(e.replace(/^data: /, "")));
      assert.equal(events[0].choices[0].delta.content, "partial");
      assert.equal(events.at(-1).error.code, "upstream_timeout", outcome.text);
      assert.ok(took >= 900 && took < 4000, `took ${took} ms`);
      await eventually(() => closed === 1, 2000, "the stalled upstream to be closed");
      assert.equal(count("b"), 0, "no retry after the first byte");
      assert.equal((await rawRequest(`${gw.url}/healthz`)).status, 200, "the gateway keeps serving");
    } finally {
      staller.closeAllConnections();
      await new Promise<void>((r) => staller.close(() => r()));
    }
  });
});

describe("channel health", () => {
  test("a channel failing repeatedly is tried last, so later requests skip its failures", async () => {
    let calls = 0;
    const failing = await startFakeOpenAI({ name: "sick", script: () => { calls++; return { kind: "error", status: 503 }; } });
    const healthy = await startFakeOpenAI({ name: "well" });
    const gw = await startTestGateway(config({
      channels: [channel("sick", failing.url, { priority: 10 }), channel("well", healthy.url, { priority: 0 })],
    }));
    try {
      for (let i = 0; i < 3; i++) assert.equal((await postChat(gw.url, hello, { authorization: `Bearer ${TOKEN}` })).status, 200);
      assert.equal(calls, 3, "each of the first requests tried the higher-priority channel first");
      for (let i = 0; i < 5; i++) assert.equal((await postChat(gw.url, hello, { authorization: `Bearer ${TOKEN}` })).status, 200);
      assert.equal(calls, 3, "while it cools down, the failing channel is not tried first");
      assert.equal(healthy.received.length, 8);
    } finally {
      await gw.close();
      await failing.close();
      await healthy.close();
    }
  });
});
