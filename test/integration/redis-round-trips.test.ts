// The hot path's Redis round trips, counted with MONITOR: a billed chat request with rate
// limits makes one for its admission (the windows and the pre-deduction in one script) and
// one for its settlement, whether it is answered as JSON or streamed, with every kind of
// limit configured (request windows, a model's rate, tokens per minute of the token and
// of its group, concurrency); a rate-limited refusal makes one. A healthy channel's health record is read once a second at most, not
// per request. What the gateway sends is recognised by the test's own key prefix.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Redis } from "ioredis";
import { openPostgresUsageLog } from "../../src/state/postgres-log.js";
import { openRedisSharedState } from "../../src/state/redis.js";
import type { State } from "../../src/state/interfaces.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { deleteKeys, keysUnder, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { CHANNEL_KEY, TOKEN, channel, config, rawRequest } from "./support.js";

const prefix = testKeyPrefix("round-trips");

describe("Redis round trips per request", () => {
  let db: TestDatabase;
  let state: State;
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let admin: Redis;
  let monitor: Redis;
  const seen: string[][] = [];

  before(async () => {
    admin = testRedisClient();
    db = await createTestDatabase("roundtrips");
    state = await openRedisSharedState(REDIS_URL, await openPostgresUsageLog(db.url), { keyPrefix: prefix, upstreamTimeoutMs: 3000 });
    upstream = await startFakeOpenAI({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(config({
      limits: { request_rate: { max: 4, per: "1m" }, total_requests: { max: 1000, per: "1h" }, tokens_per_minute: 1_000_000, concurrent: 5 },
      groups: { default: { multiplier: 0.7, limits: { tokens_per_minute: 2_000_000 } }, video: { multiplier: 1 } },
      models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 }, limits: { request_rate: { max: 100, per: "1m" } } } },
      channels: [channel("oa", upstream.url)],
    }), { state });
    monitor = await admin.monitor();
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      // The lease's renewal (redis-leases.ts) runs on a timer of the process, not per request.
      if (source !== "lua" && args.some((a) => a.startsWith(prefix)) && !args.includes(`${prefix}lives`)) seen.push(args);
    });
  });

  after(async () => {
    monitor?.disconnect();
    await gw?.close();
    await state?.close();
    await upstream?.close();
    await db?.drop();
    await deleteKeys(admin, prefix);
    await admin?.quit();
  });

  let marks = 0;
  /** Waits until MONITOR has reported everything sent so far: a marker echoed after it. */
  async function sync(): Promise<void> {
    const mark = `${prefix}mark-${++marks}`;
    await admin.echo(mark);
    await eventually(() => seen.some((args) => args.includes(mark)), 2000, "MONITOR to catch up");
  }

  /** The scripts the gateway ran for one request, by name (their keys name what they touch). */
  async function commandsOf(send: () => Promise<number>, expectStatus: number): Promise<string[]> {
    await sync();
    seen.length = 0;
    assert.equal(await send(), expectStatus);
    await sync();
    const got = seen.filter((args) => !args.some((a) => a.startsWith(`${prefix}mark-`)));
    if (process.env.DEBUG_RT) console.log(got.map((a) => a.slice(0, 4).join(" ")));
    return got.map((args) => args[0].toLowerCase());
  }

  /** Tokens counted in a tokens-per-minute hash (its seconds), and none held. */
  async function usedTokens(key: string): Promise<number> {
    const fields = await admin.hgetall(key);
    assert.equal(Number(fields.held ?? 0), 0, "no estimate left held");
    return Object.entries(fields).filter(([f]) => f !== "held").reduce((sum, [, v]) => sum + Number(v), 0);
  }

  const chat = (stream: boolean) => async () => (await rawRequest(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 16, stream, messages: [{ role: "user", content: "hi" }] }),
  })).status;

  test("one for the admission and one for the settlement, as JSON and streamed; one for a refusal", async () => {
    // The first request loads the scripts and reads the channel's health record.
    await commandsOf(chat(false), 200);
    assert.deepEqual(await commandsOf(chat(false), 200), ["evalsha", "evalsha"]);
    assert.deepEqual(await commandsOf(chat(true), 200), ["evalsha", "evalsha"]);
    assert.deepEqual(await commandsOf(chat(false), 200), ["evalsha", "evalsha"]);
    // The request rate (4 per minute) is used up: the admission refuses, nothing to settle.
    assert.deepEqual(await commandsOf(chat(false), 429), ["evalsha"]);
    // Every limit was in those scripts: the token's and the group's token usage (17 tokens
    // a request, four requests), the model's window; the concurrency slots are all free.
    assert.equal(await usedTokens(`${prefix}tpm:alice-main\0tpm`), 4 * 17);
    assert.equal(await usedTokens(`${prefix}tpm:group\0default\0tpm`), 4 * 17);
    assert.equal(await admin.zcard(`${prefix}rl:model\0gpt-4o-mini\0rate`), 4);
    assert.deepEqual((await keysUnder(admin, prefix)).filter((k) => k.startsWith(`${prefix}slots:`)), []);
  });
});
