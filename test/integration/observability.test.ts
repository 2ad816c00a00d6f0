// Observability as an operator sees it, against the real `gateway` command and fake
// upstreams: one JSON line per request on stdout (names and numbers, never a key or a body)
// with log.level switching it live; /metrics and /healthz only on metrics.listen (the
// public port answers 404 for both), once for a whole cluster; upstream errors by class per
// channel, time to first token, tokens, cost, reservations, config generation and the last
// reload's result; model labels bounded by the config; and the example Grafana dashboard,
// whose every query must name a metric the gateway exports.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { eventually } from "../helpers/gateway.js";
import { alive, exited, root, runGateway, type Child } from "../helpers/spawn-gateway.js";
import {
  CHANNEL_KEY, TOKEN, channel, closedPort, config, postChat, rawRequest, token, type Obj, type RawResponse,
} from "./support.js";

/** Text that must never reach the log: in a request body, and in the upstream's answer. */
const BODY_MARKER = "body-marker-5e1f0c";
const ANSWER_TEXT = "answer-marker-91c2ad";
const BAD_KEY = "sk-gw-not-a-real-token-77aa";

/** The request lines of a child's stdout (every stdout line must be JSON). */
function requestLines(child: Child): Obj[] {
  return child.stdout.split("\n").filter((l) => l !== "").map((line) => {
    const entry = JSON.parse(line) as Obj;
    assert.equal(entry.msg, "request", `a stdout line that is not a request line: ${line}`);
    return entry;
  });
}

const idOf = (r: RawResponse): string => String(r.headers["x-gateway-request-id"]);

/** The lines logged for one request id. */
const linesOf = (child: Child, id: string): Obj[] => requestLines(child).filter((l) => l.requestId === id);

/** The value of one sample (`name{labels}` exactly as exposed, labels in their order), or undefined. */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Sum of a metric's samples whose labels include every `label="value"` given. */
function total(metrics: string, name: string, labels: readonly string[] = []): number {
  return metrics.split("\n")
    .filter((l) => (l.startsWith(name + "{") || l.startsWith(name + " ")) && labels.every((x) => l.includes(x)))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

/** Every sample name an exposition has (histograms: their _bucket, _sum and _count). */
function sampleNames(metrics: string): Set<string> {
  const names = new Set<string>();
  for (const line of metrics.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    names.add(line.slice(0, line.search(/[{ ]/)));
  }
  return names;
}

/** Runs `gateway --config file` and waits until its metrics address answers /healthz 200. */
async function serveWithOps(file: string, cwd: string, opsBase: string, readyMs = 15_000): Promise<Child> {
  const child = runGateway(["--config", file], cwd);
  try {
    await eventually(async () => {
      if (!alive(child)) throw new Error(`gateway exited early:\n${child.stderr}`);
      return (await rawRequest(`${opsBase}/healthz`).catch(() => undefined))?.status === 200;
    }, readyMs, "the metrics address to answer /healthz");
  } catch (err) {
    if (alive(child)) child.proc.kill("SIGKILL");
    throw err;
  }
  return child;
}

describe("observability: request log, metrics.listen, /metrics, Grafana dashboard", () => {
  let dir: string;
  let main: FakeOpenAI;
  let flaky: FakeOpenAI;
  let child: Child;
  let file: string;
  let base: string;
  let ops: string;
  let port: number;
  let opsPort: number;

  const yaml = (logLevel?: string) => config({
    server: { listen: `127.0.0.1:${port}` },
    store: `sqlite:${join(dir, "gateway.db")}`,
    // The higher priority channel fails (503): its error is counted by class, then the request fails over.
    channels: [channel("flaky", flaky.url, { priority: 10 }), channel("main", main.url)],
    tokens: [token("alice-main", TOKEN)],
  }) + `metrics:\n  listen: 127.0.0.1:${opsPort}\n` + (logLevel ? `log:\n  level: ${logLevel}\n` : "");

  /** Rewrites the config, sends SIGHUP and waits for `check` on /metrics. */
  /** Writes the config and (unless `signal` is false) sends SIGHUP; without it the file
   * watcher alone picks the edit up. */
  async function reload(text: string, check: (metrics: string) => boolean, what: string, signal = true): Promise<void> {
    await writeFile(file, text);
    if (signal) child.proc.kill("SIGHUP");
    await eventually(async () => check((await rawRequest(`${ops}/metrics`)).text), 10_000, what);
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-observability-"));
    main = await startFakeOpenAI({ name: "main", script: () => ({ kind: "ok", text: ANSWER_TEXT }) });
    flaky = await startFakeOpenAI({ name: "flaky", script: () => ({ kind: "error", status: 503 }) });
    [port, opsPort] = [await closedPort(), await closedPort()];
    base = `http://127.0.0.1:${port}`;
    ops = `http://127.0.0.1:${opsPort}`;
    file = join(dir, "gateway.yaml");
    await writeFile(file, yaml());
    child = await serveWithOps(file, dir, ops);
  });
  after(async () => {
    if (child && alive(child)) child.proc.kill("SIGKILL");
    await main?.close();
    await flaky?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("metrics.listen: /metrics and /healthz answer there only; the public port answers 404 for both", async () => {
    const health = await rawRequest(`${ops}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(health.json, { status: "ok", degraded: [] });
    const metrics = await rawRequest(`${ops}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(String(metrics.headers["content-type"]), /^text\/plain/);
    assert.equal(sample(metrics.text, "gateway_config_generation"), 1);
    assert.equal(sample(metrics.text, "gateway_config_last_reload_successful"), 1);
    assert.ok(sample(metrics.text, "gateway_config_last_reload_timestamp_seconds")! > Date.now() / 1000 - 600);
    // The private address serves nothing else.
    assert.equal((await rawRequest(`${ops}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
    // The public port: both are unknown paths there, answered like any other (404 with a request id).
    for (const path of ["/metrics", "/healthz"]) {
      const r = await rawRequest(`${base}${path}`);
      assert.equal(r.status, 404, `${path} on the public port`);
      assert.ok(r.headers["x-gateway-request-id"]);
      assert.doesNotMatch(r.text, /gateway_requests_total|"status":"ok"/);
    }
    // The public port still serves the API.
    assert.equal((await rawRequest(`${base}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  });

  test("one JSON line per request on stdout: ids, names, status, tokens, cost and durations; never a key or a body", async () => {
    const ok = await postChat(base, { model: "gpt-4o-mini", messages: [{ role: "user", content: BODY_MARKER }] });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.choices[0].message.content, ANSWER_TEXT);
    const streamed = await postChat(base, {
      model: "gpt-4o-mini", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: BODY_MARKER }],
    });
    assert.equal(streamed.status, 200);
    const refused = await rawRequest(`${base}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${BAD_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: BODY_MARKER }] }),
    });
    assert.equal(refused.status, 401);
    const unknown = await postChat(base, { model: "no-such-model-3b7e", messages: [{ role: "user", content: BODY_MARKER }] });
    assert.equal(unknown.status, 404);

    const ids = [ok, streamed, refused, unknown].map(idOf);
    await eventually(() => ids.every((id) => linesOf(child, id).length > 0), 5000, "a request line for each request");
    for (const id of ids) assert.equal(linesOf(child, id).length, 1, `exactly one line for ${id}`);

    const [line] = linesOf(child, idOf(ok));
    assert.equal(line.level, "info");
    assert.ok(!Number.isNaN(Date.parse(String(line.time))));
    assert.equal(line.method, "POST");
    assert.equal(line.path, "/v1/chat/completions");
    assert.equal(line.protocol, "chat-completions");
    assert.equal(line.token, "alice-main");
    assert.equal(line.user, "alice");
    assert.equal(line.group, "default");
    assert.equal(line.model, "gpt-4o-mini");
    assert.equal(line.channel, "main");
    assert.equal(line.status, 200);
    assert.ok((line.attempts as number) >= 1);
    // fakeUsage: 12 prompt tokens of which 2 cached, 5 completion tokens of which 1 reasoning.
    assert.deepEqual(line.tokens, { input: 10, cache_read: 2, cache_write: 0, output: 5, reasoning: 1 });
    assert.match(String(line.cost), /^\d+\.\d+$/);
    assert.ok(Number(line.cost) > 0);
    assert.equal(typeof line.durationMs, "number");
    assert.ok((line.ttfbMs as number) > 0 && (line.ttfbMs as number) <= (line.durationMs as number));

    const [stream] = linesOf(child, idOf(streamed));
    assert.equal(stream.status, 200);
    assert.equal(stream.channel, "main");
    assert.ok((stream.ttfbMs as number) > 0, "a stream's time to first byte");
    assert.equal((stream.tokens as Obj).output, 5);

    const [denied] = linesOf(child, idOf(refused));
    assert.equal(denied.level, "warn");
    assert.equal(denied.status, 401);
    assert.equal(typeof denied.error, "string");
    assert.equal(denied.token, undefined);

    const [notFound] = linesOf(child, idOf(unknown));
    assert.equal(notFound.status, 404);
    assert.equal(notFound.model, undefined, "a model the config does not declare is not logged as one");

    for (const secret of [TOKEN, BAD_KEY, CHANNEL_KEY, BODY_MARKER, ANSWER_TEXT, "no-such-model-3b7e"]) {
      assert.ok(!child.stdout.includes(secret), `stdout must not contain ${secret}`);
    }
    assert.ok(!child.stderr.includes(TOKEN) && !child.stderr.includes(CHANNEL_KEY) && !child.stderr.includes(BODY_MARKER));
  });

  test("/metrics: upstream latency and errors by class per channel, time to first token, tokens, cost, reservations; unknown models as \"other\"", async () => {
    // A token count the gateway estimates (no Anthropic channel), so every dashboard query has a series.
    const counted = await rawRequest(`${base}/v1/messages/count_tokens`, {
      method: "POST", headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "count me" }] }),
    });
    assert.equal(counted.status, 200, counted.text);
    const m = (await rawRequest(`${ops}/metrics`)).text;
    assert.ok(total(m, "gateway_upstream_errors_total", ['channel="flaky"', 'class="server"']) >= 1, "the flaky channel's 503s, as server errors");
    assert.equal(total(m, "gateway_upstream_errors_total", ['channel="main"']), 0);
    assert.ok(total(m, "gateway_upstream_duration_seconds_count", ['channel="main"', 'outcome="200"']) >= 2);
    assert.ok(total(m, "gateway_upstream_duration_seconds_count", ['channel="flaky"', 'outcome="503"']) >= 1);
    assert.ok(total(m, "gateway_upstream_retries_total", ['channel="flaky"']) >= 1);
    assert.equal(total(m, "gateway_time_to_first_token_seconds_count", ['model="gpt-4o-mini"', 'channel="main"']), 2);
    assert.equal(total(m, "gateway_tokens_total", ['model="gpt-4o-mini"', 'kind="output"']), 10);
    assert.ok(total(m, "gateway_cost_total", ['model="gpt-4o-mini"', 'group="default"']) > 0);
    assert.equal(sample(m, "gateway_reservations_held"), 0);
    assert.equal(sample(m, "gateway_inflight_requests"), 0);
    assert.equal(total(m, "gateway_token_count_estimates_total", ['protocol="messages-count-tokens"']), 1);
    // Bounded labels: the unknown model is "other", its name appears nowhere.
    assert.ok(total(m, "gateway_requests_total", ['model="other"', 'status="404"']) >= 1);
    assert.ok(!m.includes("no-such-model-3b7e"));
    for (const line of m.split("\n").filter((l) => l.includes('model="'))) {
      const model = /model="([^"]*)"/.exec(line)![1];
      assert.ok(["", "other", "gpt-4o-mini"].includes(model), `unexpected model label in ${line}`);
    }
    for (const line of m.split("\n").filter((l) => l.includes('channel="'))) {
      const name = /channel="([^"]*)"/.exec(line)![1];
      assert.ok(["", "main", "flaky"].includes(name), `unexpected channel label in ${line}`);
    }
    assert.ok(!m.includes(TOKEN) && !m.includes(CHANNEL_KEY));
  });

  test("log.level applies on reload: warn writes only failed requests, off none; a rejected edit shows in the reload metrics", async () => {
    await reload(yaml("warn"), (m) => sample(m, "gateway_config_generation") === 2, "generation 2");
    const quiet = await postChat(base, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    assert.equal(quiet.status, 200);
    const loud = await postChat(base, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${BAD_KEY}` });
    assert.equal(loud.status, 401);
    await eventually(() => linesOf(child, idOf(loud)).length === 1, 5000, "the 401's line");
    assert.equal(linesOf(child, idOf(quiet)).length, 0, "a 200 is below warn");

    await reload(yaml("off"), (m) => sample(m, "gateway_config_generation") === 3, "generation 3");
    const silent = await postChat(base, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${BAD_KEY}` });
    assert.equal(silent.status, 401);

    // A broken edit: rejected, the running config kept, the failure visible. The watcher
    // alone reads it: a SIGHUP racing the watcher would rightly try it a second time.
    await reload("server: [not a mapping\n", (m) => sample(m, "gateway_config_last_reload_successful") === 0, "a failed reload", false);
    let m = (await rawRequest(`${ops}/metrics`)).text;
    assert.equal(sample(m, "gateway_config_generation"), 3);
    assert.equal(sample(m, 'gateway_config_reloads_total{outcome="rejected"}'), 1);
    assert.equal(sample(m, 'gateway_config_reloads_total{outcome="applied"}'), 2);

    // Back to the default level (GATEWAY_LOG_LEVEL, info here): lines again. The line of a
    // request sent later comes later on the same pipe, so the one under "off" never came.
    await reload(yaml(), (x) => sample(x, "gateway_config_generation") === 4, "generation 4");
    m = (await rawRequest(`${ops}/metrics`)).text;
    assert.equal(sample(m, "gateway_config_last_reload_successful"), 1);
    const again = await postChat(base, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    await eventually(() => linesOf(child, idOf(again)).length === 1, 5000, "a line at info again");
    assert.equal(linesOf(child, idOf(silent)).length, 0, "nothing under log.level: off");
  });

  test("every query of examples/grafana-dashboard.json names metrics the running gateway exports", async () => {
    const dashboard = JSON.parse(await readFile(join(root, "examples", "grafana-dashboard.json"), "utf8")) as {
      panels: { title: string; targets?: { expr?: string }[] }[];
    };
    const exported = sampleNames((await rawRequest(`${ops}/metrics`)).text);
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    assert.ok(exprs.length >= 10, "the dashboard has its queries");
    for (const { panel, expr } of exprs) {
      assert.equal(typeof expr, "string", `${panel}: a query without expr`);
      const names = expr!.match(/\bgateway_[a-z0-9_]+/g) ?? [];
      assert.ok(names.length > 0, `${panel}: "${expr}" names no gateway metric`);
      for (const name of names) assert.ok(exported.has(name), `${panel}: ${name} is not in the gateway's /metrics`);
    }
  });

  test("SIGTERM drains and closes the metrics address too", async () => {
    child.proc.kill("SIGTERM");
    assert.equal((await exited(child, 15_000)).code, 0, child.stderr);
    await assert.rejects(rawRequest(`${ops}/healthz`));
  });
});

describe("metrics.listen under server.workers: 2 (Redis and PostgreSQL)", () => {
  let dir: string;
  let upstream: FakeOpenAI;
  let child: Child | undefined;
  let redis: ChildProcess | undefined;
  let redisPort: number;
  let dropLedger: (() => Promise<void>) | undefined;
  let ledgerUrl: string;

  /** A Redis server of this suite's own, so it can be stopped without touching anyone else's. */
  async function startRedis(): Promise<void> {
    redis = spawn("redis-server", ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    await eventually(() => new Promise<boolean>((resolve) => {
      const s = net.connect(redisPort, "127.0.0.1", () => { s.destroy(); resolve(true); });
      s.on("error", () => resolve(false));
    }), 5000, `redis-server on port ${redisPort}`);
  }

  async function stopRedis(): Promise<void> {
    const proc = redis;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await gone;
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-observability-cluster-"));
    upstream = await startFakeOpenAI({ name: "main", script: () => ({ kind: "ok", text: ANSWER_TEXT }) });
    try {
      const { createTestDatabase } = await import("../helpers/postgres.js");
      const db = await createTestDatabase("gw_obs_cluster");
      ledgerUrl = db.url;
      dropLedger = db.drop;
      redisPort = await closedPort();
      await startRedis();
    } catch (err) {
      throw new Error(`PostgreSQL on 127.0.0.1:5432 (user postgres) and redis-server on PATH are needed (.ci/run installs them): ${(err as Error).message}`);
    }
  });
  after(async () => {
    if (child && alive(child)) child.proc.kill("SIGKILL");
    await stopRedis();
    await upstream?.close();
    await dropLedger?.().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });

  test("the primary serves the private address once: the whole group's metrics, and a /healthz that names what the workers cannot reach", async () => {
    const [port, opsPort] = [await closedPort(), await closedPort()];
    const base = `http://127.0.0.1:${port}`;
    const ops = `http://127.0.0.1:${opsPort}`;
    const file = join(dir, "cluster.yaml");
    await writeFile(file, config({
      server: { listen: `127.0.0.1:${port}`, workers: 2, drain_timeout: "5s" },
      store: `redis://127.0.0.1:${redisPort}/0`,
      channels: [channel("main", upstream.url)],
      models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } } },
    }) + `ledger: ${ledgerUrl}\nmetrics:\n  listen: 127.0.0.1:${opsPort}\n`);
    child = await serveWithOps(file, dir, ops, 30_000);
    const health = await rawRequest(`${ops}/healthz`);
    assert.deepEqual(health.json, { status: "ok", workers: 2, degraded: [] });

    // Requests on fresh connections until both workers have answered.
    const answered = new Set<string>();
    const ids: string[] = [];
    await eventually(async () => {
      const r = await postChat(base, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
      assert.equal(r.status, 200, r.text);
      ids.push(idOf(r));
      answered.add(idOf(r).split("-").pop()!);
      return answered.size >= 2;
    }, 20_000, "both workers answering");

    for (const path of ["/metrics", "/healthz"]) assert.equal((await rawRequest(`${base}${path}`)).status, 404, `${path} on the public port`);
    const m = (await rawRequest(`${ops}/metrics`)).text;
    assert.equal(total(m, "gateway_requests_total", ['status="200"']), ids.length, "every worker's requests, summed");
    assert.equal(total(m, "gateway_time_to_first_token_seconds_count"), ids.length);
    assert.equal(sample(m, "gateway_config_generation"), 1, "the generation, not a sum over processes");
    assert.equal(sample(m, "gateway_config_last_reload_successful"), 1);
    assert.equal(sample(m, "gateway_reservations_held"), 0);
    // Each worker writes its requests' lines to the one stdout.
    await eventually(() => ids.every((id) => linesOf(child!, id).length === 1), 5000, "one line per request from the workers");

    // Redis lost: the primary's /healthz says so (200: every instance shares it), and recovers.
    await stopRedis();
    await eventually(async () => (await rawRequest(`${ops}/healthz`)).json?.degraded?.includes("redis"), 10_000, "/healthz to report redis");
    const degraded = await rawRequest(`${ops}/healthz`);
    assert.equal(degraded.status, 200);
    assert.deepEqual(degraded.json, { status: "degraded", workers: 2, degraded: ["redis"] });
    await startRedis();
    await eventually(async () => (await rawRequest(`${ops}/healthz`)).json?.status === "ok", 15_000, "/healthz ok again");

    child.proc.kill("SIGTERM");
    assert.equal((await exited(child, 20_000)).code, 0, child.stderr);
  });
});
