// Slow and idle clients: request headers must arrive within server.header_timeout and a
// request body may not stall longer than server.body_timeout (an idle bound: a slow but
// steady upload goes through). Each is answered 408 in the caller's shape where it still can
// be, then closed; hundreds of such connections do not hold up normal requests.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { startFakeTolerant, type FakeTolerant } from "../helpers/fake-tolerant.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { requestBytes } from "../helpers/raw-http.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, channel, config, postChat, hello } from "./support.js";

const HEADER_TIMEOUT_MS = 1000;
const BODY_TIMEOUT_MS = 1000;
/** How late past its bound a slow connection may be dropped (node checks headers every 250 ms here). */
const SLACK_MS = 1500;

/** A raw connection that records what it receives and when it closed. */
async function connect(port: number) {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((r) => socket.once("connect", () => r()));
  const opened = Date.now();
  const state = { received: "", closedAfterMs: -1 };
  socket.on("data", (c: Buffer) => { state.received += c.toString("latin1"); });
  socket.on("error", () => {});
  socket.on("close", () => { state.closedAfterMs = Date.now() - opened; });
  return { socket, state, closed: () => state.closedAfterMs >= 0 };
}

/** Writes `text` a byte every `everyMs` until the socket closes. */
function trickle(socket: net.Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]);
  }, everyMs);
  socket.once("close", () => clearInterval(timer));
}

const chatBody = Buffer.from(JSON.stringify(hello));
const chatHead = (extra: [string, string][] = []) => requestBytes("POST", "/v1/chat/completions", [
  ["host", "x"], ["authorization", `Bearer ${TOKEN}`], ["content-type", "application/json"],
  ["content-length", String(chatBody.length)], ...extra,
]);

/** The JSON body of a raw response. */
function bodyOf(raw: string): Record<string, any> {
  return JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4));
}

describe("slow and idle clients", () => {
  let fake: FakeTolerant;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeTolerant();
    gw = await startTestGateway(config({
      server: { header_timeout: `${HEADER_TIMEOUT_MS}ms`, body_timeout: `${BODY_TIMEOUT_MS}ms` },
      channels: [
        channel("oa", fake.url),
        { name: "an", protocol: "anthropic", base_url: fake.url, keys: [CHANNEL_KEY], groups: ["default"], models: ["claude-sonnet-4-5"] },
        { name: "ge", protocol: "gemini", base_url: fake.url, keys: [CHANNEL_KEY], groups: ["default"], models: ["gemini-2.5-flash"] },
      ],
    }));
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("headers sent a byte at a time are cut off at header_timeout with a 408 and a request id", async () => {
    const c = await connect(gw.port);
    trickle(c.socket, chatHead().toString("latin1"), 100);
    const silent = await connect(gw.port); // sends nothing at all
    await eventually(() => c.closed() && silent.closed(), HEADER_TIMEOUT_MS + SLACK_MS + 500, "both connections to be closed");
    for (const { state } of [c, silent]) {
      assert.ok(state.closedAfterMs >= HEADER_TIMEOUT_MS - 50 && state.closedAfterMs <= HEADER_TIMEOUT_MS + SLACK_MS, `closed after ${state.closedAfterMs} ms`);
    }
    assert.match(c.state.received, /^HTTP\/1\.1 408 /);
    assert.match(c.state.received, /X-Gateway-Request-Id: \S+/i);
    assert.equal(bodyOf(c.state.received).error.code, "request_timeout");
  });

  test("a body that stalls is answered 408 in the caller's shape after body_timeout, then closed", async () => {
    const cases = [
      { path: "/v1/chat/completions", headers: [] as [string, string][], shape: (b: any) => b.error.code === "request_timeout" },
      { path: "/v1/messages", headers: [["anthropic-version", "2023-06-01"]] as [string, string][], shape: (b: any) => b.type === "error" && b.error.type === "timeout_error" },
      { path: "/v1beta/models/gemini-2.5-flash:generateContent", headers: [] as [string, string][], shape: (b: any) => b.error.code === 408 && b.error.status === "DEADLINE_EXCEEDED" },
    ];
    const conns = await Promise.all(cases.map(async ({ path, headers }) => {
      const c = await connect(gw.port);
      c.socket.write(requestBytes("POST", path, [
        ["host", "x"], ["authorization", `Bearer ${TOKEN}`], ["x-api-key", TOKEN], ["x-goog-api-key", TOKEN], ...headers,
        ["content-type", "application/json"], ["content-length", "100"],
      ], Buffer.from('{"model":"claude-sonnet-4-5","messa')));
      return c;
    }));
    await eventually(() => conns.every((c) => c.closed()), BODY_TIMEOUT_MS + SLACK_MS, "the stalled connections to be closed");
    cases.forEach(({ path, shape }, i) => {
      const { state } = conns[i];
      assert.ok(state.closedAfterMs >= BODY_TIMEOUT_MS - 50, `${path}: closed after ${state.closedAfterMs} ms`);
      assert.match(state.received, /^HTTP\/1\.1 408 /, path);
      assert.match(state.received, /X-Gateway-Request-Id: \S+/i, path);
      assert.ok(shape(bodyOf(state.received)), `${path}: ${state.received}`);
    });
    await eventually(() => gw.bodyBudget.inUse === 0, 1000, "the stalled bodies' bytes to be given back");
  });

  test("a slow but steady body is served: body_timeout bounds silence, not the whole upload", async () => {
    const c = await connect(gw.port);
    c.socket.write(chatHead([["connection", "close"]]));
    const pieces = 6;
    const size = Math.ceil(chatBody.length / pieces);
    for (let i = 0; i < pieces; i++) {
      c.socket.write(chatBody.subarray(i * size, (i + 1) * size));
      await new Promise((r) => setTimeout(r, BODY_TIMEOUT_MS * 0.4)); // the client's pace, not a wait for a condition
    }
    await eventually(() => c.closed(), 3000, "the answer");
    assert.ok(c.state.closedAfterMs > BODY_TIMEOUT_MS * 2, "the upload took longer than body_timeout in all");
    assert.match(c.state.received, /^HTTP\/1\.1 200 /);
  });

  test("a body refused before it is read (bad token) gets its answer at once; if the rest stalls, the connection is closed", async () => {
    const c = await connect(gw.port);
    c.socket.write(Buffer.concat([requestBytes("POST", "/v1/chat/completions", [
      ["host", "x"], ["authorization", "Bearer sk-nobody"], ["content-type", "application/json"], ["content-length", "1000"],
    ]), Buffer.from("{")]));
    await eventually(() => /^HTTP\/1\.1 401 /.test(c.state.received), 1000, "the 401");
    assert.equal(c.closed(), false, "kept open for the rest of the body");
    await eventually(() => c.closed(), BODY_TIMEOUT_MS + SLACK_MS, "the stalled connection to be closed");
    assert.ok(c.state.closedAfterMs >= BODY_TIMEOUT_MS - 50, `closed after ${c.state.closedAfterMs} ms`);
  });

  test("with hundreds of slow connections open, normal requests are answered promptly and the slow ones closed in time", async () => {
    const slowHeaders = await Promise.all(Array.from({ length: 150 }, () => connect(gw.port)));
    for (const c of slowHeaders) trickle(c.socket, chatHead().toString("latin1"), 250);
    const stalledBodies = await Promise.all(Array.from({ length: 150 }, async () => {
      const c = await connect(gw.port);
      c.socket.write(Buffer.concat([chatHead(), chatBody.subarray(0, 10)]));
      return c;
    }));
    const latencies: number[] = [];
    await Promise.all(Array.from({ length: 10 }, async () => {
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        const r = await postChat(gw.url, hello);
        latencies.push(Date.now() - started);
        assert.equal(r.status, 200, r.text);
      }
    }));
    const stillOpen = [...slowHeaders, ...stalledBodies].filter((c) => !c.closed()).length;
    latencies.sort((a, b) => a - b);
    const slowest = latencies.at(-1)!;
    assert.ok(slowest < 1000, `normal requests took up to ${slowest} ms (median ${latencies[latencies.length >> 1]} ms)`);
    assert.ok(stillOpen >= 200, `only ${stillOpen} slow connections were still open when the normal requests were done`);

    const all = [...slowHeaders, ...stalledBodies];
    await eventually(() => all.every((c) => c.closed()), Math.max(HEADER_TIMEOUT_MS, BODY_TIMEOUT_MS) + SLACK_MS + 1000, "every slow connection to be closed");
    const late = all.filter((c) => c.state.closedAfterMs > Math.max(HEADER_TIMEOUT_MS, BODY_TIMEOUT_MS) + SLACK_MS);
    assert.equal(late.length, 0, `closed late: ${late.map((c) => c.state.closedAfterMs).join(", ")}`);
    assert.ok(stalledBodies.every((c) => /^HTTP\/1\.1 408 /.test(c.state.received)), "every stalled body was answered 408");
    assert.equal(gw.bodyBudget.inUse, 0);
  });
});
