// A video job is charged when it is submitted; when the upstream later reports it failed,
// whether a client poll through the gateway or the gateway's own background check sees it,
// the charge is refunded exactly once and the usage entry marked. Completed jobs keep theirs.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { runLogs } from "../../src/cli/logs.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { fakeVideo, startFakeOpenAI, type FakeOpenAI, type VideoJobScript } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { CHANNEL_KEY, TOKEN, channel, config, token } from "./support.js";

/** sora-2 at 0.1 per second in group video (×1): an 8-second job costs 0.8. */
const EIGHT_SECONDS_NANO = 800_000_000n;

const videoConfig = (fakeUrl: string, store?: string) => config({
  store,
  users: { alice: { credit: 100, groups: ["default", "video"] } },
  tokens: [token("alice-video", TOKEN, { group: "video" })],
  channels: [channel("videos", fakeUrl, { groups: ["video"], models: ["sora-2"] })],
  models: { "sora-2": { endpoint: "video", request_schema: "video-family-c", price: { per_second: 0.1 } } },
});

/** A fake video upstream whose jobs are in the state the test sets (queued until then). */
async function fakeVideoUpstream(): Promise<{ fake: FakeOpenAI; jobs: Map<string, VideoJobScript> }> {
  const jobs = new Map<string, VideoJobScript>();
  const fake = await startFakeOpenAI({ keys: [CHANNEL_KEY], videoJob: (id) => jobs.get(id) ?? { status: "queued" } });
  return { fake, jobs };
}

/** Submits an 8-second job; its id and the request id its charge is logged under. */
async function submit(gw: TestGateway): Promise<{ id: string; requestId: string }> {
  const res = await fetch(`${gw.url}/v1/videos`, {
    method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "sora-2", prompt: "a fox in the snow", seconds: "8" }),
  });
  assert.equal(res.status, 200);
  const body = await res.json() as { id: string };
  const requestId = res.headers.get("x-gateway-request-id")!;
  await eventually(() => gw.store.logs({ requestId }).length === 1, 5000, "the submission's usage entry");
  assert.equal(gw.store.logs({ requestId })[0].costNano, EIGHT_SECONDS_NANO);
  return { id: body.id, requestId };
}

/** Spend in cents as chat front-ends read it. */
async function dashboardCents(gw: TestGateway): Promise<number> {
  const res = await fetch(`${gw.url}/v1/dashboard/billing/usage`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await res.json()) as { total_usage: number }).total_usage;
}

const refundedAt = (gw: TestGateway, requestId: string) => gw.store.logs({ requestId })[0]?.refundedAt;
const pollsOf = (fake: FakeOpenAI, id: string) => fake.received.filter((r) => r.method === "GET" && r.path === `/v1/videos/${id}`).length;

describe("video refunds: a client poll through the gateway", () => {
  let upstream: Awaited<ReturnType<typeof fakeVideoUpstream>>;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await fakeVideoUpstream();
    // The background check is pushed out of the way: only client polls look here.
    gw = await startTestGateway(videoConfig(upstream.fake.url), { jobWatch: { firstCheckMs: 3_600_000 } });
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await upstream?.fake.close();
    destroyAgents();
  });

  test("a poll that sees the job failed refunds its charge and marks the usage entry", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const centsBefore = await dashboardCents(gw);
    const { id, requestId } = await submit(gw);
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore + EIGHT_SECONDS_NANO);
    assert.equal(await dashboardCents(gw), centsBefore + 80);
    upstream.jobs.set(id, { status: "in_progress" });
    assert.equal((await client.videos.retrieve(id)).status, "in_progress");
    assert.equal(refundedAt(gw, requestId), undefined, "a job in progress is not refunded");
    upstream.jobs.set(id, { status: "failed", error: { code: "moderation_blocked", message: "blocked" } });
    const failed = await client.videos.retrieve(id);
    assert.equal(failed.status, "failed", "the answer is relayed as the upstream gave it");
    assert.equal(failed.error?.code, "moderation_blocked");
    await eventually(() => refundedAt(gw, requestId) !== undefined, 5000, "the entry marked refunded");
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore);
    assert.equal(gw.ledger.spentByToken("alice-video"), gw.store.spentByToken("alice-video"));
    assert.equal(gw.store.spentByUser("alice"), spentBefore);
    assert.equal(await dashboardCents(gw), centsBefore);
    assert.equal(gw.store.logs({ requestId })[0].costNano, EIGHT_SECONDS_NANO, "the entry keeps what was charged");
  });

  test("polling a failed job again does not refund it twice", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    upstream.jobs.set(id, { status: "failed" });
    await client.videos.retrieve(id);
    await eventually(() => refundedAt(gw, requestId) !== undefined, 5000, "the first refund");
    const first = refundedAt(gw, requestId);
    await client.videos.retrieve(id);
    await client.videos.retrieve(id);
    assert.equal(refundedAt(gw, requestId), first);
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore);
    assert.equal(gw.store.spentByUser("alice"), spentBefore);
  });

  test("a completed job keeps its charge, and its video still comes back as bytes", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    upstream.jobs.set(id, { status: "completed" });
    assert.equal((await client.videos.retrieve(id)).status, "completed");
    const content = await client.videos.downloadContent(id);
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), fakeVideo);
    // Once completed, a later "failed" (a provider's glitch) does not undo a delivered video.
    upstream.jobs.set(id, { status: "failed" });
    await client.videos.retrieve(id);
    assert.equal(refundedAt(gw, requestId), undefined);
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore + EIGHT_SECONDS_NANO);
  });

  test("a 404 for a job the upstream created is not taken as a failure", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    upstream.jobs.set(id, { httpError: 404 });
    const res = await fetch(`${gw.url}/v1/videos/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 404);
    await res.arrayBuffer();
    assert.equal(refundedAt(gw, requestId), undefined);
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore + EIGHT_SECONDS_NANO);
  });
});

describe("video refunds: the gateway's background check", () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-video-refund-"));
  const storePath = join(dir, "gateway.db");
  let upstream: Awaited<ReturnType<typeof fakeVideoUpstream>>;
  let gw: TestGateway;

  before(async () => {
    upstream = await fakeVideoUpstream();
    gw = await startTestGateway(videoConfig(upstream.fake.url), {
      store: openSqliteStore(storePath), jobWatch: { firstCheckMs: 40, maxIntervalMs: 160 },
    });
  });
  after(async () => {
    await gw?.close();
    gw?.store.close();
    await upstream?.fake.close();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a job nobody polls is checked in the background and refunded when it fails", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    upstream.jobs.set(id, { status: "in_progress" });
    await eventually(() => pollsOf(upstream.fake, id) >= 1, 5000, "a background check");
    assert.equal(upstream.fake.received.filter((r) => r.path === `/v1/videos/${id}`).at(-1)!.headers.authorization, `Bearer ${CHANNEL_KEY}`);
    assert.equal(refundedAt(gw, requestId), undefined);
    upstream.jobs.set(id, { status: "failed" });
    await eventually(() => refundedAt(gw, requestId) !== undefined, 5000, "the background refund");
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore);
    assert.equal(gw.store.spentByToken("alice-video"), gw.ledger.spentByToken("alice-video"));
    assert.equal(await dashboardCents(gw), Number(spentBefore) / 1e7);
    const polls = pollsOf(upstream.fake, id);
    const other = await submit(gw); // its refund takes several more checks
    upstream.jobs.set(other.id, { status: "failed" });
    await eventually(() => refundedAt(gw, other.requestId) !== undefined, 5000, "the second job's refund");
    assert.equal(pollsOf(upstream.fake, id), polls, "a refunded job is no longer checked");
  });

  test("upstream errors during checks are survived; the job is refunded once it reports failure", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    upstream.jobs.set(id, { httpError: 500 });
    await eventually(() => pollsOf(upstream.fake, id) >= 1, 5000, "a check answered 500");
    upstream.jobs.set(id, { destroy: true });
    const polls = pollsOf(upstream.fake, id);
    await eventually(() => pollsOf(upstream.fake, id) > polls, 5000, "a check whose connection is dropped");
    upstream.jobs.set(id, { httpError: 404 });
    const polls404 = pollsOf(upstream.fake, id);
    await eventually(() => pollsOf(upstream.fake, id) > polls404, 5000, "a check answered 404");
    assert.equal(refundedAt(gw, requestId), undefined);
    upstream.jobs.set(id, { status: "failed" });
    await eventually(() => refundedAt(gw, requestId) !== undefined, 5000, "the refund after the errors");
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore);
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
  });

  test("a completed job is not refunded and is no longer checked", async () => {
    const spentBefore = gw.ledger.spentByUser("alice");
    const { id, requestId } = await submit(gw);
    upstream.jobs.set(id, { status: "completed" });
    await eventually(() => pollsOf(upstream.fake, id) >= 1, 5000, "a background check");
    const polls = pollsOf(upstream.fake, id);
    upstream.jobs.set(id, { status: "failed" }); // a later answer must not matter: it was delivered
    const other = await submit(gw);
    upstream.jobs.set(other.id, { status: "failed" });
    await eventually(() => refundedAt(gw, other.requestId) !== undefined, 5000, "another job's refund");
    assert.equal(pollsOf(upstream.fake, id), polls);
    assert.equal(refundedAt(gw, requestId), undefined);
    assert.equal(gw.ledger.spentByUser("alice"), spentBefore + EIGHT_SECONDS_NANO);
  });

  test("`gateway logs` shows the refund", async () => {
    const { id, requestId } = await submit(gw);
    upstream.jobs.set(id, { status: "failed" });
    await eventually(() => refundedAt(gw, requestId) !== undefined, 5000, "the refund");
    let out = "";
    const io = { out: (t: string) => void (out += t), err: (t: string) => void (out += t) };
    assert.equal(await runLogs(["--store", `sqlite:${storePath}`, "--request-id", requestId], io), 0);
    assert.match(out, /refunded/);
    out = "";
    assert.equal(await runLogs(["--store", `sqlite:${storePath}`, "--request-id", requestId, "--json"], io), 0);
    const line = JSON.parse(out) as { cost: number; refundedAt: string | null };
    assert.equal(line.cost, 0.8);
    assert.equal(Date.parse(line.refundedAt!), refundedAt(gw, requestId));
  });
});
