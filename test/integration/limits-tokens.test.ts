// The limits held from admission to the request's end, end to end, on in-process state and
// on Redis + PostgreSQL: tokens per minute per token (counted from the usage answers report,
// checked against the request's estimate first) and per group (shared by its tokens),
// requests in flight per token, and a model's request rate shared by every token. Each
// refusal is a 429 in the caller's protocol (chat completions, messages, generate content)
// with Retry-After and a message naming the limit, and never reaches the upstream.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Redis } from "ioredis";
import { openPostgresUsageLog } from "../../src/state/postgres-log.js";
import { openRedisSharedState } from "../../src/state/redis.js";
import type { State } from "../../src/state/interfaces.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { deleteKeys, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { TOKEN, channel, config, token, type Obj } from "./support.js";

const OTHER = "sk-gw-test-alice-other-0001";
/** What the fake upstream reports a request used: 10 input + 2 cached + 5 output. */
const USED = 17;
const MODEL = "gpt-4o-mini";

type Shape = "chat" | "messages" | "generate";
const shapes: readonly Shape[] = ["chat", "messages", "generate"];

interface Answer {
  status: number;
  headers: Headers;
  json: any;
}

/** A request in `shape` asking for at most `maxTokens` output tokens. */
function requestOf(shape: Shape, maxTokens: number, key: string, stream = false): { path: string; headers: Record<string, string>; body: string } {
  const text = "hello there";
  switch (shape) {
    case "chat":
      return { path: "/v1/chat/completions", headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: MODEL, max_tokens: maxTokens, messages: [{ role: "user", content: text }], ...(stream ? { stream } : {}) }) };
    case "messages":
      return { path: "/v1/messages", headers: { "x-api-key": key, "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: MODEL, max_tokens: maxTokens, messages: [{ role: "user", content: text }] }) };
    case "generate":
      return { path: `/v1beta/models/${MODEL}:generateContent`, headers: { "x-goog-api-key": key },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }], generationConfig: { maxOutputTokens: maxTokens } }) };
  }
}

/** The gateway's worst-case estimate of a request: its body at 3 bytes a token plus its max output. */
function estimateOf(shape: Shape, maxTokens: number): number {
  return Math.ceil(Buffer.byteLength(requestOf(shape, maxTokens, TOKEN).body) / 3) + maxTokens;
}

async function send(gw: TestGateway, shape: Shape, opts: { maxTokens?: number; key?: string; signal?: AbortSignal; stream?: boolean } = {}): Promise<Answer> {
  const r = requestOf(shape, opts.maxTokens ?? 16, opts.key ?? TOKEN, opts.stream);
  const res = await fetch(`${gw.url}${r.path}`, {
    method: "POST", headers: { "content-type": "application/json", ...r.headers }, body: r.body, signal: opts.signal,
  });
  const text = await res.text();
  let json: unknown;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, json };
}

/** The error message in the caller's protocol's error body (error.message in all three). */
function messageOf(a: Answer): string {
  return a.json.error.message;
}

/** A 429 in the shape's own error body, naming the limit, with Retry-After in [min, max] s. */
function assertLimited(shape: Shape, a: Answer, pattern: RegExp, retry: [min: number, max: number]): void {
  assert.equal(a.status, 429, JSON.stringify(a.json));
  if (shape === "chat") assert.equal(a.json.error.code, "rate_limited");
  if (shape === "messages") assert.deepEqual([a.json.type, a.json.error.type], ["error", "rate_limit_error"]);
  if (shape === "generate") assert.deepEqual([a.json.error.code, a.json.error.status], [429, "RESOURCE_EXHAUSTED"]);
  assert.match(messageOf(a), pattern);
  assert.ok(a.headers.get("x-gateway-request-id"));
  const seconds = Number(a.headers.get("retry-after"));
  assert.ok(Number.isInteger(seconds) && seconds >= retry[0] && seconds <= retry[1], `Retry-After: ${a.headers.get("retry-after")}`);
}

interface StateKind {
  readonly name: string;
  /** State for one gateway (undefined: the test gateway's in-process state). */
  open(): Promise<State | undefined>;
  setUp?(): Promise<void>;
  tearDown?(): Promise<void>;
}

const inProcess: StateKind = { name: "in-process state", open: async () => undefined };

function sharedKind(): StateKind {
  const prefix = testKeyPrefix("limits-tokens");
  let db: TestDatabase;
  let admin: Redis;
  let gateways = 0;
  return {
    name: "Redis + PostgreSQL",
    async setUp() {
      admin = testRedisClient();
      db = await createTestDatabase("limitstokens");
    },
    // A key prefix per gateway: each test starts from empty limits.
    open: async () => openRedisSharedState(REDIS_URL, await openPostgresUsageLog(db.url), { keyPrefix: `${prefix}${++gateways}:`, upstreamTimeoutMs: 3000 }),
    async tearDown() {
      await db?.drop();
      if (admin) {
        await deleteKeys(admin, prefix);
        await admin.quit();
      }
    },
  };
}

for (const kind of [inProcess, sharedKind()]) {
  describe(`limits held per request: ${kind.name}`, () => {
    let fake: FakeOpenAI;
    let script: Script = { kind: "ok" };
    const open: { gw: TestGateway; state?: State }[] = [];

    before(async () => {
      await kind.setUp?.();
      fake = await startFakeOpenAI({ name: "tpm", script: () => script });
    });
    afterEach(async () => {
      while (open.length) {
        const { gw, state } = open.pop()!;
        await gw.close();
        await state?.close();
      }
      script = { kind: "ok" };
      fake.received.length = 0;
    });
    after(async () => {
      await fake?.close();
      await kind.tearDown?.();
      destroyAgents();
    });

    async function gateway(parts: { limits?: Obj; groups?: Obj; models?: Obj }): Promise<TestGateway> {
      const state = await kind.open();
      const gw = await startTestGateway(config({
        ...parts,
        channels: [channel("main", fake.url)],
        tokens: [token("alice-main", TOKEN), token("alice-other", OTHER)],
      }), { state });
      open.push({ gw, state });
      return gw;
    }

    test("tokens_per_minute counts the usage answers report, not their estimates; the next request that does not fit is 429 in every protocol", async () => {
      for (const shape of shapes) {
        const estimate = estimateOf(shape, 16);
        // Room for the estimate beside two requests' real usage, not beside three.
        const perMinute = estimate + 2 * USED + 5;
        const gw = await gateway({ limits: { tokens_per_minute: perMinute } });
        const before = fake.received.length;
        for (let i = 0; i < 3; i++) assert.equal((await send(gw, shape)).status, 200, `${shape} request ${i + 1}`);
        const refused = await send(gw, shape);
        assertLimited(shape, refused, new RegExp(`at most ${perMinute} tokens per minute for this token \\(this request is estimated at ${estimate}\\)`), [55, 60]);
        assert.match(messageOf(refused), /^Token rate limit exceeded/);
        assert.equal(fake.received.length - before, 3, `${shape}: the refusal never reached the upstream`);
      }
    });

    test("a request whose estimate alone exceeds tokens_per_minute is 429 saying it can never fit, without Retry-After", async () => {
      const gw = await gateway({ limits: { tokens_per_minute: 500 } });
      const r = await send(gw, "chat", { maxTokens: 600 });
      assert.equal(r.status, 429);
      assert.match(r.json.error.message, /Request too large: it is estimated at \d+ tokens .* more than the 500 tokens per minute allowed for this token, so it can never fit/);
      assert.equal(r.headers.get("retry-after"), null);
      assert.equal(r.headers.get("x-should-retry"), "false");
      assert.equal((await send(gw, "chat", { maxTokens: 100 })).status, 200, "a smaller max_tokens fits");
      assert.equal(fake.received.length, 1);
    });

    test("a group's tokens_per_minute is shared by its tokens and named in the 429", async () => {
      const estimate = estimateOf("chat", 16);
      const perMinute = estimate + 2 * USED + 5; // room beside two requests' usage, not three
      const gw = await gateway({ groups: { default: { multiplier: 0.7, limits: { tokens_per_minute: perMinute } }, video: { multiplier: 1 } } });
      for (const key of [TOKEN, OTHER, TOKEN]) assert.equal((await send(gw, "chat", { key })).status, 200);
      // The other token has used 17 tokens of its own; the group's 51 refuse it.
      assertLimited("chat", await send(gw, "chat", { key: OTHER }), new RegExp(`at most ${perMinute} tokens per minute for group default`), [55, 60]);
      assertLimited("chat", await send(gw, "chat", { key: TOKEN }), /for group default/, [55, 60]);
      assert.equal(fake.received.length, 3);
    });

    test("concurrent: at most N requests in flight per token, in every protocol; a finished request's slot is free again", async () => {
      for (const shape of shapes) {
        const gw = await gateway({ limits: { concurrent: 2 } });
        script = { kind: "hang" };
        const before = fake.received.length;
        const aborts = Array.from({ length: 5 }, () => new AbortController());
        const answers: Answer[] = [];
        const sent = aborts.map((a) => send(gw, shape, { signal: a.signal }).then((r) => void answers.push(r), () => undefined));
        await eventually(() => answers.length === 3 && fake.received.length - before === 2, 5000, `${shape}: three refused, two in flight`);
        for (const r of answers) assertLimited(shape, r, /^Concurrency limit exceeded: at most 2 requests in flight for this token/, [1, 1]);
        // Another token is not limited by this one's requests in flight.
        script = { kind: "ok" };
        assert.equal((await send(gw, shape, { key: OTHER })).status, 200);
        assertLimited(shape, await send(gw, shape), /at most 2 requests in flight/, [1, 1]);
        // The client gives up on the two in flight: their slots are freed as they end.
        for (const a of aborts) a.abort();
        await Promise.all(sent);
        await eventually(async () => (await send(gw, shape)).status === 200, 5000, `${shape}: a slot free again`);
        const both = await Promise.all([send(gw, shape), send(gw, shape)]);
        assert.deepEqual(both.map((r) => r.status), [200, 200]);
      }
    });

    test("concurrent under Promise.all with slow answers: exactly N at a time are served, the rest refused", async () => {
      const gw = await gateway({ limits: { concurrent: 3 } });
      script = { kind: "ok", chunks: 5, chunkDelayMs: 200 }; // each stream takes a second
      const answers = await Promise.all(Array.from({ length: 8 }, () => send(gw, "chat", { stream: true })));
      assert.equal(answers.filter((r) => r.status === 200).length, 3, JSON.stringify(answers.map((r) => r.status)));
      assert.equal(answers.filter((r) => r.status === 429).length, 5);
      assert.equal(fake.received.length, 3);
    });

    test("a model's request_rate is shared by every token, names the model, and does not count failed requests", async () => {
      const gw = await gateway({
        models: { [MODEL]: { endpoint: "chat", price: { input: 0.15, output: 0.6 }, limits: { request_rate: { max: 3, per: "1m" } } } },
      });
      script = { kind: "error", status: 400 };
      for (let i = 0; i < 2; i++) assert.equal((await send(gw, "chat")).status, 400);
      script = { kind: "ok" };
      for (const key of [TOKEN, OTHER, TOKEN]) assert.equal((await send(gw, "chat", { key })).status, 200);
      for (const shape of shapes) {
        assertLimited(shape, await send(gw, shape, { key: OTHER }),
          /^Request rate limit of model gpt-4o-mini exceeded: at most 3 requests per 1 minute/, [55, 60]);
      }
      assert.equal(fake.received.length, 5);
    });
  });
}
