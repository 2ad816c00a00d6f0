// Failure policy of the shared state (store: redis://…, ledger: postgres://…): a Redis of
// the test's own (killed and restarted on the same port) and a PostgreSQL database behind a
// TCP proxy the test cuts. Billed requests fail closed with 503 in each protocol's shape,
// the model list and /healthz keep answering (and say what is degraded), and service comes
// back by itself; an unreachable server at start is a clear error from `gateway`.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { openState } from "../../src/state/open.js";
import type { State } from "../../src/state/interfaces.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fake-anthropic.js";
import { startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { M, models as pricedModels } from "../helpers/protocol-world.js";
import { exited, runGateway } from "../helpers/spawn-gateway.js";
import { CHANNEL_KEY, TOKEN, channel, closedPort, config, rawRequest, type RawResponse } from "./support.js";
import { tcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

const hasRedisServer = spawnSync("redis-server", ["--version"]).status === 0;

const MODELS = { openai: M.openai, anthropic: M.anthropic, gemini: M.gemini } as const;

/** A Redis server of this test's own on `port`: killed and started again at will. */
class OwnRedis {
  #proc: ChildProcess | undefined;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(): Promise<void> {
    const proc = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    this.#proc = proc;
    await eventually(() => new Promise<boolean>((resolve) => {
      const s = net.connect(this.port, "127.0.0.1", () => { s.destroy(); resolve(true); });
      s.on("error", () => resolve(false));
    }), 5000, `redis-server on port ${this.port} to listen`);
  }

  /** SIGKILL, as a crashed server: nothing is saved (persistence is off). */
  async kill(): Promise<void> {
    const proc = this.#proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await gone;
  }
}


describe("shared state lost while serving", () => {
  let redis: OwnRedis;
  let db: TestDatabase;
  let proxy: TcpProxy;
  let state: State;
  let gw: TestGateway;
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;

  before(async () => {
    assert.ok(hasRedisServer, "redis-server must be on PATH: this suite stops a Redis of its own (.ci/run installs it)");
    redis = new OwnRedis(await closedPort());
    await redis.start();
    db = await createTestDatabase("statefail");
    proxy = await tcpProxy(Number(new URL(db.url).port || 5432));
    const ledger = new URL(db.url);
    ledger.port = String(proxy.port);
    state = await openState({ store: redis.url, ledger: ledger.toString() }, { baseDir: process.cwd(), upstreamTimeoutMs: 3000 });
    openai = await startFakeOpenAI({ name: "oa", keys: [CHANNEL_KEY] });
    anthropic = await startFakeAnthropic({ name: "an", keys: [CHANNEL_KEY] });
    gemini = await startFakeGemini({ name: "gm", keys: [CHANNEL_KEY] });
    gw = await startTestGateway(config({
      limits: { request_rate: { max: 1000, per: "1m" } },
      models: pricedModels,
      channels: [
        channel("oa", openai.url, { protocol: "openai", models: [MODELS.openai] }),
        channel("an", anthropic.url, { protocol: "anthropic", models: [MODELS.anthropic] }),
        channel("gm", gemini.url, { protocol: "gemini", models: [MODELS.gemini] }),
      ],
    }), { state });
  });

  after(async () => {
    await gw?.close();
    await state?.close();
    await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
    await proxy?.stop().catch(() => {});
    await redis?.kill();
    await db?.drop();
  });

  /** One billed request per protocol, raw, as each client sends it. */
  const billed = {
    chat: () => rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODELS.openai, messages: [{ role: "user", content: "hello" }] }),
    }),
    messages: () => rawRequest(`${gw.url}/v1/messages`, {
      method: "POST", headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: MODELS.anthropic, max_tokens: 64, messages: [{ role: "user", content: "hello" }] }),
    }),
    generate: () => rawRequest(`${gw.url}/v1beta/models/${MODELS.gemini}:generateContent`, {
      method: "POST", headers: { "x-goog-api-key": TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hello" }] }] }),
    }),
  };

  /** Each protocol's 503 shape, naming what is unavailable, with Retry-After. */
  function assertUnavailable(kind: keyof typeof billed, r: RawResponse, part: RegExp): void {
    assert.equal(r.status, 503, `${kind}: ${r.text}`);
    assert.ok(Number(r.headers["retry-after"]) > 0, `${kind}: Retry-After`);
    if (kind === "chat") {
      assert.equal(r.json.error.code, "state_unavailable");
      assert.equal(r.json.error.type, "gateway_error");
      assert.match(r.json.error.message, part);
      assert.equal(r.json.choices, undefined);
    } else if (kind === "messages") {
      assert.equal(r.json.type, "error");
      assert.equal(r.json.error.type, "overloaded_error");
      assert.match(r.json.error.message, part);
      assert.equal(r.json.content, undefined);
    } else {
      assert.equal(r.json.error.code, 503);
      assert.equal(r.json.error.status, "UNAVAILABLE");
      assert.match(r.json.error.message, part);
      assert.equal(r.json.candidates, undefined);
    }
  }

  const upstreamCalls = () => openai.received.length + anthropic.received.length + gemini.received.length;

  async function assertServing(): Promise<void> {
    const chat = await new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 })
      .chat.completions.create({ model: MODELS.openai, messages: [{ role: "user", content: "hi" }] });
    assert.ok(chat.choices[0].message.content);
    const msg = await new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 })
      .messages.create({ model: MODELS.anthropic, max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
    assert.equal(msg.content[0].type, "text");
    const gen = await new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: gw.url } })
      .models.generateContent({ model: MODELS.gemini, contents: "hi" });
    assert.ok(gen.text);
  }

  test("healthy: every protocol serves and /healthz reports nothing degraded", async () => {
    await assertServing();
    const h = await rawRequest(`${gw.url}/healthz`);
    assert.equal(h.status, 200);
    assert.deepEqual(h.json, { status: "ok", degraded: [] });
  });

  test("Redis lost: billed requests 503 before any upstream call; the model list and /healthz answer; it resumes when Redis returns", async () => {
    await redis.kill();
    await eventually(async () => (await rawRequest(`${gw.url}/healthz`)).json?.degraded?.includes("redis"), 5000, "/healthz to report redis");
    const h = await rawRequest(`${gw.url}/healthz`);
    assert.equal(h.status, 200, "a shared outage must not pull every instance out of rotation");
    assert.deepEqual(h.json, { status: "degraded", degraded: ["redis"] });

    const calls = upstreamCalls();
    for (const kind of ["chat", "messages", "generate"] as const) {
      assertUnavailable(kind, await billed[kind](), /accounts store|rate limits store/);
    }
    // Token counting is free, but its token is checked against the accounts: a 503, not a 500.
    const counted = await rawRequest(`${gw.url}/v1/messages/count_tokens`, {
      method: "POST", headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: MODELS.anthropic, messages: [{ role: "user", content: "hello" }] }),
    });
    assertUnavailable("messages", counted, /accounts store/);
    assert.equal(upstreamCalls(), calls, "no upstream was called while the request could not be billed");

    const models = await rawRequest(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(models.status, 200, models.text);
    assert.ok(models.json.data.some((m: { id: string }) => m.id === MODELS.openai));
    const geminiModels = await rawRequest(`${gw.url}/v1beta/models`, { headers: { "x-goog-api-key": TOKEN } });
    assert.equal(geminiModels.status, 200, geminiModels.text);

    // The refusals are in the usage log (PostgreSQL is up), charging nothing.
    // Unbilled entries are not waited for before the answer: wait for their commits.
    const refusedNow = async () => (await state.usageLog.logs({ limit: 1000 })).filter((e) => e.error === "state_unavailable");
    await eventually(async () => (await refusedNow()).length === 4, 5000, "the four refusals in the usage log");
    const refused = await refusedNow();
    assert.ok(refused.every((e) => e.costNano === 0n && e.status === 503));

    await redis.start(); // same port, empty: the spend counters rebuild from the ledger
    await eventually(async () => (await rawRequest(`${gw.url}/healthz`)).json?.status === "ok", 8000, "/healthz to recover");
    await eventually(async () => (await billed.chat()).status === 200, 8000, "billed requests to succeed again");
    await assertServing();
    // Spend rebuilt from the ledger matches the ledger.
    const ledgerSpend = await state.usageLog.spentByUser("alice");
    assert.ok(ledgerSpend > 0n);
    await eventually(async () => (await state.accounts.spentByUser("alice")) === await state.usageLog.spentByUser("alice"), 3000, "accounts to match the ledger");
  });

  test("PostgreSQL lost: the answer is withheld (503, nothing recorded as served); it resumes when PostgreSQL returns", async () => {
    await proxy.stop();
    const calls = upstreamCalls();
    const ids: string[] = [];
    for (const kind of ["chat", "messages", "generate"] as const) {
      const r = await billed[kind]();
      assertUnavailable(kind, r, /usage log/);
      ids.push(String(r.headers["x-gateway-request-id"]));
    }
    assert.equal(upstreamCalls(), calls + 3, "the upstreams answered; the gateway withheld it");
    await eventually(async () => (await rawRequest(`${gw.url}/healthz`)).json?.degraded?.includes("postgres"), 5000, "/healthz to report postgres");
    assert.equal((await rawRequest(`${gw.url}/healthz`)).status, 200);

    // A stream whose charge cannot be recorded does not end as complete.
    const stream = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODELS.openai, stream: true, messages: [{ role: "user", content: "hello" }] }),
    }).catch((err: Error) => ({ status: 0, text: String(err) }) as RawResponse);
    assert.ok(!stream.text.includes("[DONE]"), `the stream ended as complete: ${stream.text}`);

    const models = await rawRequest(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(models.status, 200, models.text);

    await proxy.start();
    await eventually(async () => (await rawRequest(`${gw.url}/healthz`)).json?.status === "ok", 8000, "/healthz to recover");
    await eventually(async () => (await billed.chat()).status === 200, 8000, "billed requests to succeed again");
    await assertServing();
    const logged = new Set((await state.usageLog.logs({ limit: 1000 })).map((e) => e.requestId));
    for (const id of ids) assert.ok(!logged.has(id), `withheld request ${id} is not in the usage log as served`);
  });
});

describe("shared state unreachable at start", () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), "gw-statefail-")); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  async function serve(store: string, ledger: string): Promise<{ code: number | null; stderr: string }> {
    const file = join(dir, "gateway.yaml");
    const yaml = config({ channels: [channel("oa", "http://127.0.0.1:9", { models: ["gpt-4o-mini"] })] })
      + `store: ${JSON.stringify(store)}\nledger: ${JSON.stringify(ledger)}\n`;
    await writeFile(file, yaml);
    const child = runGateway(["--config", file], dir, "error");
    const { code } = await exited(child, 15_000);
    return { code, stderr: child.stderr };
  }

  test("Redis unreachable: `gateway` exits naming redis and its address", async () => {
    const db = await createTestDatabase("statefail");
    try {
      const port = await closedPort();
      const { code, stderr } = await serve(`redis://127.0.0.1:${port}/0`, db.url);
      assert.notEqual(code, 0);
      assert.match(stderr, new RegExp(`redis at 127\\.0\\.0\\.1:${port}/0 is unreachable`), stderr);
    } finally {
      await db.drop();
    }
  });

  test("PostgreSQL unreachable: `gateway` exits naming postgres and its address", async () => {
    const port = await closedPort();
    const { code, stderr } = await serve("redis://127.0.0.1:6379/15", `postgres://postgres@127.0.0.1:${port}/gw`);
    assert.notEqual(code, 0);
    assert.match(stderr, new RegExp(`postgres at postgres://postgres@127\\.0\\.0\\.1:${port}/gw`), stderr);
  });
});
