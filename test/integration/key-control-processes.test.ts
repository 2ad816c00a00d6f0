// A key taken out by an operator across real gateway processes: two `gateway --config …` on
// one Redis (`store:`) and one PostgreSQL (`ledger:`). `gateway channels key out`, run as an
// operator runs it, takes one key out; within about a second neither gateway sends it, and
// `gateway channels` lists it as taken out, with who and why, apart from cooldowns. `gateway
// channels key in` puts it back and both use it again. No process writes the key to its
// output. Skipped, saying what is missing, where Redis or PostgreSQL do not answer.
//
// Isolation as in key-health-processes.test.ts: a Redis database number of this file's own,
// names carrying a random run id, and every key naming the run or minted by these gateways
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
import { bearerKey, type BaseReceived, type FakeServer } from "../helpers/fake-server.js";
import { eventually } from "../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { deleteKeysWhere, testRedisClient } from "../helpers/redis.js";
import { alive, exited, runGateway, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { config, rawRequest, type RawResponse } from "./support.js";

const run = randomBytes(3).toString("hex");
/** A database number apart from the other multi-process files' for the same pid. */
const REDIS_URL = `redis://127.0.0.1:6379/${1 + ((process.pid + 7) % 15)}`;
const PREFIX = "gateway:";

const user = `kc-${run}`;
const token = { name: `tkc-${run}`, key: `sk-gw-kc-${run}-0123456789` };
const channel = `kc-chat-${run}`;
const keys = { one: `sk-up-one-${run}-SECRET-0a1b2c`, two: `sk-up-two-${run}-SECRET-3d4e5f` };

describe("a key taken out by an operator, across two gateway processes on one Redis", () => {
  let dir: string;
  let fake: FakeServer<BaseReceived>;
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
    channels: [{ name: channel, protocol: "openai", base_url: fake.url, keys: [keys.one, keys.two], groups: ["default"], models: ["gpt-4o-mini"] }],
  }) + `ledger: ${db!.url}\n`;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-keyctl-proc-"));
    fake = await startFakeOpenAI();
    try {
      db = await createTestDatabase("gw_keyctl");
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
  /** The keys two chats on each gateway were sent with (two in a row cover both keys in rotation). */
  const keysSent = async (): Promise<Set<string>> => {
    const from = fake.received.length;
    for (const g of gateways) for (let i = 0; i < 2; i++) assert.equal((await chat(g.base)).status, 200);
    return new Set(fake.received.slice(from).map((r) => bearerKey(r.headers)));
  };
  const cli = async (args: string[]) => {
    const child = runGateway([...args, "--config", join(dir, "a.yaml")], dir);
    const { code } = await exited(child, 20_000);
    return { code, out: child.stdout, err: child.stderr };
  };

  test("`gateway channels key out` takes it out of both within about a second; `key in` puts it back", async (t) => {
    assert.deepEqual(await keysSent(), new Set([keys.one, keys.two]), "both keys serve at first");
    const fp = keyFingerprint(keys.one);

    const out = await cli(["channels", "key", "out", channel, fp, "--reason", "suspected leak, ticket 4711"]);
    assert.equal(out.code, 0, out.err + out.out);
    assert.match(out.out, new RegExp(`${channel} ${fp}: taken out by cli:\\S+ at \\S+ \\(suspected leak, ticket 4711\\)`));
    const since = Date.now();
    await eventually(async () => !(await keysSent()).has(keys.one), 3000, "neither gateway to send the key taken out");
    const tookMs = Date.now() - since;
    t.diagnostic(`out of rotation on both gateways ${tookMs} ms after the command returned`);
    assert.ok(tookMs < 1500, `out of rotation on both within about a second (took ${tookMs} ms)`);
    for (let i = 0; i < 3; i++) assert.ok(!(await keysSent()).has(keys.one), "and it stays out");

    const listed = await cli(["channels"]);
    assert.match(listed.out, new RegExp(`${channel}\\s+openai\\s+enabled\\s+${fp}\\s+taken out\\s+operator\\s+when put back`));
    assert.match(listed.out, /keys taken out by an operator/);
    assert.match(listed.out, new RegExp(`${channel}\\s+${fp}\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+cli:\\S+\\s+suspected leak, ticket 4711`));
    assert.match(listed.out, new RegExp(`${channel}\\s+openai\\s+enabled\\s+${keyFingerprint(keys.two)}\\s+up`));

    const back = await cli(["channels", "key", "in", channel, fp]);
    assert.equal(back.code, 0, back.err + back.out);
    assert.match(back.out, /put back \(it was taken out by cli:\S+ at \S+: suspected leak, ticket 4711\)/);
    await eventually(async () => (await keysSent()).has(keys.one), 3000, "the key to serve again");

    const unknown = await cli(["channels", "key", "out", channel, "ffffffff", "--reason", "x"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, new RegExp(`channel '${channel}' has no key with fingerprint 'ffffffff'`));
    for (const output of [listed.out, listed.err, out.out, out.err, ...gateways.flatMap((g) => [g.child.stdout, g.child.stderr])]) {
      assert.ok(!output.includes(`-${run}-SECRET-`), "no process wrote a channel key");
    }
  });
});
