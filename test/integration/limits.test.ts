// Per-token rate limits end to end: request_rate counts requests that did not fail,
// total_requests counts every request (failed ones too); 429 rate_limited with
// "N requests per M minutes" and Retry-After; per token; reloads change the window while
// the counts (keyed by token name) persist; refused requests never reach the upstream.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, channel, config, hello, postChat, token, type Obj, type RawResponse } from "./support.js";

const OTHER = "sk-gw-test-alice-other-0001";

describe("rate limits", () => {
  let fake: FakeOpenAI;
  let script: Script = { kind: "ok" };
  const open: TestGateway[] = [];

  before(async () => {
    fake = await startFakeOpenAI({ name: "lim", script: () => script });
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    script = { kind: "ok" };
    fake.received.length = 0;
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
  });

  const yaml = (limits: Obj, tokens?: Obj[]) => config({
    limits,
    channels: [channel("main", fake.url)],
    tokens: tokens ?? [token("alice-main", TOKEN), token("alice-other", OTHER)],
  });

  async function gateway(limits: Obj, tokens?: Obj[]): Promise<TestGateway> {
    const gw = await startTestGateway(yaml(limits, tokens));
    open.push(gw);
    return gw;
  }

  const chat = (gw: TestGateway, key = TOKEN, body: Obj = hello) => postChat(gw.url, body, { authorization: `Bearer ${key}` });

  function assertLimited(r: RawResponse, pattern: RegExp, maxSeconds: number): void {
    assert.equal(r.status, 429, r.text);
    assert.equal(r.json.error.code, "rate_limited");
    assert.match(r.json.error.message, pattern);
    assert.ok(r.headers["x-gateway-request-id"]);
    const retry = Number(r.headers["retry-after"]);
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= maxSeconds, `Retry-After: ${r.headers["retry-after"]}`);
  }

  test("request_rate 3 per 1m: three succeed, the fourth is 429 rate_limited with Retry-After, never reaching upstream", async () => {
    const gw = await gateway({ request_rate: { max: 3, per: "1m" } });
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] });
    const err = await client.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] })
      .then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.RateLimitError, String(err));
    assert.equal(err.code, "rate_limited");
    assert.match(err.message, /3 requests per 1 minute/);
    assert.ok(err.headers.get("retry-after"));
    assertLimited(await chat(gw), /3 requests per 1 minute/, 60);
    assert.equal(fake.received.length, 3, "429s from the limiter never reach the upstream");
  });

  test("balance polls of chat front-ends (dashboard endpoints) do not use up the budget", async () => {
    const gw = await gateway({ request_rate: { max: 2, per: "1m" }, total_requests: { max: 2, per: "1m" } });
    for (const path of ["/v1/dashboard/billing/subscription", "/v1/dashboard/billing/usage", "/dashboard/billing/usage"]) {
      const r = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(r.status, 200, path);
    }
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw)).status, 200);
    assertLimited(await chat(gw), /2 requests per 1 minute/, 60);
  });

  test("request_rate: requests the upstream fails (400) do not count", async () => {
    const gw = await gateway({ request_rate: { max: 3, per: "1m" } });
    script = { kind: "error", status: 400 };
    for (let i = 0; i < 5; i++) assert.equal((await chat(gw)).status, 400);
    script = { kind: "ok" };
    for (let i = 0; i < 3; i++) assert.equal((await chat(gw)).status, 200);
    assertLimited(await chat(gw), /3 requests per 1 minute/, 60);
    assert.equal(fake.received.length, 8);
  });

  test("request_rate: requests the gateway refuses (unknown model) do not count", async () => {
    const gw = await gateway({ request_rate: { max: 2, per: "1m" } });
    for (let i = 0; i < 4; i++) assert.equal((await chat(gw, TOKEN, { ...hello, model: "no-such-model" })).status, 404);
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw)).status, 200);
    assertLimited(await chat(gw), /2 requests per 1 minute/, 60);
  });

  test("total_requests 4 per 1m counts failed requests: four upstream failures, then 429 though none succeeded", async () => {
    const gw = await gateway({ total_requests: { max: 4, per: "1m" } });
    script = { kind: "error", status: 400 };
    for (let i = 0; i < 4; i++) assert.equal((await chat(gw)).status, 400);
    script = { kind: "ok" };
    assertLimited(await chat(gw), /4 requests per 1 minute/, 60);
    assert.equal(fake.received.length, 4, "the refused request never reached the upstream");
  });

  test("total_requests counts gateway-side failures too (unknown model)", async () => {
    const gw = await gateway({ total_requests: { max: 2, per: "1m" } });
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw, TOKEN, { ...hello, model: "no-such-model" })).status, 404);
    assertLimited(await chat(gw), /2 requests per 1 minute/, 60);
    assert.equal(fake.received.length, 0);
  });

  test("both windows: failures fill total_requests but not request_rate; rate refusals count in neither", async () => {
    const gw = await gateway({ request_rate: { max: 2, per: "1m" }, total_requests: { max: 6, per: "5m" } });
    script = { kind: "error", status: 400 };
    for (let i = 0; i < 3; i++) assert.equal((await chat(gw)).status, 400); // total 3, rate 0
    script = { kind: "ok" };
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw)).status, 200); // total 5, rate 2
    for (let i = 0; i < 3; i++) assertLimited(await chat(gw), /Request rate limit.*2 requests per 1 minute/, 60);
    // loosen request_rate (counts persist): exactly one more fits total_requests
    gw.swapConfig(yaml({ request_rate: { max: 10, per: "1m" }, total_requests: { max: 6, per: "5m" } }));
    assert.equal((await chat(gw)).status, 200);
    const r = await chat(gw);
    assertLimited(r, /Total request limit/, 300);
    assert.match(r.json.error.message, /6 requests per 5 minutes/);
    assert.equal(fake.received.length, 6);
  });

  test("limits are per token: another token of the same user is unaffected", async () => {
    const gw = await gateway({ request_rate: { max: 2, per: "1m" } });
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw)).status, 200);
    assertLimited(await chat(gw), /2 requests per 1 minute/, 60);
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw, OTHER)).status, 200);
    assertLimited(await chat(gw, OTHER), /2 requests per 1 minute/, 60);
  });

  test("a reload changes the window while counts persist, keyed by token name", async () => {
    const gw = await gateway({ request_rate: { max: 3, per: "1m" } });
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw)).status, 200);
    // tighter: the two requests already made still count
    gw.swapConfig(yaml({ request_rate: { max: 2, per: "1m" } }));
    assertLimited(await chat(gw), /2 requests per 1 minute/, 60);
    // looser: room for exactly three more
    gw.swapConfig(yaml({ request_rate: { max: 5, per: "1m" } }));
    for (let i = 0; i < 3; i++) assert.equal((await chat(gw)).status, 200);
    assertLimited(await chat(gw), /5 requests per 1 minute/, 60);
    // a new key under the same token name inherits the count
    const NEW_KEY = "sk-gw-test-alice-rotated-01";
    gw.swapConfig(yaml({ request_rate: { max: 5, per: "1m" } }, [token("alice-main", NEW_KEY)]));
    assertLimited(await chat(gw, NEW_KEY), /5 requests per 1 minute/, 60);
    assert.equal(fake.received.length, 5);
    // a short window lets requests through again once the old hits have slid out
    gw.swapConfig(yaml({ request_rate: { max: 5, per: "300ms" } }, [token("alice-main", NEW_KEY)]));
    await eventually(async () => (await chat(gw, NEW_KEY)).status === 200, 3000, "the shorter window to admit again");
    assert.equal(fake.received.length, 6);
  });

  test("a sliding window: a 429 within the window, admitted again after it slides", async () => {
    const gw = await gateway({ request_rate: { max: 2, per: "400ms" } });
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw)).status, 200);
    const r = await chat(gw);
    assertLimited(r, /2 requests per 0\.4 seconds/, 1);
    await eventually(async () => (await chat(gw)).status === 200, 3000, "the window to slide");
    assert.equal(fake.received.length, 3);
  });
});
