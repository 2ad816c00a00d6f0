// server.workers: 2 on Redis + PostgreSQL must behave as one process, against the real
// `gateway` command: a token added to gateway.yaml (appended, or through a ConfigMap's
// symlink swap) is accepted by every worker within a second, under load; after kill -9 of the whole gateway (primary and workers) under load and a
// restart, nothing the killed requests reserved still holds the token's quota (a request
// that fits is accepted at once) and every spend figure (Redis's accounts, the billing
// endpoint, `gateway usage`) equals the usage log; and the holds of a gateway killed for
// good are freed within seconds by the gateways still running, without a restart.
// `gateway check` refuses exactly the configs serve refuses, in the same words.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Redis } from "ioredis";
import { eventually } from "../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { deleteKeys, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { alive, exited, killGroup, runGateway, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { formatNano } from "../../src/billing/cost.js";
import { channel, completionAnswer, config, rawRequest, startRawUpstream, token, type RawResponse, type RawUpstream } from "../integration/support.js";

const prefix = testKeyPrefix("workers");
/** Each test's own token (name, key), every one with the same quota. */
const FIRST = { name: "first", key: "sk-gw-workers-first-0123456789" };
const CRASH = { name: "crash", key: "sk-gw-workers-crash-0123456789" };
const DOOMED = { name: "doomed", key: "sk-gw-workers-doomed-0123456789" };
const ADDED = { name: "added", key: "sk-gw-workers-added-0123456789" };
const CONFIGURED = [FIRST, CRASH, DOOMED];
const QUOTA_NANO = 1_000_000_000n; // the token's quota: 1
/** input 1, output 1000 per 1M tokens at multiplier 0.7: 700,000 nano per output token. */
const NANO_PER_OUTPUT_TOKEN = 700_000n;
const usage = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 };
/** (10 × 1 + 4 × 1000) / 1e6 × 0.7 */
const COST = 2_807_000n;

/** The config text with its `tokens:` list moved to the end, so a token can be appended. */
function tokensLast(text: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith("tokens:"));
  let end = start + 1;
  while (end < lines.length && !/^\S/.test(lines[end])) end++;
  const block = lines.splice(start, end - start);
  return [...lines.filter((l) => l !== ""), ...block, ""].join("\n");
}

/** A token entry as appended to the `tokens:` list at the end of the file. */
const tokenLines = ({ name, key }: { name: string; key: string }) =>
  `  - name: ${name}\n    key: ${key}\n    user: alice\n    group: default\n    quota: ${Number(QUOTA_NANO) / 1e9}\n`;

const mintedBy = (r: RawResponse): string => String(r.headers["x-gateway-request-id"]).split("-").pop()!;

describe("two workers on Redis + PostgreSQL behave as one process", () => {
  let dir: string;
  let db: TestDatabase;
  let upstream: RawUpstream;
  let redis: Redis;
  /** Requests the upstream is holding now ("hold" requests get no answer for 20 s: the kill comes meanwhile). */
  const held = { inflight: 0 };
  const children: Child[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-workers-"));
    db = await createTestDatabase("gw_workers");
    redis = testRedisClient();
    upstream = await startRawUpstream((body, res) => {
      const content = (body.messages as { content: string }[])[0]?.content;
      if (content !== "hold") return completionAnswer(res, body.model, "hi", usage);
      held.inflight++;
      const timer = setTimeout(() => completionAnswer(res, body.model, "late", usage), 20_000);
      res.on("close", () => {
        clearTimeout(timer);
        held.inflight--;
      });
    });
  });
  after(async () => {
    for (const c of children) if (alive(c)) killGroup(c);
    await upstream?.close();
    await db?.drop().catch(() => {});
    await deleteKeys(redis, prefix);
    redis?.disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  const storeUrl = () => `${REDIS_URL}?key_prefix=${encodeURIComponent(prefix)}`;
  const yaml = (workers: number, tokens = CONFIGURED) => (port: number) => tokensLast(config({
    server: { listen: `127.0.0.1:${port}`, drain_timeout: "2s", upstream_timeout: "60s", workers },
    store: storeUrl(),
    users: { alice: { credit: 100, groups: ["default"] } },
    tokens: tokens.map(({ name, key }) => token(name, key, { quota: Number(QUOTA_NANO) / 1e9 })),
    channels: [channel("main", upstream.url)],
    models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 1, output: 1000 } } },
  }) + `ledger: ${db.url}\n`);

  async function start(name: string, workers: number, tokens = CONFIGURED, file = join(dir, `${name}.yaml`)) {
    const served = await serveGateway({ file, cwd: dir, yaml: yaml(workers, tokens), logLevel: "info", readyMs: 30_000, detached: true });
    children.push(served.child);
    return { ...served, file };
  }

  const chat = (base: string, key: string, extra: Record<string, unknown> = {}, content = "hello") =>
    rawRequest(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content }], ...extra }),
    });

  /** A token's and the user's spend in the usage log (what the ledger says). */
  async function logged(name: string): Promise<{ token: bigint; user: bigint; entries: number }> {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ token: string | null; user: string | null; n: string }>(
        `SELECT sum(cost_nano) FILTER (WHERE token = $1) AS token, sum(cost_nano) AS "user", count(*) AS n FROM usage_log`, [name]);
      return { token: BigInt(rows[0].token ?? 0), user: BigInt(rows[0].user ?? 0), entries: Number(rows[0].n) };
    } finally {
      await client.end();
    }
  }

  /** Redis's account of a token and of the user: spent and reserved. */
  async function accounts(name: string) {
    const [t, u] = await Promise.all([redis.hgetall(`${prefix}acct:t:${name}`), redis.hgetall(`${prefix}acct:u:alice`)]);
    return { tokenSpent: BigInt(t.spent ?? 0), userSpent: BigInt(u.spent ?? 0), tokenReserved: BigInt(t.reserved ?? 0) };
  }

  /** The largest max_tokens whose reservation is 9/10 of what the token has left: it fits
   * only when nothing else holds the quota. */
  async function fittingMaxTokens(base: string, key: string, remaining: bigint): Promise<number> {
    const probe = await chat(base, key, { max_tokens: 100_000_000 });
    assert.equal(probe.status, 402, probe.text);
    const required = BigInt(Math.round(Number(/pre-deduction of (\d+(?:\.\d+)?)/.exec(probe.json.error.message)![1]) * 1e9));
    const inputPart = required - 100_000_000n * NANO_PER_OUTPUT_TOKEN;
    return Number(((remaining * 9n) / 10n - inputPart) / NANO_PER_OUTPUT_TOKEN);
  }

  /** Starts `count` requests the upstream holds, each reserving ~3.5% of the quota, and
   * waits until they are all upstream. */
  async function holdRequests(base: string, key: string, count: number): Promise<Promise<unknown>[]> {
    const before = held.inflight;
    const pending = Array.from({ length: count }, () => chat(base, key, { max_tokens: 50 }, "hold").catch(() => undefined));
    await eventually(() => held.inflight >= before + count, 10_000, `${count} held requests upstream`);
    return pending;
  }

  /**
   * Serves `file` with two workers under load, adds a token with `edit`, and waits at most
   * a second for every worker to accept it (rounds of requests on fresh connections, which
   * go round-robin over the workers).
   */
  async function tokenAddedWithin(name: string, file: string, added: { name: string; key: string }, edit: () => Promise<void>) {
    const { child, base } = await start(name, 2, CONFIGURED, file);
    await eventually(() => child.stderr.includes('"msg":"gateway listening"'), 10_000, "both workers serving");
    assert.equal((await chat(base, added.key)).status, 401, "not configured yet");
    let loadOn = true;
    const load = Promise.all(Array.from({ length: 2 }, async () => {
      for (let i = 0; loadOn && i < 300; i++) await chat(base, FIRST.key).catch(() => undefined);
    }));
    await edit();
    const edited = Date.now();
    const workers = new Set<string>();
    try {
      await eventually(async () => {
        const round = await Promise.all(Array.from({ length: 4 }, () => chat(base, added.key)));
        if (round.some((r) => r.status !== 200)) return false;
        for (const r of round) workers.add(mintedBy(r));
        return workers.size === 2;
      }, 1000, "the added token accepted by both workers");
    } finally {
      loadOn = false;
      await load;
    }
    assert.ok(Date.now() - edited < 1000, `took ${Date.now() - edited} ms from ${new Date(edited).toISOString()}: ` +
      child.stderr.split("\n").filter((l) => /config reloaded|worker applied/.test(l)).join("\n"));
    killGroup(child, "SIGTERM");
    assert.equal((await exited(child, 15_000)).code, 0, child.stderr);
  }

  test("a token appended to gateway.yaml is accepted by every worker within a second", async () => {
    const file = join(dir, "reload.yaml");
    await tokenAddedWithin("reload", file, ADDED, () => appendFile(file, tokenLines(ADDED)));
  });

  test("so is one added to a gateway.yaml mounted as a Kubernetes ConfigMap (a symlink swapped elsewhere)", async () => {
    // cm/gateway.yaml -> ..data/gateway.yaml, ..data -> ..v1: an update writes ..v2 and
    // renames a new ..data over the old, so the watched folder itself sees no event.
    const cm = join(dir, "cm");
    await mkdir(join(cm, "..v1"), { recursive: true });
    await symlink("..v1", join(cm, "..data"));
    await symlink(join("..data", "gateway.yaml"), join(cm, "gateway.yaml"));
    const file = join(cm, "gateway.yaml");
    const mounted = { name: "mounted", key: "sk-gw-workers-mounted-0123456789" };
    await tokenAddedWithin("configmap", file, mounted, async () => {
      await mkdir(join(cm, "..v2"));
      await writeFile(join(cm, "..v2", "gateway.yaml"), (await readFile(file, "utf8")) + tokenLines(mounted));
      await symlink("..v2", join(cm, "..data_tmp"));
      await rename(join(cm, "..data_tmp"), join(cm, "..data"));
    });
  });

  test("kill -9 of the whole gateway under load, restart: nothing held, every spend figure equals the log", async (t) => {
    const first = await start("crash", 2);
    // Load: quick requests settling all along, beside requests the upstream holds.
    let stop = false;
    let sent = 0;
    let answered = 0;
    const quick = Promise.all(Array.from({ length: 6 }, async () => {
      while (!stop && sent++ < 200) if ((await chat(first.base, CRASH.key).catch(() => undefined))?.status === 200) answered++;
    }));
    const holding = await holdRequests(first.base, CRASH.key, 20);
    await eventually(() => answered >= 40, 10_000, "quick requests settling");
    const heldBefore = (await accounts(CRASH.name)).tokenReserved;
    assert.ok(heldBefore >= 20n * 50n * NANO_PER_OUTPUT_TOKEN, `held ${heldBefore}`);
    killGroup(first.child);
    await exited(first.child, 10_000);
    stop = true;
    await quick;
    await Promise.all(holding);

    const second = await start("crash", 2);
    const ledger = await logged(CRASH.name);
    const remaining = QUOTA_NANO - ledger.token;
    const maxTokens = await fittingMaxTokens(second.base, CRASH.key, remaining);
    const fits = await chat(second.base, CRASH.key, { max_tokens: maxTokens });
    assert.equal(fits.status, 200, `a request that fits the quota after the restart: ${fits.text}; ` +
      `${formatNano(ledger.token)} logged; ${second.child.stderr.split("\n").filter((l) => /gave back|lease/.test(l)).join(" | ")}; ` +
      `lives: ${(await redis.zrange(`${prefix}lives`, "0", "-1", "WITHSCORES")).join(" ")}; first: ${first.child.stderr.split("\n").filter((l) => /worker started/.test(l)).join(" | ")}`);

    const after = await logged(CRASH.name);
    assert.equal(after.token, ledger.token + COST);
    await eventually(async () => (await accounts(CRASH.name)).tokenReserved === 0n, 5000, "nothing reserved");
    const acct = await accounts(CRASH.name);
    assert.equal(acct.tokenSpent, after.token, "the token's spend on Redis = the usage log");
    assert.equal(acct.userSpent, after.user, "the user's spend on Redis = the usage log");
    const billing = await rawRequest(`${second.base}/v1/dashboard/billing/usage`, { headers: { authorization: `Bearer ${CRASH.key}` } });
    assert.equal(billing.status, 200, billing.text);
    assert.equal(Math.round(billing.json.total_usage * 1e7), Number(after.token), "the billing endpoint = the usage log");
    const cli = runGateway(["usage", "--json", "--by", "token", "--config", second.file], dir, "warn");
    assert.equal((await exited(cli, 20_000)).code, 0, cli.stderr);
    const row = cli.stdout.trim().split("\n").map((l) => JSON.parse(l)).find((r) => r.key === CRASH.name);
    assert.equal(row.cost, Number(formatNano(after.token)), "`gateway usage` = the usage log");
    t.diagnostic(`${ledger.entries} entries before the restart; ${formatNano(heldBefore)} was held at the kill; ` +
      `given back at the restart: ${second.child.stderr.split("\n").filter((l) => l.includes("gave back")).join(" | ")}`);
    killGroup(second.child, "SIGTERM");
    assert.equal((await exited(second.child, 15_000)).code, 0, second.child.stderr);
  });

  test("the holds of a gateway killed for good are freed within seconds by the one still running", async (t) => {
    const survivor = await start("survivor", 1);
    const doomed = await start("doomed", 2);
    const holding = await holdRequests(doomed.base, DOOMED.key, 20);
    killGroup(doomed.child);
    await exited(doomed.child, 10_000);
    await Promise.all(holding);
    const killedAt = Date.now();

    const remaining = QUOTA_NANO - (await logged(DOOMED.name)).token;
    const maxTokens = await fittingMaxTokens(survivor.base, DOOMED.key, remaining);
    assert.equal((await chat(survivor.base, DOOMED.key, { max_tokens: maxTokens })).status, 402, "held by the killed gateway at first");
    let answer: RawResponse | undefined;
    await eventually(async () => (answer = await chat(survivor.base, DOOMED.key, { max_tokens: maxTokens })).status === 200,
      10_000, "the killed gateway's holds freed");
    const freedAfterMs = Date.now() - killedAt;
    assert.ok(freedAfterMs < 10_000, `freed after ${freedAfterMs} ms`);
    t.diagnostic(`freed ${freedAfterMs} ms after the kill`);
    assert.equal(answer!.status, 200);
    killGroup(survivor.child, "SIGTERM");
    assert.equal((await exited(survivor.child, 15_000)).code, 0, survivor.child.stderr);
  });
});

describe("gateway check refuses exactly what serve refuses, in the same words", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-workers-check-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Nothing listens here: a config is refused before anything is reached, or not at all. */
  const nowhere = "postgres://postgres@127.0.0.1:1/none";
  const refused: [string, Record<string, unknown>, string | undefined, RegExp][] = [
    ["workers: 2 on the SQLite store", { workers: 2 }, undefined, /server\.workers: 2 with store: sqlite:\.\/g\.db: SQLite is one process's store/],
    ["a redis store without ledger", {}, "redis://127.0.0.1:1/0", /store: store redis:\/\/127\.0\.0\.1:1\/0 keeps no usage log: add ledger: postgres:\/\//],
    ["workers: 2 on a redis store without ledger", { workers: 2 }, "redis://127.0.0.1:1/0", /keeps no usage log/],
    ["an empty key_prefix", {}, "redis://127.0.0.1:1/0?key_prefix=", /store: redis: key_prefix in the store URL is empty/],
  ];

  /** The lines a command wrote to stderr that are not JSON log lines. */
  const said = (c: { stderr: string }) => c.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("{"));

  for (const [what, server, store, message] of refused) {
    test(what, async () => {
      const file = join(dir, `${what.replace(/\W+/g, "-")}.yaml`);
      const text = config({ server: { listen: "127.0.0.1:0", ...server }, store: store ?? "sqlite:./g.db" });
      await writeFile(file, store?.startsWith("redis") && what.includes("key_prefix") ? `${text}ledger: ${nowhere}\n` : text);
      const check = runGateway(["check", "--config", file], dir, "warn");
      const serve = runGateway(["serve", "--config", file], dir, "warn");
      const [checked, served] = await Promise.all([exited(check, 20_000), exited(serve, 20_000)]);
      assert.equal(served.code, 1, serve.stderr);
      assert.equal(checked.code, 1, `check said: ${check.stdout}${check.stderr}`);
      assert.match(check.stderr, message);
      assert.deepEqual(said(check), said(serve), "the same refusal, word for word");
      assert.doesNotMatch(check.stdout, /^ok/m);
    });
  }

  test("a config serve accepts checks ok, without reaching its servers", async () => {
    const file = join(dir, "shared.yaml");
    await writeFile(file, `${config({ server: { listen: "127.0.0.1:0", workers: 2 }, store: "redis://127.0.0.1:1/0" })}ledger: ${nowhere}\n`);
    const check = runGateway(["check", "--config", file], dir, "warn");
    assert.equal((await exited(check, 20_000)).code, 0, check.stderr);
    assert.match(check.stdout, /^ok: /);
  });
});
