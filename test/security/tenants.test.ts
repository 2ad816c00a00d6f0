// Attacks across tenants and around the rate limits through stateful upstream objects:
// video job polls that skip the rate limits or come from a token not allowed the job's
// model or group, another user's job, and stored responses: one user continuing another's
// (previous_response_id), and store left on by default under the operator's one account.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import { startFakeResponses, type FakeResponses } from "../helpers/fake-responses.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, channel, config, rawRequest, token, type RawResponse } from "../integration/support.js";

const LIMITED = "sk-gw-test-alice-limited-0001"; // alice, but not allowed sora-2
const OTHER_GROUP = "sk-gw-test-alice-default-0001"; // alice, group default: the video channel is not its route
const RATE = "sk-gw-test-alice-rate-000001"; // alice, used only by the rate test
const FILES = "sk-gw-test-alice-files-00001"; // alice, group default, used only by the files test
const BOB = "sk-gw-test-bob-0000000000001";
/** limits.request_rate.max: every token's own window. */
const RATE_MAX = 4;

describe("tenants stay apart", () => {
  let videos: FakeOpenAI;
  let responses: FakeResponses;
  let gemini: FakeGemini;
  let gw: TestGateway;

  before(async () => {
    [videos, responses, gemini] = await Promise.all([
      startFakeOpenAI({ keys: [CHANNEL_KEY] }), startFakeResponses({ keys: [CHANNEL_KEY] }), startFakeGemini({ keys: [CHANNEL_KEY] }),
    ]);
    gw = await startTestGateway(config({
      limits: { request_rate: { max: RATE_MAX, per: "1m" } },
      users: { alice: { credit: 100, groups: ["default", "video"] }, bob: { credit: 100, groups: ["default", "video"] } },
      tokens: [
        token("alice-video", TOKEN, { group: "video" }),
        token("alice-limited", LIMITED, { group: "video", models: ["gpt-5"] }),
        token("alice-default", OTHER_GROUP, { group: "default" }),
        token("alice-rate", RATE, { group: "video" }),
        token("alice-files", FILES, { group: "default" }),
        token("bob-video", BOB, { user: "bob", group: "video" }),
      ],
      channels: [
        channel("videos", videos.url, { groups: ["video"], models: ["sora-2"] }),
        channel("chat", videos.url, { groups: ["default"], models: ["gpt-4o-mini"] }),
        channel("gm", gemini.url, { protocol: "gemini", groups: ["default"], models: ["gemini-2.5-flash"] }),
        channel("resp", responses.url, { groups: ["default", "video"], models: ["gpt-5", "gpt-5-store"] }),
      ],
      models: {
        "sora-2": { endpoint: "video", price: { per_second: 0.1 } },
        "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
        "gemini-2.5-flash": { price: { input: 0.3, output: 2.5 } },
        "gpt-5": { endpoint: "responses", price: { input: 1.25, output: 10 } },
        "gpt-5-store": { endpoint: "responses", price: { input: 1.25, output: 10 }, store: true },
      },
    }));
  });
  after(async () => {
    await gw?.close();
    await Promise.all([videos?.close(), responses?.close(), gemini?.close()]);
    destroyAgents();
  });

  const get = (path: string, key: string) => rawRequest(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const postJson = (path: string, body: object, key: string) => rawRequest(`${gw.url}${path}`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body),
  });
  const createVideo = async (key: string): Promise<string> => {
    const r = await postJson("/v1/videos", { model: "sora-2", prompt: "a fox in the snow", seconds: "4" }, key);
    assert.equal(r.status, 200, r.text);
    return r.json.id as string;
  };
  const errorCode = (r: RawResponse) => r.json?.error?.code as string | undefined;

  test("a job poll by a token of the same user not allowed the model or the group is 403; another user's is 404", async () => {
    const id = await createVideo(TOKEN);
    const upstreamBefore = videos.received.length;
    for (const path of [`/v1/videos/${id}`, `/v1/videos/${id}/content`]) {
      const model = await get(path, LIMITED);
      assert.equal(model.status, 403, model.text);
      assert.equal(errorCode(model), "model_not_allowed");
      const group = await get(path, OTHER_GROUP);
      assert.equal(group.status, 403, group.text);
      assert.equal(errorCode(group), "group_not_allowed");
      const other = await get(path, BOB);
      assert.equal(other.status, 404, other.text);
    }
    assert.equal(videos.received.length, upstreamBefore, "none of them reached the provider");
    const own = await get(`/v1/videos/${id}`, TOKEN);
    assert.equal(own.status, 200, own.text);
  });

  test("job polls and downloads count toward request_rate: 429 once the window is full; not billed", async () => {
    const id = await createVideo(RATE); // 1 of RATE_MAX
    const paths = [`/v1/videos/${id}`, `/v1/videos/${id}/content`];
    for (let i = 1; i < RATE_MAX; i++) {
      const r = await get(paths[i % 2], RATE);
      assert.equal(r.status, 200, `poll ${i}: ${r.text}`);
    }
    const upstreamBefore = videos.received.length;
    const refused = await get(`/v1/videos/${id}`, RATE);
    assert.equal(refused.status, 429, refused.text);
    assert.equal(errorCode(refused), "rate_limited");
    assert.ok(refused.headers["retry-after"]);
    assert.equal(videos.received.length, upstreamBefore, "the refused poll did not reach the provider");
    const polls = gw.store.logs({ limit: 50 }).filter((e) => e.token === "alice-rate" && e.status === 200);
    assert.equal(polls.filter((e) => e.costNano !== 0n).length, 1, "only the creation is billed");
  });

  test("store goes upstream as false unless the model allows it; asking for it, or naming a stored object, is refused", async () => {
    const r = await postJson("/v1/responses", { model: "gpt-5", input: "hi" }, OTHER_GROUP);
    assert.equal(r.status, 200, r.text);
    assert.equal(responses.received.at(-1)!.body.store, false);
    const before = responses.received.length;
    for (const body of [
      { model: "gpt-5", input: "hi", store: true },
      { model: "gpt-5", input: "hi", previous_response_id: "resp_someone" },
      { model: "gpt-5", input: [{ type: "item_reference", id: "msg_someone" }] },
      { model: "gpt-5", prompt: { id: "pmpt_operator", version: "1" } },
      { model: "gpt-5-store", input: "hi", conversation: "conv_someone" },
    ]) {
      const refused = await postJson("/v1/responses", body, OTHER_GROUP);
      assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
      assert.equal(errorCode(refused), "stored_state_not_allowed");
    }
    assert.equal(responses.received.length, before, "nothing refused reached the provider");
  });

  test("a stored response is continued by its creator only: previous_response_id from another user is 404", async () => {
    for (const stream of [false, true]) {
      const created = await postJson("/v1/responses", { model: "gpt-5-store", input: "remember 42", stream }, OTHER_GROUP);
      assert.equal(created.status, 200, created.text);
      const id = stream ? /"id":"(resp_[^"]+)"/.exec(created.text)![1] : created.json.id as string;
      assert.equal(responses.received.at(-1)!.body.store, undefined, "the model allows storing: the client's default stands");

      const before = responses.received.length;
      const stolen = await postJson("/v1/responses", { model: "gpt-5-store", input: "what did I say?", previous_response_id: id }, BOB);
      assert.equal(stolen.status, 404, stolen.text);
      assert.equal(responses.received.length, before, "another user's continuation never reached the provider");

      const own = await postJson("/v1/responses", { model: "gpt-5-store", input: "what did I say?", previous_response_id: id }, TOKEN);
      assert.equal(own.status, 200, `${stream ? "stream" : "json"}: ${own.text}`);
      assert.equal(responses.received.at(-1)!.body.previous_response_id, id);
    }
    const unknown = await postJson("/v1/responses", { model: "gpt-5-store", input: "x", previous_response_id: "resp_never" }, TOKEN);
    assert.equal(unknown.status, 404, unknown.text);
  });

  test("files, vector stores, containers and cached contents of the upstream account are unknown to every tenant (404)", async () => {
    const upstream = () => videos.received.length + responses.received.length + gemini.received.length;
    const before = upstream();
    const refusals: [string, object][] = [
      ["/v1/responses", { model: "gpt-5", input: [{ role: "user", content: [{ type: "input_file", file_id: "file-operator" }] }] }],
      ["/v1/responses", { model: "gpt-5", input: [{ role: "user", content: [{ type: "input_image", file_id: "file-img" }] }] }],
      ["/v1/responses", { model: "gpt-5", input: "x", tools: [{ type: "file_search", vector_store_ids: ["vs_operator"] }] }],
      ["/v1/responses", { model: "gpt-5", input: "x", tools: [{ type: "code_interpreter", container: "cntr_operator" }] }],
      ["/v1/chat/completions", { model: "gpt-4o-mini", messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-operator" } }] }] }],
    ];
    for (const [path, body] of refusals) {
      const r = await postJson(path, body, FILES);
      assert.equal(r.status, 404, `${JSON.stringify(body)}: ${r.text}`);
    }
    const generate = (body: object) => rawRequest(`${gw.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: "POST", headers: { "x-goog-api-key": FILES, "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const text = { role: "user", parts: [{ text: "hi" }] };
    for (const body of [
      { contents: [text], cachedContent: "cachedContents/operator" },
      { contents: [{ role: "user", parts: [{ fileData: { mimeType: "application/pdf", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/operator" } }] }] },
    ]) {
      const r = await generate(body);
      assert.equal(r.status, 404, `${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.json.error.code, 404, "in the generate-content shape");
    }
    assert.equal(upstream(), before, "none reached a provider");
    const publicVideo = await generate({ contents: [{ role: "user", parts: [{ fileData: { fileUri: "https://www.youtube.com/watch?v=abc" } }, { text: "hi" }] }] });
    assert.equal(publicVideo.status, 200, publicVideo.text);
  });
});
