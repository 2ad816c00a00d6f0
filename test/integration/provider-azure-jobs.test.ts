// Kind azure-openai beyond a request and its answer: a video job's status and video fetched
// for a client, the gateway's own background check of the job, and a realtime session, all
// at Azure's v1 API (/openai/v1/videos…, /openai/v1/realtime?model=<deployment>) with the
// `api-key` header, as the channel's kind makes them. And a poll whose channel's kind cannot
// make its credentials ends in a clean error, the key at fault out of rotation.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import OpenAI from "openai";
import WebSocket from "ws";
import { KeyHealth } from "../../src/routing/key-health.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeAzure, type FakeAzure } from "../helpers/fake-azure.js";
import { fakeVideo, type VideoJobScript } from "../helpers/fake-openai.js";
import { startFakeRealtime, type FakeRealtime } from "../helpers/fake-realtime.js";
import { startFakeVertex, type FakeVertex } from "../helpers/fake-vertex.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, closedPort, config, token, type Obj } from "./support.js";

const KEY = "azure-key-SECRET-0001";
const API_VERSION = "2024-10-21";
const SORA_DEPLOYMENT = "my-sora";
const REALTIME_DEPLOYMENT = "my-realtime";
/** alice's token in group default (the realtime channel's); TOKEN is hers in group video. */
const DEFAULT_TOKEN = "sk-gw-test-alice-default-0001";
/** sora-2 at 0.1 per second in group video (×1): an 8-second job costs 0.8. */
const EIGHT_SECONDS_NANO = 800_000_000n;

const models: Obj = {
  "sora-2": { endpoint: "video", request_schema: "video-family-c", price: { per_second: 0.1 } },
  "gpt-realtime": { endpoint: "realtime", price: { input: 4, output: 16, cache_read_ratio: 0.1 } },
};

function azureChannel(name: string, baseUrl: string, extra: Obj): Obj {
  return { name, kind: "azure-openai", base_url: baseUrl, keys: [KEY], api_version: API_VERSION, ...extra };
}

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

describe("kind azure-openai: video jobs and realtime", () => {
  const jobs = new Map<string, VideoJobScript>();
  let azure: FakeAzure;
  let realtime: FakeRealtime;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    // Jobs are queued until a test says otherwise.
    azure = await startFakeAzure({ keys: [KEY], deployments: [SORA_DEPLOYMENT], apiVersions: [API_VERSION], videoJob: (id) => jobs.get(id) ?? { status: "queued" } });
    realtime = await startFakeRealtime({ keys: [KEY], azure: { deployments: [REALTIME_DEPLOYMENT] } });
    gw = await startTestGateway(config({
      tokens: [token("alice-video", TOKEN, { group: "video" }), token("alice-main", DEFAULT_TOKEN)],
      channels: [
        azureChannel("azure-video", azure.url, { groups: ["video"], models: ["sora-2"], model_map: { "sora-2": SORA_DEPLOYMENT } }),
        azureChannel("azure-rt", realtime.url, { groups: ["default"], models: ["gpt-realtime"], model_map: { "gpt-realtime": REALTIME_DEPLOYMENT } }),
      ],
      models,
    }), { jobWatch: { firstCheckMs: 40, maxIntervalMs: 160 } });
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await azure?.close();
    await realtime?.close();
    destroyAgents();
  });

  const calls = (method: string, pathname: string) => azure.received.filter((r) => r.method === method && r.pathname === pathname);

  test("the SDK creates a job on Azure's v1 API; its status and its video come from Azure's v1 paths with api-key", async () => {
    const job = await client.videos.create({ model: "sora-2" as never, prompt: "a fox in the snow", seconds: "8" as never });
    assert.equal(job.status, "queued");
    const created = calls("POST", "/openai/v1/videos").at(-1)!;
    assert.equal(created.apiKey, KEY);
    assert.match(String(created.headers["content-type"]), /^multipart\/form-data/);
    assert.equal(gw.store.logs({ limit: 1 })[0].costNano, EIGHT_SECONDS_NANO);

    jobs.set(job.id, { status: "in_progress" });
    const status = await client.videos.retrieve(job.id);
    assert.equal(status.status, "in_progress");
    assert.equal(status.id, job.id);
    const polled = calls("GET", `/openai/v1/videos/${job.id}`);
    assert.ok(polled.length >= 1, "the status came from Azure's v1 path");
    for (const r of polled) {
      assert.equal(r.apiKey, KEY);
      assert.equal(r.headers.authorization, undefined, "the key goes as api-key only");
      assert.equal(r.apiVersion, null, "the v1 API takes no dated api-version");
    }

    jobs.set(job.id, { status: "completed" });
    const content = await client.videos.downloadContent(job.id, { variant: "thumbnail" });
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), fakeVideo);
    const downloaded = calls("GET", `/openai/v1/videos/${job.id}/content`).at(-1)!;
    assert.equal(downloaded.apiKey, KEY);
    assert.equal(new URL(downloaded.path, "http://x").searchParams.get("variant"), "thumbnail", "the variant is kept");
  });

  test("the background check polls the job at Azure's v1 path with api-key and refunds it once it failed", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore + EIGHT_SECONDS_NANO);
    jobs.set(id, { status: "in_progress" });
    await eventually(() => calls("GET", `/openai/v1/videos/${id}`).length >= 1, 5000, "a background check at Azure's path");
    const check = calls("GET", `/openai/v1/videos/${id}`)[0];
    assert.equal(check.apiKey, KEY);
    assert.equal(check.headers.authorization, undefined);
    assert.equal(gw.store.logs({ requestId })[0].refundedAt, undefined, "a job in progress is not refunded");
    jobs.set(id, { status: "failed" });
    await eventually(() => gw.store.logs({ requestId })[0].refundedAt !== undefined, 5000, "the background refund");
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore);
  });

  test("a realtime session opens at Azure's v1 realtime path (deployment in the query, api-key), relays both ways and is billed", async () => {
    const ws = new WebSocket(`${gw.url.replace("http", "ws")}/v1/realtime?model=gpt-realtime`, { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` } });
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

    assert.deepEqual(types, [
      "session.created", "conversation.item.created", "response.created", "response.output_text.delta", "response.output_text.delta", "response.done",
    ]);
    assert.deepEqual((seen.get("conversation.item.created")!.item as Obj).content, item.content, "the client's event reached Azure and its answer came back");
    const upstream = realtime.sessions.at(-1)!;
    assert.equal(upstream.model, REALTIME_DEPLOYMENT);
    assert.equal(upstream.headers["api-key"], KEY);
    assert.equal(upstream.headers.authorization, undefined);
    // (30 × 4 + 10 × 4 × 0.1 + 20 × 16) / 1M × 0.7 = 0.000310800 → 310,800 nano
    assert.equal(atDone.length, 1, "the response's entry is in the log when the client gets its response.done");
    assert.equal(atDone[0].costNano, 310_800n);
    assert.deepEqual([atDone[0].channel, atDone[0].upstreamModel], ["azure-rt", REALTIME_DEPLOYMENT]);
    await eventually(() => gw.store.logs({ requestId: id }).length === 1, 5000, "the session's own entry");
    assert.deepEqual([gw.store.logs({ requestId: id })[0].status, gw.store.logs({ requestId: id })[0].costNano], [101, 0n]);
  });
});

describe("a job poll whose channel's kind cannot make its credentials", () => {
  let azure: FakeAzure;
  let vertex: FakeVertex;
  let gw: TestGateway;
  let downFile: string;

  before(async () => {
    azure = await startFakeAzure({ keys: [KEY], deployments: [SORA_DEPLOYMENT], apiVersions: [API_VERSION] });
    vertex = await startFakeVertex({ project: "fake-project", locations: ["us-east5"] });
    // The fake's key file, but exchanged at a port nothing listens on.
    const key = JSON.parse(readFileSync(vertex.keyFile, "utf8")) as Obj;
    downFile = `${vertex.keyFile}.down.json`;
    writeFileSync(downFile, JSON.stringify({ ...key, token_uri: `http://127.0.0.1:${await closedPort()}/token` }));
    // Only the client's polls look at jobs here.
    gw = await startTestGateway(videoYaml(azureChannel("videos", azure.url, { groups: ["video"], models: ["sora-2"], model_map: { "sora-2": SORA_DEPLOYMENT } })), {
      jobWatch: { firstCheckMs: 3_600_000 },
    });
  });
  after(async () => {
    await gw?.close();
    await azure?.close();
    await vertex?.close();
    destroyAgents();
  });

  function videoYaml(videos: Obj): string {
    return config({ tokens: [token("alice-video", TOKEN, { group: "video" })], channels: [videos], models });
  }

  /** The channel that made the job, named as before but now a Vertex one on `file`. */
  const vertexVideos = (file: string) => videoYaml({
    name: "videos", kind: "vertex", base_url: vertex.url, credentials_file: file, region: "us-east5", groups: ["video"], models: ["sora-2"],
  });

  const poll = async (id: string) => {
    const res = await fetch(`${gw.url}/v1/videos/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: await res.json() as { error: { code: string; message: string } } };
  };

  test("a token endpoint that does not answer: upstream_unavailable, and the gateway serves on", async () => {
    const { id } = await submit(gw);
    gw.swapConfig(vertexVideos(downFile));
    const { status, body } = await poll(id);
    assert.equal(status, 502);
    assert.equal(body.error.code, "upstream_unavailable");
    assert.equal(vertex.received.length, 0, "nothing went to the model endpoint");
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  });

  test("a key file its token endpoint refuses: upstream_auth_failed, and the key goes out of rotation", async () => {
    gw.swapConfig(videoYaml(azureChannel("videos", azure.url, { groups: ["video"], models: ["sora-2"], model_map: { "sora-2": SORA_DEPLOYMENT } })));
    const { id } = await submit(gw);
    vertex.refuseTokens = true;
    gw.swapConfig(vertexVideos(vertex.keyFile));
    const { status, body } = await poll(id);
    assert.equal(status, 502);
    assert.equal(body.error.code, "upstream_auth_failed");
    assert.ok(vertex.refusals.length >= 1, "the token endpoint was asked and refused");
    const outs = await new KeyHealth(gw.state.keyed).view(gw.box.current.channels.get("videos")!);
    assert.equal(outs[0]?.reason, "auth");
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  });
});
