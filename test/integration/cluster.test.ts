// server.workers: the real `gateway` command as operators run it. Several workers on the
// embedded SQLite store are refused at start with a message naming server.workers and
// store; one worker serves as a single process always did. On Redis + PostgreSQL (the
// machine's servers, which .ci/run starts; missing, the suite fails saying so) two workers share the
// socket: both answer, a SIGKILLed worker is replaced while requests keep being answered,
// a config edit is compiled once by the primary and reaches both workers, a bad edit
// changes nothing, /metrics counts what both served, and SIGTERM drains and exits 0.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { eventually } from "../helpers/gateway.js";
import { alive, exited, runGateway, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { deleteKeysWhere, testRedisClient } from "../helpers/redis.js";
import {
  TOKEN, channel, closedPort, completionAnswer, config, rawRequest, startRawUpstream, token, type Obj, type RawResponse, type RawUpstream,
} from "./support.js";

/** Models the fake upstream serves; a reload adds the second. */
const FIRST_MODEL = "gpt-4o-mini";
const ADDED_MODEL = "gpt-4o-2024-08-06";
const models = {
  [FIRST_MODEL]: { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
  [ADDED_MODEL]: { endpoint: "chat", price: { input: 2.5, output: 10 } },
};
const usage = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 };

/** The process that minted a request id: its last group is per process (request-id.ts). */
const mintedBy = (r: RawResponse): string => String(r.headers["x-gateway-request-id"]).split("-").pop()!;

/** The JSON log lines of a child's stderr with this `msg`. */
function logLines(child: Child, msg: string): Obj[] {
  return child.stderr.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return [];
    const entry = JSON.parse(line) as Obj;
    return entry.msg === msg ? [entry] : [];
  });
}

/** `promise`, or a rejection after `ms` (a connection handed to a worker as it was killed
 * is never answered: node:cluster's primary does not take it back). */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Every process that answered a request (its request-id suffix), for the Redis cleanup. */
const answeredBy = new Set<string>();

/** A chat request on a fresh connection (so the cluster may hand it to any worker). */
async function chat(base: string, model = FIRST_MODEL, content = "hello"): Promise<RawResponse> {
  const r = await rawRequest(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });
  answeredBy.add(mintedBy(r));
  return r;
}

/** Sum of gateway_requests_total samples with status 200 in an exposition. */
function served200(metrics: string): number {
  return metrics.split("\n")
    .filter((line) => line.startsWith("gateway_requests_total{") && line.includes('status="200"'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

/** Deletes the keys of one Redis database that `mine` claims (this run's names and request ids). */
async function deleteRunKeys(url: string, mine: (key: string) => boolean): Promise<void> {
  const client = testRedisClient(url);
  try {
    await deleteKeysWhere(client, "", mine);
  } finally {
    client.disconnect();
  }
}

describe("server.workers", () => {
  let dir: string;
  let upstream: RawUpstream;
  const children: Child[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-cluster-"));
    upstream = await startRawUpstream((body, res) => {
      // "slow" requests hold their answer, so a drain has something in flight to finish.
      const messages = body.messages as { content: string }[];
      const delay = messages[0]?.content === "slow" ? 600 : 0;
      setTimeout(() => completionAnswer(res, body.model, "hi from upstream", usage), delay);
    });
  });
  after(async () => {
    for (const c of children) if (alive(c)) c.proc.kill("SIGKILL");
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const yaml = (server: Obj, extra: { store?: string; ledger?: string; models?: Obj } = {}) => (port: number) => {
    const text = config({
      server: { listen: `127.0.0.1:${port}`, drain_timeout: "5s", ...server },
      store: extra.store ?? `sqlite:${join(dir, "single.db")}`,
      channels: [channel("main", upstream.url, { models: Object.keys(extra.models ?? models) })],
      models: extra.models ?? models,
    });
    return extra.ledger ? `${text}ledger: ${extra.ledger}\n` : text;
  };

  test("workers: 2 on the SQLite store is refused at start, naming server.workers and store", async () => {
    const file = join(dir, "two-sqlite.yaml");
    await writeFile(file, yaml({ workers: 2 }, { store: "sqlite:./refused.db" })(0));
    const child = runGateway(["--config", file], dir);
    children.push(child);
    const { code } = await exited(child, 15_000);
    assert.equal(code, 1, child.stderr);
    assert.match(child.stderr, /server\.workers: 2 with store: sqlite:\.\/refused\.db: SQLite is one process's store: use store: redis:\/\/… and ledger: postgres:\/\/… for several workers, or workers: 1/);
    assert.doesNotMatch(child.stderr, /worker started/, "refused before forking");
  });

  test("the default store with workers: auto is refused where auto means several workers (one core: one worker, served)", async () => {
    const { availableParallelism } = await import("node:os");
    if (availableParallelism() < 2) {
      const { child, base } = await serveGateway({ file: join(dir, "auto.yaml"), cwd: dir, yaml: yaml({ workers: "auto" }), readyMs: 15_000 });
      children.push(child);
      assert.equal((await rawRequest(`${base}/healthz`)).status, 200);
      return;
    }
    const file = join(dir, "auto.yaml");
    await writeFile(file, config({ server: { workers: "auto" } }));
    const child = runGateway(["--config", file], dir);
    children.push(child);
    const { code } = await exited(child, 15_000);
    assert.equal(code, 1, child.stderr);
    assert.match(child.stderr, new RegExp(`server\\.workers: ${availableParallelism()} with store: sqlite:\\./data/gateway\\.db: SQLite is one process's store`));
  });

  test("workers: 1 serves as one process, as before", async () => {
    const { child, base } = await serveGateway({ file: join(dir, "one.yaml"), cwd: dir, yaml: yaml({ workers: 1 }), readyMs: 15_000 });
    children.push(child);
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${base}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: FIRST_MODEL, messages: [{ role: "user", content: "hello" }] });
    assert.equal(answer.choices[0].message.content, "hi from upstream");
    const metrics = await rawRequest(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    assert.equal(served200(metrics.text), 1);
    child.proc.kill("SIGTERM");
    assert.equal((await exited(child, 10_000)).code, 0, child.stderr);
    assert.doesNotMatch(child.stderr, /worker started/, "no cluster for one worker");
  });

  describe("two workers on Redis and PostgreSQL", () => {
    // Each run apart from every other: its own PostgreSQL database, and user, token and
    // channel names (what Redis's keys are made of) that no other run uses; its keys are
    // deleted at the end.
    const run = randomBytes(3).toString("hex");
    const redisUrl = `redis://127.0.0.1:6379/${1 + (process.pid % 15)}`;
    let ledgerUrl: string | undefined;
    let dropLedger: (() => Promise<void>) | undefined;
    let gateway: { child: Child; base: string } | undefined;
    let file: string;

    const sharedYaml = (workers: number, modelSet: Obj = { [FIRST_MODEL]: models[FIRST_MODEL] }) => (port: number) => config({
      server: { listen: `127.0.0.1:${port}`, drain_timeout: "5s", workers },
      store: redisUrl,
      users: { [`alice-${run}`]: { credit: 100, groups: ["default"] } },
      tokens: [token(`alice-${run}-main`, TOKEN, { user: `alice-${run}` })],
      channels: [channel(`main-${run}`, upstream.url, { models: Object.keys(modelSet) })],
      models: modelSet,
    }) + `ledger: ${ledgerUrl}\n`;

    before(async () => {
      try {
        const { createTestDatabase } = await import("../helpers/postgres.js");
        const db = await createTestDatabase("gw_cluster");
        ledgerUrl = db.url;
        dropLedger = db.drop;
      } catch (err) {
        throw new Error(`PostgreSQL on 127.0.0.1:5432 (user postgres) is needed (.ci/run starts it): ${(err as Error).message}`);
      }
      // One worker on the redis store and the postgres ledger must start (Redis answering).
      const probe = await serveGateway({ file: join(dir, "probe.yaml"), cwd: dir, yaml: sharedYaml(1), readyMs: 15_000 });
      probe.child.proc.kill("SIGTERM");
      await exited(probe.child, 10_000);
    });
    after(async () => {
      if (gateway && alive(gateway.child)) gateway.child.proc.kill("SIGKILL");
      await dropLedger?.().catch(() => {});
      await deleteRunKeys(redisUrl, (key) => key.includes(run) || [...answeredBy].some((p) => key.endsWith(p)));
    });

    /** Requests on fresh connections until `want` distinct workers have answered 200 (an
     * answer of another status, e.g. before a reload reached a worker, does not count). */
    async function answeringWorkers(base: string, model: string, want: number): Promise<Set<string>> {
      const seen = new Set<string>();
      await eventually(async () => {
        const r = await chat(base, model);
        if (r.status === 200) seen.add(mintedBy(r));
        return seen.size >= want;
      }, 15_000, `${want} workers answering ${model} with 200`);
      return seen;
    }

    test("a Redis that does not answer stops the cluster at start: exit 1, naming redis", async () => {
      const closed = await closedPort();
      const badFile = join(dir, "unreachable.yaml");
      await writeFile(badFile, sharedYaml(2)(0).replace(redisUrl, `redis://127.0.0.1:${closed}/0`));
      const child = runGateway(["--config", badFile], dir);
      children.push(child);
      const { code } = await exited(child, 30_000);
      assert.equal(code, 1, child.stderr);
      assert.match(child.stderr, new RegExp(`store: redis at 127\\.0\\.0\\.1:${closed}\\S* is unreachable`));
      assert.equal(logLines(child, "a worker failed to start; stopping").length, 1, child.stderr);
      assert.equal(logLines(child, "worker died; starting another").length, 0, "no restart loop at start");
    });

    test("two workers share the socket and both answer", async () => {
      file = join(dir, "shared.yaml");
      gateway = await serveGateway({ file, cwd: dir, yaml: sharedYaml(2), readyMs: 30_000 });
      const started = logLines(gateway.child, "worker started");
      assert.equal(started.length, 2, gateway.child.stderr);
      assert.notEqual(started[0].pid, started[1].pid);
      assert.equal((await answeringWorkers(gateway.base, FIRST_MODEL, 2)).size, 2);
    });

    test("/metrics counts the requests both workers served, whichever worker is scraped", async () => {
      assert.ok(gateway, "the test above starts the cluster");
      const base = gateway.base;
      const before = served200((await rawRequest(`${base}/metrics`)).text);
      const served = new Set<string>();
      for (let i = 0; i < 12; i++) {
        const r = await chat(base);
        assert.equal(r.status, 200, r.text);
        served.add(mintedBy(r));
      }
      assert.equal(served.size, 2, "round-robin spreads fresh connections over both workers");
      // Scrapes on fresh connections reach either worker; each shows the whole group.
      for (let i = 0; i < 4; i++) {
        const scrape = await rawRequest(`${base}/metrics`);
        assert.equal(scrape.status, 200);
        assert.equal(served200(scrape.text), before + 12);
        const series = scrape.text.split("\n").filter((l) => l.startsWith("gateway_requests_total{"))
          .map((l) => l.slice(0, l.lastIndexOf(" ")));
        assert.equal(new Set(series).size, series.length, "one sample per label set: the workers' series merged");
        assert.match(scrape.text, /^# TYPE gateway_request_duration_seconds histogram$/m);
      }
    });

    test("a config edit is compiled once and reaches both workers; a bad edit changes nothing", async () => {
      assert.ok(gateway, "the test above starts the cluster");
      const { child, base } = gateway;
      const port = Number(new URL(base).port);
      assert.equal((await chat(base, ADDED_MODEL)).status, 404, "not priced yet");
      await writeFile(file, sharedYaml(2, models)(port));
      assert.equal((await answeringWorkers(base, ADDED_MODEL, 2)).size, 2);
      await eventually(() => logLines(child, "worker applied config").length === 2, 5000, "both workers to apply");
      assert.equal(logLines(child, "config reloaded").length, 1, "the primary compiles once");
      assert.equal(new Set(logLines(child, "worker applied config").map((l) => l.pid)).size, 2);

      await writeFile(file, sharedYaml(2, models)(port) + "nonsense_key: 1\n");
      await eventually(() => logLines(child, "config rejected; keeping the running config").length === 1, 5000, "the rejection");
      const rejected = logLines(child, "config rejected; keeping the running config")[0];
      assert.deepEqual(rejected.issues, [`${file}:${Number(sharedYaml(2, models)(port).split("\n").length)}:1: nonsense_key: unknown key "nonsense_key"`]);
      assert.equal(logLines(child, "worker applied config").length, 2, "no worker saw the bad edit");
      assert.equal((await answeringWorkers(base, ADDED_MODEL, 2)).size, 2);
      // Counted where they happen: once each, in the primary, whichever worker is scraped.
      const scrape = (await rawRequest(`${base}/metrics`)).text;
      assert.match(scrape, /^gateway_config_reloads_total\{outcome="applied"\} 1$/m);
      assert.match(scrape, /^gateway_config_reloads_total\{outcome="rejected"\} 1$/m);

      // SIGHUP reloads in the primary (the file is unchanged since the bad edit… which is
      // rejected again); a hangup reaching a worker does not end it.
      child.proc.kill("SIGHUP");
      for (const started of logLines(child, "worker started")) process.kill(Number(started.pid), "SIGHUP");
      await eventually(() => logLines(child, "config rejected; keeping the running config").length === 2, 5000, "the SIGHUP reload");
      assert.equal(logLines(child, "worker died; starting another").length, 0, child.stderr);
      assert.ok(alive(child));
      assert.equal((await answeringWorkers(base, ADDED_MODEL, 2)).size, 2);
    });

    test("a worker killed with SIGKILL is replaced and requests keep being answered", async () => {
      assert.ok(gateway, "the test above starts the cluster");
      const { child, base } = gateway;
      const victim = Number(logLines(child, "worker started")[0].pid);
      process.kill(victim, "SIGKILL");
      let failures = 0;
      let answered = 0;
      await eventually(async () => {
        const r = await within(3000, chat(base)).catch(() => undefined);
        if (r?.status === 200) answered++;
        else failures++;
        return logLines(child, "worker started").length === 3;
      }, 15_000, "a replacement worker");
      const died = logLines(child, "worker died; starting another");
      assert.equal(died.length, 1, child.stderr);
      assert.equal(died[0].pid, victim);
      assert.equal(died[0].signal, "SIGKILL");
      // The primary may hand over one connection before it sees the worker gone.
      assert.ok(failures <= 1, `${failures} requests failed while one worker was down (${answered} answered)`);
      const now = await answeringWorkers(base, FIRST_MODEL, 2);
      assert.equal(now.size, 2, "the replacement serves beside the survivor");
    });

    test("SIGTERM drains both workers (a slow request still finishes) and exits 0", async () => {
      assert.ok(gateway, "the test above starts the cluster");
      const { child, base } = gateway;
      const slow = chat(base, FIRST_MODEL, "slow");
      await eventually(() => upstream.state.bodies.some((b) => (b.messages as { content: string }[])[0]?.content === "slow"),
        5000, "the slow request upstream");
      child.proc.kill("SIGTERM");
      const answer = await slow;
      assert.equal(answer.status, 200, answer.text);
      assert.equal((await exited(child, 15_000)).code, 0, child.stderr);
      assert.equal(logLines(child, "worker stopped").length, 2, child.stderr);
    });
  });
});
