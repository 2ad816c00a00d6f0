// Limits per token and per user: a token's own limits replace the site-wide ones; a user's
// limits hold all its tokens together, and come from its plan where the user sets none; a
// plan's groups are the user's too. Each 429 names whose limit it was.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, channel, config, hello, postChat, token, type Obj } from "./support.js";

const OTHER = "sk-gw-test-alice-other-0001";
const BOB = "sk-gw-test-bob-0000000001";

describe("limits per token, per user and per plan", () => {
  let fake: FakeOpenAI;
  let script: Script = { kind: "ok" };
  const open: TestGateway[] = [];

  before(async () => {
    fake = await startFakeOpenAI({ name: "acct-limits", script: () => script });
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    script = { kind: "ok" };
    fake.received.length = 0;
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
  });

  async function gateway(parts: { limits?: Obj; users?: Obj; tokens?: Obj[]; plans?: Obj }): Promise<TestGateway> {
    const doc = parse(config({
      limits: parts.limits, users: parts.users, tokens: parts.tokens, channels: [channel("main", fake.url, { groups: ["default", "gold"] })],
      groups: { default: {}, gold: {}, video: {} },
    })) as Obj;
    const gw = await startTestGateway(stringify(parts.plans ? { plans: parts.plans, ...doc } : doc));
    open.push(gw);
    return gw;
  }

  const chat = (gw: TestGateway, key: string) => postChat(gw.url, hello, { authorization: `Bearer ${key}` });

  test("a token's own request_rate replaces the site-wide one, for that token only", async () => {
    const gw = await gateway({
      limits: { request_rate: { max: 5, per: "1m" } },
      tokens: [token("alice-main", TOKEN, { limits: { request_rate: { max: 1, per: "1m" } } }), token("alice-other", OTHER)],
    });
    assert.equal((await chat(gw, TOKEN)).status, 200);
    const refused = await chat(gw, TOKEN);
    assert.equal(refused.status, 429, refused.text);
    assert.match(refused.json.error.message, /Request rate limit exceeded: at most 1 requests per 1 minute/);
    for (let i = 0; i < 5; i++) assert.equal((await chat(gw, OTHER)).status, 200, "the other token keeps the site-wide 5");
    assert.equal((await chat(gw, OTHER)).status, 429);
  });

  test("a user's request_rate holds all its tokens together and says it is the account's", async () => {
    const gw = await gateway({
      users: { alice: { credit: 100, groups: ["default"], limits: { request_rate: { max: 3, per: "1m" } } }, bob: { credit: 100, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN), token("alice-other", OTHER), { name: "bob-main", key: BOB, user: "bob", group: "default" }],
    });
    assert.equal((await chat(gw, TOKEN)).status, 200);
    assert.equal((await chat(gw, OTHER)).status, 200);
    assert.equal((await chat(gw, TOKEN)).status, 200);
    const refused = await chat(gw, OTHER);
    assert.equal(refused.status, 429, refused.text);
    assert.match(refused.json.error.message, /Request rate limit of your account exceeded: at most 3 requests per 1 minute/);
    assert.equal((await chat(gw, BOB)).status, 200, "another user is not held by alice's limit");
    assert.equal(fake.received.length, 4);
  });

  test("a plan gives its groups and its limits; the user's own limit replaces the plan's one by one", async () => {
    script = { kind: "ok", chunks: 3, chunkDelayMs: 300 };
    const gw = await gateway({
      plans: { pro: { groups: ["gold"], limits: { concurrent: 1, request_rate: { max: 100, per: "1m" } } } },
      users: { alice: { credit: 100, groups: ["default"], plan: "pro", limits: { request_rate: { max: 2, per: "1m" } } } },
      tokens: [token("alice-main", TOKEN, { group: "gold" }), token("alice-other", OTHER)],
    });
    // The plan's gold group is alice's too; its concurrent 1 holds both tokens together.
    const first = postChat(gw.url, { ...hello, stream: true }, { authorization: `Bearer ${TOKEN}` });
    await eventually(() => fake.received.length === 1, 3000, "the first stream reaches the upstream");
    const second = await chat(gw, OTHER);
    assert.equal(second.status, 429, second.text);
    assert.match(second.json.error.message, /at most 1 request in flight for your account/);
    assert.equal((await first).status, 200);
    // The user's own request_rate (2) replaced the plan's (100): the refused one counted nowhere.
    script = { kind: "ok" };
    assert.equal((await chat(gw, OTHER)).status, 200);
    const third = await chat(gw, TOKEN);
    assert.equal(third.status, 429, third.text);
    assert.match(third.json.error.message, /Request rate limit of your account exceeded: at most 2 requests/);
  });

  test("a token's tokens_per_minute replaces the site-wide one", async () => {
    const gw = await gateway({
      limits: { tokens_per_minute: 1_000_000 },
      tokens: [token("alice-main", TOKEN, { limits: { tokens_per_minute: 10 } })],
    });
    const refused = await chat(gw, TOKEN);
    assert.equal(refused.status, 429, refused.text);
    assert.match(refused.json.error.message, /more than the 10 tokens per minute allowed for this token/);
  });

  test("gateway check refuses an unknown plan and a plan naming an unknown group", async () => {
    await assert.rejects(gateway({
      plans: { pro: { groups: ["platinum"] } },
      users: { alice: { credit: 1, groups: ["default"], plan: "basic" } },
    }), (err: Error) => /unknown plan "basic"/.test(err.message) && /unknown group "platinum"/.test(err.message));
  });
});
