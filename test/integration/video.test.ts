// Video generation: the request is checked against its model's family schema (SPEC's
// missing_required_parameter), passed through to an OpenAI-protocol channel, billed per
// second of the job's video, and the job can be fetched later from the same channel by the
// same account only.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { fakeVideo, startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, channel, config, token } from "./support.js";

const BOB = "sk-gw-test-bob-000000000001";

describe("video", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(config({
      users: { alice: { credit: 100, groups: ["default", "video"] }, bob: { credit: 100, groups: ["video"] } },
      tokens: [token("alice-video", TOKEN, { group: "video" }), token("bob-video", BOB, { user: "bob", group: "video" })],
      channels: [channel("videos", fake.url, { groups: ["video"], models: ["sora-2", "veo-fast"] })],
      models: {
        "sora-2": { endpoint: "video", request_schema: "video-family-c", price: { per_second: 0.1 } },
        "veo-fast": { endpoint: "video", request_schema: "video-family-c-fast", price: { per_second: 0.05 } },
      },
    }));
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  const post = (body: Record<string, unknown>, key = TOKEN) => fetch(`${gw.url}/v1/videos`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body),
  });

  test("the SDK creates a job (multipart), billed per second of the job's video (group video: ×1)", async () => {
    const job = await client.videos.create({ model: "sora-2" as never, prompt: "a fox in the snow", seconds: "8" as never });
    assert.equal(job.status, "queued");
    const seen = fake.received.at(-1)!;
    assert.equal(seen.path, "/v1/videos");
    assert.match(String(seen.headers["content-type"]), /^multipart\/form-data/);
    assert.equal(gw.store.logs({ limit: 1 })[0].costNano, 800_000_000n); // 8 s × 0.1
  });

  test("a missing prompt is 400 missing_required_parameter; family rules name the field; nothing sent", async () => {
    const before = fake.received.length;
    const missing = await post({ model: "sora-2" });
    assert.equal(missing.status, 400);
    const body = await missing.json();
    assert.equal(body.error.type, "invalid_request_error");
    assert.equal(body.error.code, "missing_required_parameter");
    const tooLong = await post({ model: "veo-fast", prompt: "p", seconds: "20" });
    assert.equal(tooLong.status, 400);
    assert.match((await tooLong.json()).error.message, /'seconds'/);
    const mixed = await post({ model: "sora-2", prompt: "p", image: "https://x.test/a.png", referenceImages: ["https://x.test/b.png"] });
    assert.match((await mixed.json()).error.message, /cannot be combined/);
    assert.equal(fake.received.length, before);
  });

  test("the job is fetched from its channel by its owner; the video comes back as bytes; polls are free", async () => {
    const created = await (await post({ model: "sora-2", prompt: "p", seconds: "4" })).json();
    const status = await client.videos.retrieve(created.id);
    assert.equal(status.status, "completed");
    const content = await client.videos.downloadContent(created.id);
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), fakeVideo);
    assert.equal(fake.received.at(-1)!.headers.authorization, `Bearer ${CHANNEL_KEY}`);
    assert.equal(gw.store.logs({ limit: 1 })[0].costNano, 0n);
    const other = await fetch(`${gw.url}/v1/videos/${created.id}`, { headers: { authorization: `Bearer ${BOB}` } });
    assert.equal(other.status, 404, "another account's job is unknown to it");
    const unknown = await fetch(`${gw.url}/v1/videos/video_nope`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(unknown.status, 404);
  });
});
