// Billing end to end through the real gateway: the exact charge of a request (by hand,
// to the nano-unit), which model name is billed, streams with and without usage, estimates,
// client aborts, failover, failures that cost nothing, pre-deduction, token quota and user
// balance, top-up on reload, a reservation race, the dashboard endpoints and the metrics.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { fakeUsage, startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { registry } from "../../src/observability/metrics.js";
import { formatNano } from "../../src/billing/cost.js";
import type { UsageEntry } from "../../src/state/store.js";
import {
  TOKEN, channel, completionAnswer, config, rawRequest, startRawUpstream, streamAnswer, token,
  type Obj, type RawResponse, type RawUpstream,
} from "./support.js";

/** Price list of these tests (per 1M tokens). */
const models: Obj = {
  "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6, cache_read_ratio: 0.5 } },
  // What model_map renames gpt-4o-mini to upstream: priced far higher, so billing by it would show.
  "gpt-4o-mini-2024-07-18": { endpoint: "chat", price: { input: 100, output: 100 } },
  // Only output costs: 5 completion tokens × 1/1M × 0.7 = 3500 nano per request.
  "out-only": { endpoint: "chat", price: { input: 0, output: 1 } },
  "race-model": { endpoint: "chat", price: { input: 1, output: 1 } },
  "metrics-model": { endpoint: "chat", price: { input: 0.15, output: 0.6, cache_read_ratio: 0.5 } },
};
const allModels = Object.keys(models);

/**
 * The fake's usage (prompt 12 incl. 2 cached, completion 5 incl. 1 reasoning) at
 * input 0.15, output 0.6, cache_read_ratio 0.5, group multiplier 0.7, by hand:
 *   10 × 0.15 + 2 × 0.15 × 0.5 + 5 × 0.6 = 1.5 + 0.15 + 3 = 4.65 per 1M tokens
 *   4.65 / 1e6 × 0.7 = 0.000003255 = 3255 nano-units.
 */
const FAKE_COST = 3255n;
/** 5 output tokens × 1 / 1M × 0.7. */
const OUT_ONLY_COST = 3500n;
const expectedUsage = { input: 10, cacheRead: 2, cacheWrite: 0, output: 5, reasoning: 1 };

/** nano-units → the currency as a float, for the float-valued dashboard/metrics fields. */
const units = (nano: bigint) => Number(nano) / 1e9;

/** Cost in nano of `usage` at input/output nano-per-1M and multiplier 0.7 (no cache terms), rounded half up. */
function costByHand(usage: { input: number; output: number }, inputNanoPer1M: bigint, outputNanoPer1M: bigint): bigint {
  const scaled = (BigInt(usage.input) * inputNanoPer1M + BigInt(usage.output) * outputNanoPer1M) * 7n; // × 0.7 → ×7 / 10
  const divisor = 1_000_000n * 10n;
  return (scaled + divisor / 2n) / divisor;
}

async function entryOf(gw: TestGateway, requestId: string | null): Promise<UsageEntry> {
  assert.ok(requestId, "the response carries X-Gateway-Request-Id");
  let found: UsageEntry | undefined;
  await eventually(() => (found = gw.store.logs({ requestId })[0]) !== undefined, 3000, `usage entry ${requestId}`);
  return found!;
}

function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, "content-type": "application/json" };
}

function post(gw: TestGateway, key: string, body: Obj): Promise<RawResponse> {
  return rawRequest(`${gw.url}/v1/chat/completions`, { method: "POST", headers: bearer(key), body: JSON.stringify(body) });
}

const ask = (model = "gpt-4o-mini", extra: Obj = {}) => ({ model, messages: [{ role: "user" as const, content: "hello" }], ...extra });

describe("billing", () => {
  let fake: FakeOpenAI;
  let fake2: FakeOpenAI;
  let script: Script = { kind: "ok" };
  let script2: Script = { kind: "ok" };
  let raw: RawUpstream;
  const open: TestGateway[] = [];

  before(async () => {
    fake = await startFakeOpenAI({ name: "one", script: () => script });
    fake2 = await startFakeOpenAI({ name: "two", script: () => script2 });
    raw = await startRawUpstream((body, res) => completionAnswer(res, body.model, "raw", fakeUsage));
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    script = { kind: "ok" };
    script2 = { kind: "ok" };
    fake.received.length = 0;
    fake2.received.length = 0;
  });
  after(async () => {
    await fake?.close();
    await fake2?.close();
    await raw?.close();
    destroyAgents();
  });

  async function gateway(parts: Parameters<typeof config>[0] = {}): Promise<TestGateway> {
    const gw = await startTestGateway(config({
      models,
      channels: [channel("main", fake.url, { models: allModels })],
      ...parts,
    }));
    open.push(gw);
    return gw;
  }

  const sdk = (gw: TestGateway, key = TOKEN, maxRetries = 0) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries });

  test("the charged cost is exact, keyed by X-Gateway-Request-Id, and equals token and user spend", async () => {
    const gw = await gateway();
    const { data, response } = await sdk(gw).chat.completions.create(ask()).withResponse();
    assert.deepEqual(data.usage, fakeUsage);
    const e = await entryOf(gw, response.headers.get("x-gateway-request-id"));
    assert.equal(e.costNano, FAKE_COST);
    assert.deepEqual(e.usage, expectedUsage);
    assert.equal(e.estimated, false);
    assert.equal(e.status, 200);
    assert.equal(e.token, "alice-main");
    assert.equal(e.user, "alice");
    assert.equal(e.group, "default");
    assert.equal(e.model, "gpt-4o-mini");
    assert.equal(e.channel, "main");
    assert.equal(e.upstreamProtocol, "openai");
    assert.equal(e.error, undefined);
    assert.equal(gw.store.spentByToken("alice-main"), FAKE_COST);
    assert.equal(gw.store.spentByUser("alice"), FAKE_COST);
    assert.equal(gw.ledger.spentByUser("alice"), FAKE_COST);
    assert.equal(gw.ledger.reservedByUser("alice"), 0n);
  });

  test("model_map: billed at the client's model's price, the upstream name only recorded", async () => {
    const gw = await gateway({
      channels: [channel("mapped", fake.url, { models: allModels, model_map: { "gpt-4o-mini": "gpt-4o-mini-2024-07-18" } })],
    });
    const { response } = await sdk(gw).chat.completions.create(ask()).withResponse();
    assert.equal(fake.received[0].body.model, "gpt-4o-mini-2024-07-18");
    const e = await entryOf(gw, response.headers.get("x-gateway-request-id"));
    assert.equal(e.model, "gpt-4o-mini");
    assert.equal(e.upstreamModel, "gpt-4o-mini-2024-07-18");
    assert.equal(e.costNano, FAKE_COST);
    assert.equal(gw.store.spentByUser("alice"), FAKE_COST);
  });

  test("streams bill the same with include_usage and without (the gateway asked upstream for usage)", async () => {
    const gw = await gateway();
    const ids: (string | null)[] = [];
    for (const options of [{ stream_options: { include_usage: true } }, {}]) {
      const { data, response } = await sdk(gw).chat.completions.create({ ...ask(), stream: true, ...options }).withResponse();
      for await (const _ of data) { /* drain */ }
      ids.push(response.headers.get("x-gateway-request-id"));
      assert.deepEqual(fake.received[fake.received.length - 1].body.stream_options, { include_usage: true });
    }
    for (const id of ids) {
      const e = await entryOf(gw, id);
      assert.equal(e.costNano, FAKE_COST);
      assert.deepEqual(e.usage, expectedUsage);
      assert.equal(e.estimated, false);
    }
    assert.equal(gw.store.spentByUser("alice"), 2n * FAKE_COST);
  });

  test("an upstream stream with no usage chunk is a billing fault: billed at the reservation, marked estimated, never zero", async () => {
    raw.state.handler = (body, res) => streamAnswer(res, body.model, ["An ", "answer ", "without ", "any usage."], null);
    const gw = await gateway({ channels: [channel("raw", raw.url, { models: allModels })] });
    const { data, response } = await sdk(gw).chat.completions.create({ ...ask("out-only"), stream: true }).withResponse();
    let text = "";
    for await (const c of data) text += c.choices[0]?.delta?.content ?? "";
    assert.equal(text, "An answer without any usage.");
    const e = await entryOf(gw, response.headers.get("x-gateway-request-id"));
    assert.equal(e.estimated, true);
    // The reservation's usage: the body at 3 bytes a token, and the model's default output cap.
    assert.ok(e.usage.input > 0, JSON.stringify(e.usage));
    assert.equal(e.usage.output, 4096);
    assert.ok(e.costNano > 0n);
    // the charge is the price of the usage recorded
    assert.equal(e.costNano, costByHand(e.usage, 0n, 1_000_000_000n));
    assert.equal(gw.store.spentByUser("alice"), e.costNano);
    assert.equal(gw.ledger.reservedByUser("alice"), 0n);
  });

  test("a non-stream answer with no usage is billed at the reservation too", async () => {
    raw.state.handler = (body, res) => completionAnswer(res, body.model, "an answer without usage, twelve words or so long", null);
    const gw = await gateway({ channels: [channel("raw", raw.url, { models: allModels })] });
    const { response } = await sdk(gw).chat.completions.create(ask("out-only")).withResponse();
    const e = await entryOf(gw, response.headers.get("x-gateway-request-id"));
    assert.equal(e.estimated, true);
    assert.equal(e.usage.output, 4096);
    assert.equal(e.costNano, costByHand(e.usage, 0n, 1_000_000_000n));
    assert.ok(e.costNano > 0n);
  });

  test("client aborts mid-stream: read on briefly for usage, recorded once, estimated, charged > 0, reservation released", async () => {
    raw.state.handler = (body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const base = { id: "chatcmpl-endless", object: "chat.completion.chunk", created: 1, model: body.model };
      let n = 0;
      const timer = setInterval(() => {
        res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: `word${n++} ` }, finish_reason: null }] })}\n\n`);
      }, 15);
      res.on("close", () => clearInterval(timer));
    };
    // The endless upstream never reports usage: it is read on for the drain time, then closed.
    const gw = await gateway({ channels: [channel("raw", raw.url, { models: allModels })], server: { usage_drain_timeout: "300ms" } });
    const closedBefore = raw.state.closedEarly;
    const controller = new AbortController();
    const { data, response } = await sdk(gw).chat.completions
      .create({ ...ask("gpt-4o-mini"), stream: true }, { signal: controller.signal })
      .withResponse();
    let got = 0;
    try {
      for await (const c of data) {
        if (c.choices[0]?.delta?.content) got++;
        if (got === 3) controller.abort();
      }
    } catch (err) {
      assert.match(`${(err as Error).name} ${(err as Error).message}`, /abort/i);
    }
    await eventually(() => raw.state.closedEarly > closedBefore, 3000, "the upstream stream to be cancelled");
    const e = await entryOf(gw, response.headers.get("x-gateway-request-id"));
    assert.equal(e.estimated, true);
    assert.ok(e.costNano > 0n, `cost ${e.costNano}`);
    assert.ok(e.usage.output > 0, "output estimated from the text relayed before the abort");
    // At least the 300 ms it was read on for, at 200 tokens a second (cutAnswerUsage).
    assert.ok(e.usage.output >= 60, `output ${e.usage.output} counts the time the upstream was read`);
    assert.equal(gw.store.logs({}).length, 1, "recorded exactly once");
    assert.equal(gw.store.spentByUser("alice"), e.costNano);
    assert.equal(gw.ledger.reservedByUser("alice"), 0n);
  });

  test("failover (first channel 500, second ok) charges once", async () => {
    script = { kind: "error", status: 500 };
    const gw = await gateway({
      channels: [
        channel("first", fake.url, { models: allModels, priority: 10 }),
        channel("second", fake2.url, { models: allModels }),
      ],
    });
    const { response } = await sdk(gw).chat.completions.create(ask()).withResponse();
    assert.equal(fake.received.length, 1);
    assert.equal(fake2.received.length, 1);
    const e = await entryOf(gw, response.headers.get("x-gateway-request-id"));
    assert.equal(e.channel, "second");
    assert.equal(e.costNano, FAKE_COST);
    assert.equal(gw.store.logs({}).length, 1);
    assert.equal(gw.store.spentByUser("alice"), FAKE_COST);
    assert.equal(gw.store.spentByToken("alice-main"), FAKE_COST);
    assert.equal(gw.ledger.reservedByUser("alice"), 0n);
  });

  test("an upstream 400 costs nothing and releases the reservation", async () => {
    script = { kind: "error", status: 400, message: "bad request from upstream" };
    const gw = await gateway();
    const err = await sdk(gw).chat.completions.create(ask()).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    const e = await entryOf(gw, err.headers.get("x-gateway-request-id"));
    assert.equal(e.status, 400);
    assert.equal(e.costNano, 0n);
    assert.equal(gw.store.spentByUser("alice"), 0n);
    assert.equal(gw.store.spentByToken("alice-main"), 0n);
    assert.equal(gw.ledger.reservedByUser("alice"), 0n);
  });

  test("every channel failing costs nothing and releases the reservation", async () => {
    script = { kind: "error", status: 500 };
    script2 = { kind: "error", status: 503 };
    const gw = await gateway({
      channels: [
        channel("first", fake.url, { models: allModels, priority: 10 }),
        channel("second", fake2.url, { models: allModels }),
      ],
    });
    const r = await post(gw, TOKEN, ask());
    assert.ok(r.status >= 500, `status ${r.status}`);
    assert.equal(fake.received.length + fake2.received.length, 2);
    const e = await entryOf(gw, r.headers["x-gateway-request-id"] as string);
    assert.equal(e.costNano, 0n);
    assert.equal(e.status, r.status);
    assert.equal(gw.store.spentByUser("alice"), 0n);
    assert.equal(gw.ledger.reservedByUser("alice"), 0n);
  });

  test("pre-deduction: a large max_tokens against a tiny balance → 402 pre_deduction_failed stating both amounts", async () => {
    const KEY = "sk-gw-test-tiny-0000000001";
    const gw = await gateway({
      users: { alice: { credit: 100, groups: ["default"] }, tiny: { credit: 0.001, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN), token("tiny-main", KEY, { user: "tiny" })],
    });
    const r = await post(gw, KEY, ask("gpt-4o-mini", { max_tokens: 100_000 }));
    assert.equal(r.status, 402, r.text);
    assert.equal(r.json.error.code, "pre_deduction_failed");
    assert.equal(fake.received.length, 0, "nothing reached the upstream");
    const message: string = r.json.error.message;
    assert.match(message, /remaining balance is 0\.001\b/, message);
    const required = /pre-deduction of (\d+(?:\.\d+)?)/.exec(message);
    assert.ok(required, message);
    // at least the output cap (100000 × 0.6 / 1M × 0.7 = 0.042), at most that plus every body byte as a token
    const bytes = Buffer.byteLength(JSON.stringify(ask("gpt-4o-mini", { max_tokens: 100_000 })));
    const requiredUnits = Number(required[1]);
    assert.ok(requiredUnits >= 0.042, message);
    assert.ok(requiredUnits <= 0.042 + (bytes * 0.15 / 1e6) * 0.7 + 1e-9, message);
    assert.equal(gw.ledger.reservedByUser("tiny"), 0n);
    // the same request with a modest max_tokens fits
    const out = await sdk(gw, KEY).chat.completions.create(ask("gpt-4o-mini", { max_tokens: 100 }));
    assert.equal(out.choices[0].message.content, "one says: hello");
    await eventually(() => gw.store.spentByUser("tiny") === FAKE_COST, 3000, "tiny's spend");
  });

  test("token quota used up → 401 token_quota_exhausted", async () => {
    const gw = await gateway({ tokens: [token("alice-main", TOKEN, { quota: 0.0000105 })] });
    const client = sdk(gw);
    for (let i = 0; i < 3; i++) await client.chat.completions.create(ask("out-only", { max_tokens: 1 }));
    await eventually(() => gw.store.spentByToken("alice-main") === 3n * OUT_ONLY_COST, 3000, "three charges");
    const hits = fake.received.length;
    const err = await client.chat.completions.create(ask("out-only", { max_tokens: 1 })).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.code, "token_quota_exhausted");
    assert.equal(fake.received.length, hits, "the refused request never reached the upstream");
  });

  test("user balance used up → 402 insufficient_quota, not retried by the SDK; raising credit on reload tops up", async () => {
    const KEY = "sk-gw-test-bob-00000000001";
    const parts = (credit: number) => ({
      users: { alice: { credit: 100, groups: ["default"] }, bob: { credit, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN), token("bob-main", KEY, { user: "bob" })],
    });
    const gw = await gateway(parts(0.0000105));
    let calls = 0;
    const counting = new OpenAI({
      apiKey: KEY, baseURL: `${gw.url}/v1`, // default maxRetries (2)
      fetch: (input, init) => { calls++; return fetch(input, init); },
    });
    for (let i = 0; i < 3; i++) await counting.chat.completions.create(ask("out-only", { max_tokens: 1 }));
    await eventually(() => gw.store.spentByUser("bob") === 3n * OUT_ONLY_COST, 3000, "three charges");
    const hits = fake.received.length;
    calls = 0;
    const err = await counting.chat.completions.create(ask("out-only", { max_tokens: 1 })).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 402);
    assert.equal(err.code, "insufficient_quota");
    assert.equal(calls, 1, "the SDK did not retry the 402");
    assert.equal(fake.received.length, hits, "nothing reached the upstream");

    // the balance endpoints still answer with the money gone
    const sub = await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: bearer(KEY) });
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.json.hard_limit_usd, 0.0000105);
    assert.equal(sub.json.balance, 0, "credit − spent: nothing left");
    const usage = await rawRequest(`${gw.url}/v1/dashboard/billing/usage`, { headers: bearer(KEY) });
    assert.equal(usage.status, 200, usage.text);
    assert.ok(Math.abs(usage.json.total_usage - units(3n * OUT_ONLY_COST) * 100) < 1e-12, usage.text);

    // top up by raising credit in the config
    gw.swapConfig(config({ models, channels: [channel("main", fake.url, { models: allModels })], ...parts(1) }));
    const out = await counting.chat.completions.create(ask("out-only", { max_tokens: 1 }));
    assert.ok(out.choices[0].message.content);
    await eventually(() => gw.store.spentByUser("bob") === 4n * OUT_ONLY_COST, 3000, "the fourth charge");
    const after = await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: bearer(KEY) });
    assert.equal(after.json.hard_limit_usd, 1);
    assert.equal(after.json.balance, 0.999986, "1 − 4 × 0.0000035");
  });

  test("reservation race: 30 concurrent requests never overspend and every reservation is released", async () => {
    const KEY = "sk-gw-test-carol-000000001";
    // An honest upstream: reports prompt 20 and as many completion tokens as max_tokens
    // allows (the worst case the reservation covered); held until the test releases it.
    let gate = true;
    const held: (() => void)[] = [];
    raw.state.handler = (body, res) => {
      const answer = () => completionAnswer(res, body.model, "x", {
        prompt_tokens: 20, completion_tokens: body.max_tokens as number, total_tokens: 20 + (body.max_tokens as number),
      });
      if (gate) held.push(answer); else answer();
    };
    const CREDIT = 0.0037;
    const creditNano = 3_700_000n;
    const gw = await gateway({
      channels: [channel("raw", raw.url, { models: allModels })],
      users: { alice: { credit: 100, groups: ["default"] }, carol: { credit: CREDIT, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN), token("carol-main", KEY, { user: "carol" })],
    });
    const body = ask("race-model", { max_tokens: 1000 });
    const requestsBefore = raw.state.requests;

    // wave 1, upstream held: exactly as many as fit are admitted, the rest refused at once
    const wave: RawResponse[] = [];
    const pending = Array.from({ length: 30 }, () => post(gw, KEY, body).then((r) => { wave.push(r); return r; }));
    await eventually(() => wave.length + (raw.state.requests - requestsBefore) === 30, 5000, "every request admitted or refused");
    const admitted = raw.state.requests - requestsBefore;
    assert.ok(wave.every((r) => r.status === 402 && r.json.error.code === "pre_deduction_failed"), wave.map((r) => r.text).join("\n"));
    const required = /pre-deduction of (\d+(?:\.\d+)?)/.exec(wave[0].json.error.message);
    assert.ok(required);
    const reservation = BigInt(Math.round(Number(required[1]) * 1e9));
    assert.equal(BigInt(admitted), creditNano / reservation, `admitted ${admitted} at ${reservation} nano each`);
    assert.ok(admitted >= 2 && admitted <= 10, `admitted ${admitted}`);
    assert.equal(gw.ledger.reservedByUser("carol"), BigInt(admitted) * reservation);
    gate = false;
    for (const release of held.splice(0)) release();
    const results = await Promise.all(pending);
    assert.equal(results.filter((r) => r.status === 200).length, admitted);

    // more waves, unheld, until the balance cannot cover another request
    for (let round = 0; round < 20; round++) {
      const rs = await Promise.all(Array.from({ length: 30 }, () => post(gw, KEY, body)));
      for (const r of rs) assert.ok(r.status === 200 || r.status === 402, `${r.status} ${r.text}`);
      await eventually(() => gw.ledger.reservedByUser("carol") === 0n, 3000, "reservations released");
      assert.ok(gw.store.spentByUser("carol") <= creditNano, `spent ${gw.store.spentByUser("carol")} > credit ${creditNano}`);
      if (rs.every((r) => r.status === 402)) break;
    }
    const final = await post(gw, KEY, body);
    assert.equal(final.status, 402);
    await eventually(() => gw.ledger.reservedByUser("carol") === 0n, 3000, "reservations released");
    const entries = gw.store.logs({ user: "carol", limit: 10_000 });
    const sum = entries.reduce((s, e) => s + e.costNano, 0n);
    assert.equal(sum, gw.store.spentByUser("carol"));
    assert.equal(sum, gw.store.spentByToken("carol-main"));
    assert.ok(sum <= creditNano, `sum of costs ${sum} > credit ${creditNano}`);
    assert.ok(sum > 0n);
  });

  test("dashboard endpoints: credit or token quota as the limit, spend × 100 as usage", async () => {
    const QKEY = "sk-gw-test-quota-000000001";
    const gw = await gateway({
      tokens: [token("alice-main", TOKEN), token("alice-quota", QKEY, { quota: 5, expires: "2030-01-01T00:00:00Z" })],
    });
    await sdk(gw).chat.completions.create(ask());
    await sdk(gw, QKEY).chat.completions.create(ask());
    await sdk(gw, QKEY).chat.completions.create(ask());
    await eventually(() => gw.store.spentByUser("alice") === 3n * FAKE_COST, 3000, "three charges");

    const get = (path: string, key: string) => rawRequest(`${gw.url}/v1/dashboard/billing/${path}`, { headers: bearer(key) });
    const sub = await get("subscription", TOKEN);
    assert.equal(sub.status, 200);
    assert.match(String(sub.headers["content-type"]), /^application\/json/);
    assert.ok(sub.headers["x-gateway-request-id"]);
    assert.deepEqual(sub.json, {
      object: "billing_subscription", has_payment_method: true,
      soft_limit_usd: 100, hard_limit_usd: 100, system_hard_limit_usd: 100, access_until: 0,
      balance: Number(formatNano(100_000_000_000n - 3n * FAKE_COST)),
    });
    const usage = await get("usage", TOKEN);
    assert.equal(usage.json.object, "list");
    assert.ok(Math.abs(usage.json.total_usage - units(3n * FAKE_COST) * 100) < 1e-12, usage.text);

    const qsub = await get("subscription", QKEY);
    assert.equal(qsub.json.hard_limit_usd, 5);
    assert.equal(qsub.json.balance, sub.json.balance, "balance: the user's money left, whichever token asks");
    assert.equal(qsub.json.access_until, Date.parse("2030-01-01T00:00:00Z") / 1000);
    const qusage = await get("usage", QKEY);
    assert.ok(Math.abs(qusage.json.total_usage - units(2n * FAKE_COST) * 100) < 1e-12, qusage.text);

    // the dashboard is not a billed request
    assert.equal(gw.store.spentByUser("alice"), 3n * FAKE_COST);
    assert.equal((await rawRequest(`${gw.url}/v1/dashboard/billing/usage`)).status, 401);
  });

  test("/metrics: gateway_cost_total{model,group} and gateway_tokens_total{model,kind}", async () => {
    const gw = await gateway();
    for (let i = 0; i < 2; i++) await sdk(gw).chat.completions.create(ask("metrics-model"));
    await eventually(() => gw.store.spentByUser("alice") === 2n * FAKE_COST, 3000, "two charges");
    const text = (await rawRequest(`${gw.url}/metrics`)).text;
    const value = (name: string, labels: Record<string, string>): number | undefined => {
      for (const line of text.split("\n")) {
        const m = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
        if (!m || m[1] !== name) continue;
        const got = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
        if (Object.entries(labels).every(([k, v]) => got[k] === v) && Object.keys(got).length === Object.keys(labels).length) {
          return Number(m[3]);
        }
      }
      return undefined;
    };
    const cost = value("gateway_cost_total", { model: "metrics-model", group: "default" });
    assert.ok(cost !== undefined && Math.abs(cost - units(2n * FAKE_COST)) < 1e-15, `cost ${cost}\n${text}`);
    assert.equal(value("gateway_tokens_total", { model: "metrics-model", kind: "input" }), 20);
    assert.equal(value("gateway_tokens_total", { model: "metrics-model", kind: "cache_read" }), 4);
    assert.equal(value("gateway_tokens_total", { model: "metrics-model", kind: "output" }), 10);
    assert.equal(value("gateway_tokens_total", { model: "metrics-model", kind: "reasoning" }), 2);
    assert.equal(value("gateway_tokens_total", { model: "metrics-model", kind: "cache_write" }), undefined);
    assert.ok((await registry.metrics()).includes("gateway_cost_total"));
  });
});
