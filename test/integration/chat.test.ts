// Chat completions through the gateway with the official openai SDK: plain and streamed
// answers, stream usage (asked for or added by the gateway and stripped), tool calls,
// private upstream headers, incremental delivery and client aborts.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { fakeUsage, startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { registry } from "../../src/observability/metrics.js";
import { TOKEN, capturingSink, channel, config, rawRequest } from "./support.js";

const expectedUsage = { input: 10, cacheRead: 2, cacheWrite: 0, output: 5, reasoning: 1 };

const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

type RawHandler = (body: Record<string, unknown>, res: http.ServerResponse) => void;

const endlessStream: RawHandler = (_body, res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const base = { id: "chatcmpl-endless", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini" };
  let n = 0;
  const timer = setInterval(() => {
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: `t${n++} ` }, finish_reason: null }] })}\n\n`);
  }, 20);
  res.on("close", () => clearInterval(timer));
};

/** A hand-written upstream whose answer is a function of the request, and which records
 * when its response socket closes before the answer finished (cancellation reached it). */
async function startRawUpstream() {
  const state = { requests: 0, closedEarly: 0, handler: endlessStream };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      state.requests++;
      res.on("close", () => { if (!res.writableFinished) state.closedEarly++; });
      state.handler(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"), res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, state,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

describe("chat completions", () => {
  let fake: FakeOpenAI;
  let endless: Awaited<ReturnType<typeof startRawUpstream>>;
  let script: Script = { kind: "ok" };
  let gw: TestGateway;
  let client: OpenAI;
  const sink = capturingSink();

  before(async () => {
    fake = await startFakeOpenAI({ name: "fake", script: () => script });
    endless = await startRawUpstream();
    gw = await startTestGateway(config({
      // A client that leaves: its upstream is read on (or waited for) this long for its usage, then closed.
      server: { usage_drain_timeout: "200ms" },
      channels: [
        channel("main", fake.url),
        channel("endless", endless.url, { models: ["gpt-4o-2024-08-06"] }),
      ],
    }), { usage: sink });
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    await endless?.close();
    destroyAgents();
  });

  const lastRecord = () => sink.records[sink.records.length - 1];

  test("non-stream completion", async () => {
    script = { kind: "ok", text: "Hello there, human." };
    const out = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }], max_tokens: 20,
    });
    assert.equal(out.object, "chat.completion");
    assert.equal(out.choices[0].message.content, "Hello there, human.");
    assert.equal(out.choices[0].finish_reason, "stop");
    assert.deepEqual(out.usage, fakeUsage);
    const sent = fake.received[fake.received.length - 1].body;
    assert.equal(sent.max_tokens, 20);
    assert.equal(sent.stream, undefined);
    await eventually(() => sink.records.length > 0 && lastRecord().status === 200, 2000, "usage record");
    assert.deepEqual(lastRecord().usage, expectedUsage);
  });

  test("streamed completion: deltas concatenate to the upstream's text", async () => {
    script = { kind: "ok", text: "The quick brown fox jumps over the lazy dog.", chunks: 6 };
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "fox" }], stream: true,
    });
    let text = "";
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    assert.equal(text, "The quick brown fox jumps over the lazy dog.");
    assert.ok(chunks >= 7, `chunks: ${chunks}`);
  });

  test("stream_options.include_usage: the last chunk carries usage and no choices", async () => {
    script = { kind: "ok", text: "counting tokens", chunks: 3 };
    const before = sink.records.length;
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }], stream: true, stream_options: { include_usage: true },
    });
    const all: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) all.push(chunk);
    const last = all[all.length - 1];
    assert.deepEqual(last.choices, []);
    const { gateway_cost: cost, ...usage } = last.usage as typeof fakeUsage & { gateway_cost?: string };
    assert.deepEqual(usage, fakeUsage);
    assert.match(cost ?? "", /^\d+(\.\d+)?$/, "the cost beside the usage, an exact decimal");
    assert.equal(all.filter((c) => c.usage).length, 1, "exactly one usage chunk");
    const sent = fake.received[fake.received.length - 1].body;
    assert.deepEqual(sent.stream_options, { include_usage: true });
    await eventually(() => sink.records.length > before, 2000, "usage record");
    assert.deepEqual(lastRecord().usage, expectedUsage);
  });

  test("without include_usage: no usage chunk for the client, but the gateway still learns usage", async () => {
    script = { kind: "ok", text: "no usage for you", chunks: 4 };
    const before = sink.records.length;
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }], stream: true,
    });
    const all: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) all.push(chunk);
    assert.equal(all.map((c) => c.choices[0]?.delta?.content ?? "").join(""), "no usage for you");
    for (const c of all) {
      assert.ok(c.choices.length > 0, `a chunk without choices reached the client: ${JSON.stringify(c)}`);
      assert.ok(!c.usage, `a usage value reached the client: ${JSON.stringify(c)}`);
    }
    // the gateway asked the upstream for usage on the client's behalf
    const sent = fake.received[fake.received.length - 1].body;
    assert.deepEqual(sent.stream_options, { include_usage: true });
    await eventually(() => sink.records.length > before, 2000, "usage record");
    assert.equal(lastRecord().status, 200);
    assert.deepEqual(lastRecord().usage, expectedUsage);
  });

  test("without include_usage, raw SSE: the stream ends with [DONE] and has no usage-only event", async () => {
    script = { kind: "ok", text: "raw", chunks: 1 };
    const r = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }], stream: true }),
    });
    assert.equal(r.status, 200);
    assert.match(String(r.headers["content-type"]), /^text\/event-stream/);
    const events = r.text.split("\n\n").filter(Boolean);
    assert.equal(events[events.length - 1], "data: [DONE]");
    assert.ok(!/"choices":\[\]/.test(r.text), r.text);
    assert.ok(!/"prompt_tokens"/.test(r.text), r.text);
  });

  test("tools and tool_calls pass untouched (non-stream)", async () => {
    const args = JSON.stringify({ city: "Paris", unit: "celsius" });
    script = { kind: "tool_call", name: "get_weather", args };
    const out = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "weather in Paris?" }], tools: [weatherTool],
    });
    assert.deepEqual(fake.received[fake.received.length - 1].body.tools, [weatherTool]);
    assert.equal(out.choices[0].finish_reason, "tool_calls");
    const call = out.choices[0].message.tool_calls?.[0];
    assert.ok(call && call.type === "function");
    assert.equal(call.id, "call_fake1");
    assert.equal(call.function.name, "get_weather");
    assert.equal(call.function.arguments, args);
  });

  test("tools and tool_calls pass untouched (stream): argument deltas concatenate to the JSON", async () => {
    const args = JSON.stringify({ city: "Reykjavík", days: 3, hourly: true });
    script = { kind: "tool_call", name: "get_weather", args };
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "forecast" }], tools: [weatherTool], stream: true,
    });
    let joined = "";
    let name = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      for (const tc of choice.delta.tool_calls ?? []) {
        name += tc.function?.name ?? "";
        joined += tc.function?.arguments ?? "";
      }
      finish = choice.finish_reason ?? finish;
    }
    assert.equal(name, "get_weather");
    assert.equal(joined, args);
    assert.deepEqual(JSON.parse(joined), { city: "Reykjavík", days: 3, hourly: true });
    assert.equal(finish, "tool_calls");
    assert.deepEqual(fake.received[fake.received.length - 1].body.tools, [weatherTool]);
  });

  test("the upstream's openai-organization header is not relayed (stream and non-stream)", async () => {
    script = { kind: "ok" };
    const { response } = await client.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] })
      .withResponse();
    assert.equal(response.headers.get("openai-organization"), null);
    assert.ok(response.headers.get("x-gateway-request-id"));
    const s = await client.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }], stream: true })
      .withResponse();
    for await (const _ of s.data) { /* drain */ }
    assert.equal(s.response.headers.get("openai-organization"), null);
    const r = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] }),
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers["openai-organization"], undefined);
    assert.ok(!r.text.includes("org-secret"));
  });

  test("a slow stream arrives incrementally", async () => {
    script = { kind: "ok", text: "one two three four five six", chunks: 6, chunkDelayMs: 60 };
    const started = Date.now();
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "slow" }], stream: true,
    });
    let firstContentAt = 0;
    let text = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta?.content;
      if (delta && !firstContentAt) firstContentAt = Date.now();
      text += delta ?? "";
    }
    const endedAt = Date.now();
    assert.equal(text, "one two three four five six");
    // 10 events, 60 ms apart: the upstream needs ~540 ms; the first words must come well before the end
    assert.ok(endedAt - started >= 400, `total ${endedAt - started} ms`);
    assert.ok(endedAt - firstContentAt >= 250, `first content ${firstContentAt - started} ms, end ${endedAt - started} ms`);
  });

  test("client aborts mid-stream: the upstream connection is closed (after the usage drain) and the gateway stays healthy", async () => {
    endless.state.handler = endlessStream;
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: "gpt-4o-2024-08-06", messages: [{ role: "user", content: "never ends" }], stream: true },
      { signal: controller.signal },
    );
    let got = 0;
    // the SDK ends the iteration quietly on abort (or throws an abort error): both are fine
    try {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content) got++;
        if (got === 3) controller.abort();
      }
    } catch (err) {
      assert.match(`${(err as Error).name} ${(err as Error).message}`, /abort/i);
    }
    assert.equal(got, 3);
    assert.equal(endless.state.requests, 1);
    await eventually(() => endless.state.closedEarly === 1, 3000, "upstream response socket to close");
    // the gateway is fine: health, another request, and nothing left in flight
    const health = await rawRequest(`${gw.url}/healthz`);
    assert.equal(health.status, 200);
    script = { kind: "ok", text: "still here" };
    const out = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] });
    assert.equal(out.choices[0].message.content, "still here");
    await eventually(async () => /^gateway_inflight_requests 0$/m.test(await registry.metrics()), 3000, "inflight back to 0");
    // the aborted request was still recorded once
    await eventually(() => sink.records.some((r) => r.modelName === "gpt-4o-2024-08-06"), 3000, "aborted request recorded");
    assert.equal(sink.records.filter((r) => r.modelName === "gpt-4o-2024-08-06").length, 1);
  });

  test("client aborts while waiting for a non-stream answer: the upstream request is cancelled (after the usage drain)", async () => {
    endless.state.handler = () => { /* never answers */ };
    const before = endless.state.requests;
    const closedBefore = endless.state.closedEarly;
    const recordsBefore = sink.records.length;
    const controller = new AbortController();
    const pending = client.chat.completions.create(
      { model: "gpt-4o-2024-08-06", messages: [{ role: "user", content: "wait" }] },
      { signal: controller.signal },
    );
    await eventually(() => endless.state.requests > before, 3000, "the request to reach the upstream");
    controller.abort();
    await assert.rejects(pending, (err: unknown) => err instanceof OpenAI.APIUserAbortError);
    await eventually(() => endless.state.closedEarly > closedBefore, 3000, "the upstream request to be cancelled");
    await eventually(() => sink.records.length > recordsBefore, 3000, "the request to be recorded");
    assert.equal(sink.records[sink.records.length - 1].status, 499);
  });

  test("an SSE stream fragmented mid-event with CRLF line endings is relayed and usage still stripped", async () => {
    // the whole upstream stream, written a few bytes at a time
    const base = { id: "chatcmpl-frag", object: "chat.completion.chunk", created: 1, model: "gpt-4o-2024-08-06" };
    const words = ["Frag", "mented ", "but ", "whole — ünïcödé ✓"];
    let asked: unknown;
    endless.state.handler = (body, res) => {
      asked = body.stream_options;
      const events = [
        ...words.map((w) => ({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }], usage: null })),
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
        { ...base, choices: [], usage: fakeUsage },
      ];
      const bytes = Buffer.from(events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join("") + "data: [DONE]\r\n\r\n");
      res.writeHead(200, { "content-type": "text/event-stream" });
      let at = 0;
      const tick = () => {
        if (res.destroyed) return;
        res.write(bytes.subarray(at, at + 7)); // 7 bytes: splits events, CRLFs and UTF-8 sequences
        at += 7;
        if (at < bytes.length) setTimeout(tick, 0);
        else res.end();
      };
      tick();
    };
    const recordsBefore = sink.records.length;
    const stream = await client.chat.completions.create({
      model: "gpt-4o-2024-08-06", messages: [{ role: "user", content: "x" }], stream: true,
    });
    const all: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) all.push(chunk);
    assert.deepEqual(asked, { include_usage: true });
    assert.equal(all.map((c) => c.choices[0]?.delta?.content ?? "").join(""), words.join(""));
    assert.ok(all.every((c) => c.choices.length > 0 && !c.usage), "the usage-only chunk was stripped");
    assert.equal(all[all.length - 1].choices[0].finish_reason, "stop");
    await eventually(() => sink.records.length > recordsBefore, 2000, "usage record");
    assert.deepEqual(sink.records[sink.records.length - 1].usage, expectedUsage);
  });

  test("the request id is the gateway's own, keys the usage record, and is not overridden by an upstream's", async () => {
    // an upstream that is itself a gateway answers with its own X-Gateway-Request-Id
    endless.state.handler = (body, res) => {
      res.writeHead(200, { "content-type": "application/json", "x-gateway-request-id": "upstream-gateway-id-1" });
      res.end(JSON.stringify({
        id: "chatcmpl-chained", object: "chat.completion", created: 1, model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: "chained" }, finish_reason: "stop" }], usage: fakeUsage,
      }));
    };
    const recordsBefore = sink.records.length;
    const { data, response } = await client.chat.completions
      .create({ model: "gpt-4o-2024-08-06", messages: [{ role: "user", content: "x" }] })
      .withResponse();
    assert.equal(data.choices[0].message.content, "chained");
    const id = response.headers.get("x-gateway-request-id");
    assert.notEqual(id, "upstream-gateway-id-1", "the upstream's request id replaced the gateway's");
    await eventually(() => sink.records.length > recordsBefore, 2000, "usage record");
    assert.equal(id, sink.records[sink.records.length - 1].id, "the header id keys the usage record");
  });
});
