// Kind azure-openai with Entra ID client credentials beyond a request and its answer: a
// realtime session's handshake, a video job's status poll and content download, and the
// gateway's own background check of the job all carry the token the gateway minted at a
// fake Entra token endpoint (the fake Azure resource and realtime endpoint take only its
// current tokens). And when the token endpoint refuses the credential or does not answer,
// a realtime connect gets the gateway's error, the refused credential goes out of rotation,
// and the background check logs, keeps the job and looks again once the credential works.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import OpenAI from "openai";
import WebSocket from "ws";
import { applyLogLevel, setLogLevel, setLogSink } from "../../src/observability/log.js";
import { KeyHealth } from "../../src/routing/key-health.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeAzure, type AzureReceived, type FakeAzure } from "../helpers/fake-azure.js";
import { startFakeEntra, type FakeEntra } from "../helpers/fake-entra.js";
import { fakeVideo, type VideoJobScript } from "../helpers/fake-openai.js";
import { startFakeRealtime, type FakeRealtime } from "../helpers/fake-realtime.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, closedPort, config, token, type Obj } from "./support.js";

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = "1b730954-1685-4b74-9bfd-dac224a7b894";
const SECRET = "Xy8Q~client-SECRET-value-0001";
const WRONG_SECRET = "Wr0ng~client-SECRET-value-9999";
const SORA_DEPLOYMENT = "my-sora";
const REALTIME_DEPLOYMENT = "my-realtime";
/** alice's token in group default (the realtime channels'); TOKEN is hers in group video. */
const DEFAULT_TOKEN = "sk-gw-test-alice-default-0001";
/** sora-2 at 0.1 per second in group video (×1): an 8-second job costs 0.8. */
const EIGHT_SECONDS_NANO = 800_000_000n;
/** Served by a channel whose token endpoint refuses its credential; by one whose token
 * endpoint does not answer. */
const RT_REFUSED = "gpt-realtime-refused";
const RT_DOWN = "gpt-realtime-down";

const models: Obj = {
  "sora-2": { endpoint: "video", request_schema: "video-family-c", price: { per_second: 0.1 } },
  "gpt-realtime": { endpoint: "realtime", price: { input: 4, output: 16, cache_read_ratio: 0.1 } },
  [RT_REFUSED]: { endpoint: "realtime", price: { input: 4, output: 16 } },
  [RT_DOWN]: { endpoint: "realtime", price: { input: 4, output: 16 } },
};

/** An Azure channel whose only credential is Entra client credentials (no `keys`). */
function entraChannel(name: string, baseUrl: string, authorityHost: string, extra: Obj, secret = SECRET): Obj {
  return {
    name, kind: "azure-openai", base_url: baseUrl,
    credentials: { tenant_id: TENANT, client_id: CLIENT, client_secret: secret, authority_host: authorityHost }, ...extra,
  };
}

const videoChannel = (baseUrl: string, authorityHost: string, secret = SECRET) =>
  entraChannel("azure-video", baseUrl, authorityHost, { groups: ["video"], models: ["sora-2"], model_map: { "sora-2": SORA_DEPLOYMENT } }, secret);

/** Submits an 8-second job through the gateway; its id and the request id of its charge. */
async function submit(gw: TestGateway): Promise<{ id: string; requestId: string }> {
  const res = await fetch(`${gw.url}/v1/videos`, {
    method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "sora-2", prompt: "a fox in the snow", seconds: "8" }),
  });
  assert.equal(res.status, 200);
  const { id } = await res.json() as { id: string };
  const requestId = res.headers.get("x-gateway-request-id")!;
  await eventually(() => gw.store.logs({ requestId }).length === 1, 5000, "the submission's usage entry");
  assert.equal(gw.store.logs({ requestId })[0].costNano, EIGHT_SECONDS_NANO);
  return { id, requestId };
}

const realtimeUrl = (gw: TestGateway, model: string) => `${gw.url.replace("http", "ws")}/v1/realtime?model=${model}`;

/** A realtime connect the gateway refuses: its status, request id and error body. */
async function refusedConnect(gw: TestGateway, model: string): Promise<{ status: number; requestId: string | undefined; text: string }> {
  const ws = new WebSocket(realtimeUrl(gw, model), { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` } });
  ws.on("error", () => {}); // "closed before the connection was established": expected here
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    ws.once("unexpected-response", (_req, r) => resolve(r));
    ws.once("open", () => reject(new Error("the session opened")));
  });
  const text = await new Promise<string>((resolve) => { let t = ""; res.on("data", (c) => { t += c; }); res.on("end", () => resolve(t)); });
  ws.terminate();
  return { status: res.statusCode ?? 0, requestId: res.headers["x-gateway-request-id"] as string | undefined, text };
}

describe("kind azure-openai with Entra ID client credentials: realtime sessions and video jobs", () => {
  const jobs = new Map<string, VideoJobScript>();
  let entra: FakeEntra;
  let azure: FakeAzure;
  let realtime: FakeRealtime;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    entra = await startFakeEntra([{ tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET }]);
    // Neither takes an api-key: only the fake Entra's current tokens.
    azure = await startFakeAzure({
      keys: [], acceptsToken: (t) => entra.valid(t), deployments: [SORA_DEPLOYMENT], apiVersions: [],
      videoJob: (id) => jobs.get(id) ?? { status: "queued" },
    });
    realtime = await startFakeRealtime({ keys: [], azure: { deployments: [REALTIME_DEPLOYMENT], acceptsToken: (t) => entra.valid(t) } });
    gw = await startTestGateway(config({
      tokens: [token("alice-video", TOKEN, { group: "video" }), token("alice-main", DEFAULT_TOKEN)],
      channels: [
        videoChannel(azure.url, entra.url),
        entraChannel("azure-rt", realtime.url, entra.url, { groups: ["default"], models: ["gpt-realtime"], model_map: { "gpt-realtime": REALTIME_DEPLOYMENT } }),
      ],
      models,
    }), { jobWatch: { firstCheckMs: 40, maxIntervalMs: 160 } });
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([entra?.close(), azure?.close(), realtime?.close()]);
    destroyAgents();
  });

  const calls = (method: string, pathname: string) => azure.received.filter((r) => r.method === method && r.pathname === pathname);
  const minted = () => new Set(entra.mints.filter((m) => m.clientId === CLIENT).map((m) => `Bearer ${m.token}`));

  /** The request carried a token the fake Entra issued to the credential, and no api-key. */
  function assertMintedToken(r: { headers: AzureReceived["headers"] }, what: string): void {
    assert.ok(minted().has(String(r.headers.authorization)), `${what} carries a minted token (got ${String(r.headers.authorization)})`);
    assert.equal(r.headers["api-key"], undefined, `${what} carries no api-key`);
  }

  test("a realtime session's handshake carries the minted token (no api-key); frames flow both ways and are billed", async () => {
    const sessions = realtime.sessions.length;
    const ws = new WebSocket(realtimeUrl(gw, "gpt-realtime"), { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` } });
    let id = "";
    ws.once("upgrade", (res) => { id = String(res.headers["x-gateway-request-id"]); });
    const types: string[] = [];
    const seen = new Map<string, Record<string, unknown>>();
    let atDone: ReturnType<TestGateway["store"]["logs"]> = [];
    const done = new Promise<void>((resolve) => ws.on("message", (data) => {
      const event = JSON.parse(data.toString()) as Record<string, unknown>;
      const type = event.type as string;
      types.push(type);
      seen.set(type, event);
      if (type === "conversation.item.created") ws.send(JSON.stringify({ type: "response.create", response: { modalities: ["text"] } }));
      if (type !== "response.done") return;
      atDone = gw.store.logs({ requestId: `${id}-r1` });
      resolve();
    }));
    await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
    const item = { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] };
    ws.send(JSON.stringify({ type: "conversation.item.create", item }));
    await done;
    ws.close();
    await new Promise((resolve) => ws.once("close", resolve));

    assert.equal(realtime.sessions.length, sessions + 1);
    const upstream = realtime.sessions.at(-1)!;
    assert.equal(upstream.model, REALTIME_DEPLOYMENT);
    assertMintedToken(upstream, "the realtime handshake");
    assert.ok(!JSON.stringify(upstream.headers).includes(SECRET), "the secret never goes to the resource");
    assert.deepEqual(types, [
      "session.created", "conversation.item.created", "response.created", "response.output_text.delta", "response.output_text.delta", "response.done",
    ]);
    assert.deepEqual((seen.get("conversation.item.created")!.item as Obj).content, item.content, "the client's event reached Azure and its answer came back");
    // (30 × 4 + 10 × 4 × 0.1 + 20 × 16) / 1M × 0.7 = 0.000310800 → 310,800 nano
    assert.equal(atDone.length, 1, "the response's entry is in the log when the client gets its response.done");
    assert.equal(atDone[0].costNano, 310_800n);
    assert.deepEqual([atDone[0].channel, atDone[0].upstreamModel], ["azure-rt", REALTIME_DEPLOYMENT]);
    await eventually(() => gw.store.logs({ requestId: id }).length === 1, 5000, "the session's own entry");
    assert.deepEqual([gw.store.logs({ requestId: id })[0].status, gw.store.logs({ requestId: id })[0].costNano], [101, 0n]);
  });

  test("a video job's status poll and its content download carry the minted token", async () => {
    const job = await client.videos.create({ model: "sora-2" as never, prompt: "a fox in the snow", seconds: "8" as never });
    assert.equal(job.status, "queued");
    assertMintedToken(calls("POST", "/openai/v1/videos").at(-1)!, "the job's creation");

    jobs.set(job.id, { status: "in_progress" });
    const status = await client.videos.retrieve(job.id);
    assert.equal(status.status, "in_progress", "the resource took the poll's token");
    const polls = calls("GET", `/openai/v1/videos/${job.id}`);
    assert.ok(polls.length >= 1);
    for (const r of polls) assertMintedToken(r, "a status poll");

    jobs.set(job.id, { status: "completed" });
    const content = await client.videos.downloadContent(job.id);
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), fakeVideo, "the resource took the download's token");
    const downloads = calls("GET", `/openai/v1/videos/${job.id}/content`);
    assert.equal(downloads.length, 1);
    assertMintedToken(downloads[0], "the content download");
  });

  test("the background check polls with the minted token and refunds the job once it failed", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    jobs.set(id, { status: "in_progress" });
    // Nobody polls this job but the gateway itself.
    await eventually(() => calls("GET", `/openai/v1/videos/${id}`).length >= 1, 5000, "a background check");
    for (const r of calls("GET", `/openai/v1/videos/${id}`)) assertMintedToken(r, "a background check");
    assert.equal(gw.store.logs({ requestId })[0].refundedAt, undefined, "a job in progress is not refunded");
    jobs.set(id, { status: "failed" });
    await eventually(() => gw.store.logs({ requestId })[0].refundedAt !== undefined, 5000, "the background refund");
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore);
    for (const r of calls("GET", `/openai/v1/videos/${id}`)) assertMintedToken(r, "a background check");
  });
});

describe("kind azure-openai: a token endpoint refusing the credential or not answering", () => {
  const jobs = new Map<string, VideoJobScript>();
  const logged: string[] = [];
  let restoreLog: () => void;
  let entra: FakeEntra;
  let azure: FakeAzure;
  let realtime: FakeRealtime;
  let gw: TestGateway;
  let down: string;

  /** The config with the video channel's credential `secret`. */
  const yaml = (secret: string) => config({
    tokens: [token("alice-video", TOKEN, { group: "video" }), token("alice-main", DEFAULT_TOKEN)],
    channels: [
      videoChannel(azure.url, entra.url, secret),
      entraChannel("rt-refused", realtime.url, entra.url, { groups: ["default"], models: [RT_REFUSED], model_map: { [RT_REFUSED]: REALTIME_DEPLOYMENT } }, WRONG_SECRET),
      entraChannel("rt-down", realtime.url, down, { groups: ["default"], models: [RT_DOWN], model_map: { [RT_DOWN]: REALTIME_DEPLOYMENT } }),
    ],
    models,
  });

  before(async () => {
    restoreLog = setLogSink((line) => logged.push(line));
    setLogLevel("warn");
    entra = await startFakeEntra([{ tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET }]);
    azure = await startFakeAzure({
      keys: [], acceptsToken: (t) => entra.valid(t), deployments: [SORA_DEPLOYMENT], apiVersions: [],
      videoJob: (id) => jobs.get(id) ?? { status: "queued" },
    });
    realtime = await startFakeRealtime({ keys: [], azure: { deployments: [REALTIME_DEPLOYMENT], acceptsToken: (t) => entra.valid(t) } });
    down = `http://127.0.0.1:${await closedPort()}`;
    gw = await startTestGateway(yaml(SECRET), { jobWatch: { firstCheckMs: 40, maxIntervalMs: 160 } });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([entra?.close(), azure?.close(), realtime?.close()]);
    destroyAgents();
    restoreLog?.();
    applyLogLevel(undefined);
    for (const line of logged) {
      for (const secret of [SECRET, WRONG_SECRET]) assert.ok(!line.includes(secret), `a log line holds a secret: ${line}`);
    }
  });

  const outs = (channel: string) => new KeyHealth(gw.state.keyed).view(gw.box.current.channels.get(channel)!);

  test("a refused credential: the realtime connect gets 502 upstream_auth_failed, no session opens, the credential goes out of rotation", async () => {
    const refusals = entra.refusals.length;
    const { status, requestId, text } = await refusedConnect(gw, RT_REFUSED);
    assert.equal(status, 502);
    assert.ok(typeof requestId === "string" && requestId !== "", "the refusal carries a request id");
    assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, "upstream_auth_failed");
    for (const secret of [SECRET, WRONG_SECRET]) assert.ok(!text.includes(secret), "no secret in the answer");
    assert.deepEqual(entra.refusals.slice(refusals), [{ error: "invalid_client", clientId: CLIENT }], "the token endpoint was asked and refused");
    assert.equal(realtime.sessions.length, 0, "no handshake went to the resource");
    assert.equal((await outs("rt-refused"))[0]?.reason, "auth");
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  });

  test("a token endpoint that does not answer: the realtime connect gets 502 upstream_unavailable, the credential stays in, the gateway serves on", async () => {
    const { status, text } = await refusedConnect(gw, RT_DOWN);
    assert.equal(status, 502);
    assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, "upstream_unavailable");
    assert.equal(realtime.sessions.length, 0);
    assert.equal((await outs("rt-down"))[0], undefined, "a token endpoint that is down says nothing of the credential");
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    const again = await refusedConnect(gw, RT_DOWN);
    assert.equal(again.status, 502, "the next connect is answered the same");
  });

  test("the background check with a refused credential logs, takes it out and keeps the job: it refunds once the credential works", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    jobs.set(id, { status: "in_progress" });
    await eventually(() => azure.received.some((r) => r.method === "GET" && r.pathname === `/openai/v1/videos/${id}`), 5000, "a first background check");

    // The same channel, its credential's secret now one the token endpoint refuses.
    const refusals = entra.refusals.length;
    gw.swapConfig(yaml(WRONG_SECRET));
    const failed = () => logged.filter((l) => l.includes("background job check failed") && l.includes(id));
    await eventually(() => failed().length >= 1, 5000, "the background check's warning");
    assert.ok(entra.refusals.length > refusals, "the check asked the token endpoint");
    assert.match(failed()[0], /the Entra token endpoint refused client [^"]+: 401 invalid_client/);
    assert.ok(logged.some((l) => l.includes("channel key out of rotation") && l.includes('"channel":"azure-video"') && l.includes('"reason":"auth"')));
    assert.equal((await outs("azure-video"))[0]?.reason, "auth", "the refused credential is out of rotation");
    jobs.set(id, { status: "failed" });
    // Checks go on (the job stays scheduled) without a token the resource takes: no refund.
    const warned = failed().length;
    await eventually(() => failed().length > warned, 5000, "a later check of the job");
    assert.equal(gw.store.logs({ requestId })[0].refundedAt, undefined);

    gw.swapConfig(yaml(SECRET));
    await eventually(() => gw.store.logs({ requestId })[0].refundedAt !== undefined, 5000, "the refund once the credential works");
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore);
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  });
});
