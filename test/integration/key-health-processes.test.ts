// Key health across real gateway processes: two `gateway --config …` on one Redis (`store:`)
// and one PostgreSQL (`ledger:`). The provider says one channel key's account is out of
// credit to the first gateway; the second never sends that key, and `gateway channels`, run
// as an operator runs it, shows the key out (from Redis) with the first gateway's recent
// figures (from its /metrics). No process writes the key to its output. Skipped, saying what
// is missing, where Redis or PostgreSQL do not answer.
//
// Isolation as in shared-state.test.ts: a Redis database number of this file's own, names
// carrying a random run id, and every key naming the run or minted by these gateways
// deleted at the end.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { keyFingerprint } from "../../src/routing/key-health.js";
import { startFakeOpenAI } from "../helpers/fake-openai.js";
import { bearerKey, type BaseReceived, type FakeServer, type KeyFaultScript } from "../helpers/fake-server.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { deleteKeysWhere, testRedisClient } from "../helpers/redis.js";
import { alive, exited, runGateway, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { config, rawRequest, type RawResponse } from "./support.js";

const run = randomBytes(3).toString("hex");
/** A database number apart from shared-state.test.ts's and cluster.test.ts's for the same pid. */
const REDIS_URL = `redis://127.0.0.1:6379/${1 + ((process.pid + 11) % 15)}`;
/** What the gateway writes every key under (state/redis.ts DEFAULT_KEY_PREFIX). */
const PREFIX = "gateway:";

const user = `kh-${run}`;
const token = { name: `tkh-${run}`, key: `sk-gw-kh-${run}-0123456789` };
const channel = `kh-chat-${run}`;
const keys = { broke: `sk-up-broke-${run}-SECRET-0a1b2c`, paid: `sk-up-paid-${run}-SECRET-3d4e5f` };

describe("key health across two gateway processes on one Redis", () => {
  let dir: string;
  let fake: FakeServer<BaseReceived>;
  const faults = new Map<string, KeyFaultScript>([[keys.broke, "no_credit"]]);
  let db: TestDatabase | undefined;
  let redis: Redis | undefined;
  const gateways: { child: Child; base: string }[] = [];
  const minters = new Set<string>();

  const yaml = (port: number) => config({
    server: { listen: `127.0.0.1:${port}`, drain_timeout: "2s" },
    store: REDIS_URL,
    groups: { default: { multiplier: 1 } },
    users: { [user]: { credit: 100, groups: ["default"] } },
    tokens: [{ name: token.name, key: token.key, user, group: "default" }],
    channels: [{ name: channel, protocol: "openai", base_url: fake.url, keys: [keys.broke, keys.paid], groups: ["default"], models: ["gpt-4o-mini"] }],
  }) + `ledger: ${db!.url}\n`;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-keyhealth-"));
    fake = await startFakeOpenAI({ keyFaults: faults });
    try {
      db = await createTestDatabase("gw_keyhealth");
      redis = testRedisClient(REDIS_URL);
      await redis.ping();
    } catch (err) {
      throw new Error(`Redis on 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432 are needed (.ci/run starts them): ${(err as Error).message}`);
    }
    for (const name of ["a", "b"]) gateways.push(await serveGateway({ file: join(dir, `${name}.yaml`), cwd: dir, yaml, readyMs: 20_000 }));
  });

  after(async () => {
    for (const g of gateways) if (alive(g.child)) g.child.proc.kill("SIGKILL");
    await Promise.all(gateways.map((g) => g.child.exit));
    await db?.drop().catch(() => {});
    if (redis) await deleteKeysWhere(redis, PREFIX, (k) => k.includes(run) || [...minters].some((p) => k.endsWith(p)));
    redis?.disconnect();
    await fake?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const chat = async (base: string): Promise<RawResponse> => {
    const r = await rawRequest(`${base}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${token.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 4, messages: [{ role: "user", content: "hi" }] }),
    });
    const id = r.headers["x-gateway-request-id"];
    if (id) minters.add(String(id).split("-").pop()!);
    return r;
  };
  const keysSent = (from: number) => fake.received.slice(from).map((r) => bearerKey(r.headers));

  test("a key out of credit on one gateway is out on the other, and `gateway channels` shows it", async () => {
    const [a, b] = gateways;
    let from = fake.received.length;
    const first = await chat(a.base);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(keysSent(from), [keys.broke, keys.paid], "served by the next key");
    from = fake.received.length;
    for (let i = 0; i < 3; i++) assert.equal((await chat(b.base)).status, 200);
    assert.deepEqual(keysSent(from), [keys.paid, keys.paid, keys.paid], "the other gateway never sends the key out of credit");

    const cli = runGateway(["channels", "--config", join(dir, "a.yaml")], dir);
    const { code } = await exited(cli, 20_000);
    assert.equal(code, 0, cli.stderr + cli.stdout);
    assert.match(cli.stdout, new RegExp(`${channel}\\s+openai\\s+enabled\\s+${keyFingerprint(keys.broke)}\\s+out\\s+quota\\s+(59m \\d+s|1h 0m)\\s+1\\s+100%`));
    assert.match(cli.stdout, new RegExp(`${channel}\\s+openai\\s+enabled\\s+${keyFingerprint(keys.paid)}\\s+up\\s+-\\s+-\\s+1\\s+0%`), "a's own attempts");
    assert.match(cli.stdout, /note: key states: redis 127\.0\.0\.1:6379\/\d+/);
    for (const output of [cli.stdout, cli.stderr, ...gateways.flatMap((g) => [g.child.stdout, g.child.stderr])]) {
      assert.ok(!output.includes(`-${run}-SECRET-`), "no process wrote a channel key");
    }
    assert.ok(a.child.stderr.includes("channel key out of rotation"), "gateway a said it took the key out");
  });
});
