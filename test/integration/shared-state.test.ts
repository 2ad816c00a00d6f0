// Two real gateway processes (`gateway --config …`) on one Redis (`store:`) and one
// PostgreSQL (`ledger:`) behave as one: a token quota is never overspent by concurrent
// requests split between them and every served request is logged once; a request-rate
// limit is shared; `kill -9` of one under load loses no acknowledged charge and its
// abandoned reservations are freed once they expire; a video job created on one is polled
// on the other. Redis and PostgreSQL must answer (.ci/run starts them); else the suite fails saying which.
//
// Isolation: the gateway's key prefix is fixed ("gateway:"), so this file uses a Redis
// database number of its own choosing and user, token, channel and job names carrying a
// random run id; at the end it deletes every key naming the run or minted by its gateways
// (request ids end in the minting process's id), and drops its PostgreSQL database.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Redis } from "ioredis";
import { eventually } from "../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { deleteKeysWhere, testRedisClient } from "../helpers/redis.js";
import { sendJson, startFakeServer, type BaseReceived, type FakeServer } from "../helpers/fake-server.js";
import { alive, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { completionAnswer, config, rawRequest, streamAnswer, type RawResponse } from "./support.js";

const run = randomBytes(3).toString("hex");
/** A database number apart from cluster.test.ts's (1 + pid % 15) for the same pid. */
const REDIS_URL = `redis://127.0.0.1:6379/${1 + ((process.pid + 7) % 15)}`;
/** What the gateway writes every key under (state/redis.ts DEFAULT_KEY_PREFIX). */
const PREFIX = "gateway:";

/** Output-priced only, so a request's pre-deduction (max_tokens × price) equals its cost. */
const CHAT_MODEL = "shared-chat";
const MAX_TOKENS = 4;
/** 4 output tokens × 250 per 1M = 0.001 = 1e6 nano per request. */
const COST_NANO = 1_000_000n;
const N = 6; // requests the quota fits
const QUOTA = 0.006;
const QUOTA_NANO = 6_000_000n;
const M = 40; // shared request rate per minute (per token, site-wide)
const UPSTREAM_TIMEOUT_MS = 5_000;
/** state/redis.ts: a reservation outlives its process by upstream_timeout + 60 s. */
const RESERVATION_TTL_MS = UPSTREAM_TIMEOUT_MS + 60_000;

const names = {
  quota: { user: `q-${run}`, token: `tq-${run}`, key: `sk-gw-q-${run}-0123456789` },
  rate: { user: `r-${run}`, token: `tr-${run}`, key: `sk-gw-r-${run}-0123456789` },
  kill: { user: `k-${run}`, token: `tk-${run}`, key: `sk-gw-k-${run}-0123456789` },
  video: { user: `v-${run}`, token: `tv-${run}`, key: `sk-gw-v-${run}-0123456789` },
};

const fakeVideoBytes = Buffer.from(`video of ${run}`);

/** Chat (a "slow" message waits 400 ms; `pending` counts answers not sent yet) and OpenAI's
 * video job API, with run-unique job ids. */
async function startUpstream(): Promise<FakeServer<BaseReceived> & { pending: () => number }> {
  let pending = 0;
  let jobs = 0;
  const server = await startFakeServer((r, res: http.ServerResponse) => {
    if (r.method === "POST" && r.path === "/v1/chat/completions") {
      const slow = (r.body.messages as { content: string }[])[0]?.content === "slow";
      pending++;
      setTimeout(() => {
        pending--;
        const usage = { prompt_tokens: 10, completion_tokens: MAX_TOKENS, total_tokens: 10 + MAX_TOKENS };
        if (r.body.stream) streamAnswer(res, r.body.model, ["h", "i"], usage);
        else completionAnswer(res, r.body.model, "hi", usage);
      }, slow ? 400 : 0);
      return;
    }
    if (r.method === "POST" && r.path === "/v1/videos") {
      return sendJson(res, 200, {
        id: `video_${run}_${++jobs}`, object: "video", model: String(r.body.model), status: "queued", progress: 0,
        seconds: String(r.body.seconds ?? "8"), size: "1280x720", created_at: 1_700_000_000,
      });
    }
    const m = /^\/v1\/videos\/([^/?]+)(\/content)?/.exec(r.path);
    if (r.method === "GET" && m && m[2]) {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": fakeVideoBytes.length });
      return void res.end(fakeVideoBytes);
    }
    if (r.method === "GET" && m) {
      return sendJson(res, 200, {
        id: m[1], object: "video", model: "sora-2", status: "completed", progress: 100, seconds: "4", size: "1280x720",
        prompt: null, remixed_from_video_id: null, created_at: 1_700_000_000, completed_at: 1_700_000_100, expires_at: 1_700_086_500, error: null,
      });
    }
    sendJson(res, 404, { error: { message: `Unknown path ${r.path}`, type: "invalid_request_error", param: null, code: "unknown_url" } });
  });
  return Object.assign(server, { pending: () => pending });
}

/** The request id of an answer, and the process that minted it (the id's last group). */
const requestIdOf = (r: RawResponse): string => String(r.headers["x-gateway-request-id"]);
const mintedBy = (id: string): string => id.split("-").pop()!;

/** One chat request on a fresh connection. */
function chat(base: string, key: string, content = "hello", stream = false): Promise<RawResponse> {
  return rawRequest(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: CHAT_MODEL, max_tokens: MAX_TOKENS, messages: [{ role: "user", content }], ...(stream && { stream }) }),
  });
}

/** An OpenAI-shaped gateway error: {error: {message, type, code}}. */
function assertOpenAIError(r: RawResponse, status: number, codes: readonly string[]): void {
  assert.equal(r.status, status, r.text);
  assert.equal(typeof r.json?.error?.message, "string", r.text);
  assert.equal(r.json.error.type, "gateway_error", r.text);
  assert.ok(codes.includes(r.json.error.code), `code ${r.json.error.code} not in ${codes.join(", ")}`);
}

describe("two gateway processes on one Redis and one PostgreSQL", () => {
  let dir: string;
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let db: TestDatabase | undefined;
  let sql: pg.Client | undefined;
  let redis: Redis | undefined;
  const gateways: { child: Child; base: string }[] = [];
  /** Processes that minted request ids (for the Redis cleanup). */
  const minters = new Set<string>();

  const yaml = (port: number) => config({
    server: { listen: `127.0.0.1:${port}`, upstream_timeout: `${UPSTREAM_TIMEOUT_MS / 1000}s`, drain_timeout: "2s" },
    store: REDIS_URL,
    limits: { request_rate: { max: M, per: "1m" } },
    groups: { default: { multiplier: 1 }, video: { multiplier: 1 } },
    users: Object.fromEntries(Object.values(names).map((n) => [n.user, { credit: 100, groups: ["default", "video"] }])),
    tokens: [
      { name: names.quota.token, key: names.quota.key, user: names.quota.user, group: "default", quota: QUOTA },
      { name: names.rate.token, key: names.rate.key, user: names.rate.user, group: "default" },
      { name: names.kill.token, key: names.kill.key, user: names.kill.user, group: "default" },
      { name: names.video.token, key: names.video.key, user: names.video.user, group: "video" },
    ],
    channels: [
      { name: `chat-${run}`, protocol: "openai", base_url: upstream.url, keys: ["sk-up"], groups: ["default"], models: [CHAT_MODEL] },
      { name: `video-${run}`, protocol: "openai", base_url: upstream.url, keys: ["sk-up"], groups: ["video"], models: ["sora-2"] },
    ],
    models: {
      [CHAT_MODEL]: { endpoint: "chat", price: { input: 0, output: 250 } },
      "sora-2": { endpoint: "video", request_schema: "video-family-c", price: { per_second: 0.1 } },
    },
  }) + `ledger: ${db!.url}\n`;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-shared-"));
    upstream = await startUpstream();
    try {
      db = await createTestDatabase("gw_shared");
      redis = testRedisClient(REDIS_URL);
      await redis.ping();
    } catch (err) {
      throw new Error(`Redis on 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432 are needed (.ci/run starts them): ${(err as Error).message}`);
    }
    // One at a time: the first creates the ledger's schema, the second finds it current.
    for (const name of ["a", "b"]) {
      gateways.push(await serveGateway({ file: join(dir, `${name}.yaml`), cwd: dir, yaml, readyMs: 20_000 }));
    }
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });

  after(async () => {
    for (const g of gateways) if (alive(g.child)) g.child.proc.kill("SIGKILL");
    await Promise.all(gateways.map((g) => g.child.exit));
    await sql?.end().catch(() => {});
    await db?.drop().catch(() => {});
    if (redis) await deleteKeysWhere(redis, PREFIX, (k) => k.includes(run) || [...minters].some((p) => k.endsWith(p)));
    redis?.disconnect();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Records who minted each answer's id, for the cleanup. */
  const seen = (r: RawResponse): RawResponse => {
    if (r.headers["x-gateway-request-id"]) minters.add(mintedBy(requestIdOf(r)));
    return r;
  };

  const hget = async (key: string, field: string): Promise<bigint> => BigInt((await redis!.hget(key, field)) ?? "0");
  const ledgerRows = async (token: string) =>
    (await sql!.query<{ request_id: string; status: number; cost_nano: string }>(
      "SELECT request_id, status, cost_nano FROM usage_log WHERE token = $1", [token])).rows;
  const ledgerSpend = async (kind: "token" | "user", name: string): Promise<bigint> =>
    BigInt((await sql!.query<{ nano: string }>("SELECT nano FROM spend WHERE kind = $1 AND name = $2", [kind, name])).rows[0]?.nano ?? "0");

  test(`a quota that fits ${N} requests, ${5 * N} concurrent requests split between both: spend ≤ quota, each 200 logged once, the rest 402/401`, async () => {
    const { token, user, key } = names.quota;
    const answers = await Promise.all(Array.from({ length: 5 * N }, (_, i) => chat(gateways[i % 2].base, key).then(seen)));
    const served = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status !== 200);
    assert.equal(new Set(answers.map((r) => mintedBy(requestIdOf(r)))).size, 2, "both processes answered");
    // Each cost equals its pre-deduction, so exactly the quota's worth is served.
    assert.equal(served.length, N, answers.map((r) => `${r.status} ${r.text}`).join("\n"));
    for (const r of refused) assertOpenAIError(r, r.status, r.status === 401 ? ["token_quota_exhausted"] : ["pre_deduction_failed"]);
    assert.ok(refused.every((r) => r.status === 401 || r.status === 402));

    const quotaNano = COST_NANO * BigInt(N);
    assert.equal(quotaNano, QUOTA_NANO, "the quota fits exactly N");
    assert.equal(await hget(`${PREFIX}acct:t:${token}`, "spent"), quotaNano, "Redis: spend of the token");
    assert.equal(await hget(`${PREFIX}acct:u:${user}`, "spent"), quotaNano, "Redis: spend of the user");
    await eventually(async () => (await hget(`${PREFIX}acct:t:${token}`, "reserved")) === 0n, 5000, "no reservation left on the token");
    assert.equal(await hget(`${PREFIX}acct:u:${user}`, "reserved"), 0n);

    const rows = await ledgerRows(token);
    const servedIds = served.map(requestIdOf).sort();
    const charged = rows.filter((row) => row.status === 200);
    assert.deepEqual(charged.map((row) => row.request_id).sort(), servedIds, "every 200 in the ledger, once");
    assert.ok(charged.every((row) => BigInt(row.cost_nano) === COST_NANO));
    assert.ok(rows.filter((row) => row.status !== 200).every((row) => BigInt(row.cost_nano) === 0n), "refusals cost nothing");
    assert.equal(rows.length, new Set(rows.map((row) => row.request_id)).size);
    assert.equal(await ledgerSpend("token", token), quotaNano, "ledger: spend of the token");
    assert.ok(await ledgerSpend("token", token) <= QUOTA_NANO);

    // Used up now, on either process: 401 token_quota_exhausted.
    for (const g of gateways) assertOpenAIError(seen(await chat(g.base, key)), 401, ["token_quota_exhausted"]);
  });

  test(`a request rate of ${M} per minute is shared: ${(3 * M) / 4} admitted on one process leave ${M / 4} for ${1.5 * M} concurrent requests split between both`, async () => {
    const { token, key } = names.rate;
    const first = await Promise.all(Array.from({ length: (3 * M) / 4 }, () => chat(gateways[0].base, key).then(seen)));
    assert.deepEqual(first.filter((r) => r.status !== 200).map((r) => r.text), [], "within the limit on one process");
    const burst = await Promise.all(Array.from({ length: 1.5 * M }, (_, i) => chat(gateways[i % 2].base, key).then(seen)));
    const admitted = burst.filter((r) => r.status === 200);
    assert.equal(admitted.length, M / 4, burst.filter((r) => r.status !== 200 && r.status !== 429).map((r) => r.text).join("\n"));
    assert.equal(new Set(burst.map((r) => mintedBy(requestIdOf(r)))).size, 2, "both processes answered the burst");
    for (const r of burst.filter((a) => a.status !== 200)) {
      assertOpenAIError(r, 429, ["rate_limited"]);
      assert.match(r.json.error.message, new RegExp(`at most ${M} requests per 1 minute`));
      assert.ok(Number(r.headers["retry-after"]) >= 1);
    }
    assert.equal(await redis!.zcard(`${PREFIX}rl:${token}\0rate`), M, "the shared window holds M hits");
    // The window is full for both processes.
    for (const g of gateways) assertOpenAIError(seen(await chat(g.base, key)), 429, ["rate_limited"]);
  });

  test("kill -9 of one process under load: every acknowledged answer has its ledger entry; the dead process's reservations expire, the other's are released at once", async (t) => {
    const { token, user, key } = names.kill;
    const [victim, survivor] = gateways;
    /** `acked`: a 200 JSON answer, or a 200 stream that reached its terminal `[DONE]` (a
     * stream cut by the kill after its head was acknowledged nothing). */
    const results: { target: "a" | "b"; stream: boolean; id?: string; status?: number; acked: boolean; error?: string }[] = [];
    const inFlight = { a: 0, b: 0 };
    let stop = false;
    let killedAt = 0;
    const loop = async (home: "a" | "b", stream: boolean) => {
      while (!stop) {
        const target = home === "a" && alive(victim.child) && !killedAt ? "a" : "b";
        inFlight[target]++;
        try {
          const r = seen(await chat(target === "a" ? victim.base : survivor.base, key, "slow", stream));
          const acked = r.status === 200 && (!stream || r.text.endsWith("data: [DONE]\n\n"));
          results.push({ target, stream, id: requestIdOf(r), status: r.status, acked });
        } catch (err) {
          results.push({ target, stream, acked: false, error: (err as Error).message });
        } finally {
          inFlight[target]--;
        }
      }
    };
    const loops = [loop("a", false), loop("a", true), loop("b", false), loop("b", true)];
    const ok = (target: "a" | "b") => results.filter((r) => r.target === target && r.acked).length;

    // Kill when the victim has served and every request in flight has reached the upstream
    // (so each holds its reservation).
    await eventually(() => ok("a") >= 2 && inFlight.a >= 1 && upstream.pending() === inFlight.a + inFlight.b, 10_000, "load on both");
    killedAt = Date.now();
    victim.child.proc.kill("SIGKILL");
    assert.equal((await victim.child.exit).signal, "SIGKILL");
    const servedBeforeKill = ok("b");
    await eventually(() => ok("b") >= servedBeforeKill + 4, 10_000, "the survivor serving after the kill");
    stop = true;
    await Promise.all(loops);

    const victimId = mintedBy(results.find((r) => r.target === "a" && r.acked)!.id!);
    const survivorId = mintedBy(results.find((r) => r.target === "b" && r.acked)!.id!);
    assert.ok(results.every((r) => r.acked || r.target === "a"), JSON.stringify(results.filter((r) => !r.acked && r.target === "b")));

    // No acknowledged charge lost: every answer either process acknowledged is in
    // PostgreSQL, charged.
    const acknowledged = results.filter((r) => r.acked).map((r) => r.id!);
    await eventually(async () => (await ledgerRows(token)).filter((row) => row.status === 200).length >= acknowledged.length, 5000, "the survivor's entries");
    const rows = new Map((await ledgerRows(token)).map((row) => [row.request_id, row]));
    for (const id of acknowledged) {
      assert.equal(rows.get(id)?.status, 200, `acknowledged ${id} is in the ledger`);
      assert.equal(BigInt(rows.get(id)!.cost_nano), COST_NANO);
    }
    assert.ok(await ledgerSpend("token", token) >= COST_NANO * BigInt(acknowledged.length));
    assert.ok(await hget(`${PREFIX}acct:t:${token}`, "spent") >= COST_NANO * BigInt(acknowledged.length), "Redis counts them too");

    // The survivor released its reservations as its requests ended: only the victim's are
    // held, still counted in `reserved`, each with a deadline upstream_timeout + 60 s after
    // it was made (Redis's clock).
    const held = async (kind: "t" | "u", name: string) => {
      const flat = await redis!.zrange(`${PREFIX}held:${kind}:${name}`, "0", "-1", "WITHSCORES");
      return Array.from({ length: flat.length / 2 }, (_, i) => ({ member: flat[2 * i], deadline: Number(flat[2 * i + 1]) }));
    };
    const tokenHeld = await held("t", token);
    assert.ok(tokenHeld.length >= 1, "the victim died holding reservations");
    assert.ok(tokenHeld.every((h) => h.member.endsWith(victimId)), "the survivor holds none");
    assert.ok(!tokenHeld.some((h) => h.member.endsWith(survivorId)));
    assert.deepEqual((await held("u", user)).map((h) => h.member).sort(), tokenHeld.map((h) => h.member).sort());
    t.diagnostic(`${acknowledged.length} acknowledged (${results.filter((r) => r.acked && r.stream).length} streams), ${results.filter((r) => !r.acked).length} cut by the kill, ${tokenHeld.length} reservations left held`);
    const heldNano = COST_NANO * BigInt(tokenHeld.length);
    assert.equal(await hget(`${PREFIX}acct:t:${token}`, "reserved"), heldNano);
    assert.equal(await hget(`${PREFIX}acct:u:${user}`, "reserved"), heldNano);
    const [redisSeconds] = await redis!.time();
    for (const h of tokenHeld) {
      assert.ok(h.deadline > Number(redisSeconds) * 1000, "not expired yet");
      assert.ok(h.deadline <= killedAt + RESERVATION_TTL_MS + 2_000, `deadline ${h.deadline} within the TTL of the kill`);
    }

    // Their TTL (65 s here) is past this file's time budget: move the deadlines to the past,
    // as that time passing would, and the next request on the account sweeps them away.
    for (const kind of ["t", "u"] as const) {
      const name = kind === "t" ? token : user;
      for (const h of await held(kind, name)) await redis!.zadd(`${PREFIX}held:${kind}:${name}`, "XX", 1, h.member);
    }
    assert.equal(seen(await chat(survivor.base, key)).status, 200);
    await eventually(async () =>
      (await hget(`${PREFIX}acct:t:${token}`, "reserved")) === 0n && (await hget(`${PREFIX}acct:u:${user}`, "reserved")) === 0n
      && (await redis!.zcard(`${PREFIX}held:t:${token}`)) === 0 && (await redis!.zcard(`${PREFIX}held:u:${user}`)) === 0,
    5000, "reserved back to 0 on the token and the user");
  });

  test("a video job created on one process is polled and downloaded on the other", async () => {
    const g = gateways.filter((x) => alive(x.child));
    assert.ok(g.length >= 1);
    // The kill test leaves one process: start a fresh one so creator and poller differ.
    if (g.length === 1) {
      const fresh = await serveGateway({ file: join(dir, "c.yaml"), cwd: dir, yaml, readyMs: 20_000 });
      gateways.push(fresh);
      g.push(fresh);
    }
    const [creator, poller] = g;
    const { key } = names.video;
    const auth = { authorization: `Bearer ${key}` };
    const created = seen(await rawRequest(`${creator.base}/v1/videos`, {
      method: "POST", headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ model: "sora-2", prompt: "a fox in the snow", seconds: "4" }),
    }));
    assert.equal(created.status, 200, created.text);
    const id = created.json.id as string;
    assert.match(id, new RegExp(`^video_${run}_`));

    const status = seen(await rawRequest(`${poller.base}/v1/videos/${id}`, { headers: auth }));
    assert.equal(status.status, 200, status.text);
    assert.equal(status.json.id, id);
    assert.equal(status.json.status, "completed");
    assert.notEqual(mintedBy(requestIdOf(status)), mintedBy(requestIdOf(created)), "answered by the other process");
    const content = await rawRequest(`${poller.base}/v1/videos/${id}/content`, { headers: auth });
    assert.equal(content.status, 200);
    assert.equal(content.text, fakeVideoBytes.toString());
    // Another account's token does not see it on either process.
    const other = await rawRequest(`${poller.base}/v1/videos/${id}`, { headers: { authorization: `Bearer ${names.rate.key}` } });
    assert.equal(other.status, 404, other.text);
  });
});
