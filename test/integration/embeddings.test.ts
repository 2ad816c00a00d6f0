// Embeddings and moderations pass through to OpenAI-protocol channels with the official SDK,
// billed from the body's usage; a model of another endpoint kind is pointed to its path.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { fakeEmbeddingUsage, startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, capturingSink, channel, config } from "./support.js";

describe("embeddings and moderations", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;
  const sink = capturingSink();

  before(async () => {
    fake = await startFakeOpenAI({ keys: [CHANNEL_KEY] });
    gw = await startTestGateway(config({
      channels: [channel("main", fake.url, {
        models: ["gpt-4o-mini", "text-embedding-3-small", "omni-moderation-latest", "priced-moderation", "rerank-v1"],
        model_map: { "text-embedding-3-small": "text-embedding-3-small-v2" },
      })],
      models: {
        "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
        "text-embedding-3-small": { endpoint: "embeddings", price: { input: 0.02 } },
        "omni-moderation-latest": { endpoint: "moderation", price: { input: 0 } },
        "priced-moderation": { endpoint: "moderation", price: { input: 0.1 } },
        "rerank-v1": { endpoint: "rerank", price: { input: 0.05 } },
      },
    }), { usage: sink });
    client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
    destroyAgents();
  });

  test("embeddings: one vector per input through the SDK, model_map applied, usage billed", async () => {
    const r = await client.embeddings.create({ model: "text-embedding-3-small", input: ["alpha", "beta"], encoding_format: "float" });
    assert.equal(r.data.length, 2);
    assert.deepEqual(r.data[1].embedding, [0.2, -0.2, 0.3]);
    const seen = fake.received.at(-1)!;
    assert.equal(seen.path, "/v1/embeddings");
    assert.equal(seen.body.model, "text-embedding-3-small-v2");
    assert.equal(seen.headers.authorization, `Bearer ${CHANNEL_KEY}`);
    const record = sink.records.at(-1)!;
    assert.equal(record.modelName, "text-embedding-3-small");
    assert.deepEqual(record.usage, { input: fakeEmbeddingUsage.prompt_tokens, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
    // 8 tokens × 0.02 / 1M × 0.7 = 0.000000112 → 112 nano
    const entry = gw.store.logs({ limit: 1 })[0];
    assert.equal(entry.costNano, 112n);
  });

  test("moderations pass through", async () => {
    const r = await client.moderations.create({ model: "omni-moderation-latest", input: "hello" });
    assert.equal(r.results[0].flagged, false);
    assert.equal(fake.received.at(-1)!.path, "/v1/moderations");
  });

  test("a priced moderation (its answers never carry usage) is billed by estimate, marked, not as a billing fault", async () => {
    const { response } = await client.moderations.create({ model: "priced-moderation", input: "hello there" }).withResponse();
    const entry = gw.store.logs({ requestId: String(response.headers.get("x-gateway-request-id")) })[0];
    assert.equal(entry.estimated, true);
    // Not the reservation (which counts the model's 4096 output tokens): the body's size, nothing generated.
    assert.equal(entry.usage.output, 0);
    assert.ok(entry.costNano > 0n);
  });

  test("rerank passes through (query and documents required), billed by its reported tokens", async () => {
    const post = (body: Record<string, unknown>) => fetch(`${gw.url}/v1/rerank`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const r = await post({ model: "rerank-v1", query: "fox", documents: ["a fox", "a dog", "a cat"], top_n: 2 });
    assert.equal(r.status, 200);
    const body = await r.json();
    assert.deepEqual(body.results.map((x: { index: number }) => x.index), [0, 1]);
    assert.equal(fake.received.at(-1)!.path, "/v1/rerank");
    assert.equal(gw.store.logs({ limit: 1 })[0].costNano, 875n); // 25 × 0.05 / 1M × 0.7
    const bad = await post({ model: "rerank-v1", query: "fox", documents: [] });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.code, "missing_required_parameter");
  });

  test("a chat model on /v1/embeddings, or an embeddings model on chat, is pointed to its endpoint", async () => {
    await assert.rejects(client.embeddings.create({ model: "gpt-4o-mini", input: "x" }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && /\/v1\/chat\/completions/.test(e.message));
    await assert.rejects(client.chat.completions.create({ model: "text-embedding-3-small", messages: [{ role: "user", content: "x" }] }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && /\/v1\/embeddings/.test(e.message));
  });
});
