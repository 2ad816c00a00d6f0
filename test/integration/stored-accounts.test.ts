// Stored accounts on the request path: a token created in the store authenticates at once
// (on the instance that made it) and follows the same policy as gateway.yaml's; a stored
// user's plan, limits and budgets apply; a top-up raises what the balance covers; bad
// settings are refused naming the field; names clash with gateway.yaml's never.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { InvalidField } from "../../src/accounts/money-input.js";
import { NameTaken } from "../../src/accounts/store.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, channel, config, hello, postChat, token, type Obj } from "./support.js";

const by = { actor: "test-admin" };

describe("stored accounts on the request path", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI({ name: "stored" });
  });
  afterEach(async () => {
    await gw?.close();
    fake.received.length = 0;
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
  });

  async function gateway(): Promise<TestGateway> {
    const doc = parse(config({
      channels: [channel("main", fake.url, { groups: ["default", "gold"] })], groups: { default: {}, gold: {}, video: {} },
      tokens: [token("alice-main", TOKEN)],
      models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 1000, output: 1000 } } },
    })) as Obj;
    gw = await startTestGateway(stringify({
      plans: { pro: { groups: ["gold"], limits: { request_rate: { max: 2, per: "1m" } }, budgets: [{ tokens: 100000, per: "day" }] } },
      ...doc,
    }));
    return gw;
  }

  const chat = (key: string, body: Obj = hello) => postChat(gw.url, body, { authorization: `Bearer ${key}` });

  test("a stored token works at once, with its user's credit from the ledger; revoked, it is refused", async () => {
    await gateway();
    const svc = gw.accounts.service;
    await svc.createUser({ name: "bob", groups: ["default"] }, by);
    const { key, token: view } = await svc.createToken({ name: "bob-1", user: "bob" }, by);
    assert.match(key, /^sk-gw-[A-Za-z0-9_-]{43}$/);
    assert.equal(view.key_hint, `${key.slice(0, 10)}…${key.slice(-4)}`);
    const broke = await chat(key);
    assert.equal(broke.status, 402, "no credit yet: the balance is used up");
    await svc.addCredit("bob", 5_000_000_000n, "first top-up", by, "pay-1");
    assert.equal((await chat(key)).status, 200, "the top-up applies on this instance before its answer");
    const again = await svc.addCredit("bob", 5_000_000_000n, "first top-up", by, "pay-1");
    assert.equal(again.created, false, "the same payment credits once");
    assert.equal(again.user.credit, "5");
    await svc.revokeToken("bob-1", by);
    const refused = await chat(key);
    assert.equal(refused.status, 401);
    assert.equal(refused.json.error.code, "invalid_token");
  });

  test("a stored user's plan gives its groups, limits and budgets; the user's own budgets replace the plan's", async () => {
    await gateway();
    const svc = gw.accounts.service;
    await svc.createUser({ name: "carol", groups: ["default"], settings: { plan: "pro" }, creditNano: 10_000_000_000n }, by);
    const { key } = await svc.createToken({ name: "carol-gold", user: "carol", group: "gold" }, by);
    assert.equal((await chat(key)).status, 200, "the plan's group");
    assert.equal((await chat(key)).status, 200);
    const limited = await chat(key);
    assert.equal(limited.status, 429, limited.text);
    assert.match(limited.json.error.message, /Request rate limit of your account exceeded: at most 2 requests/);
    await svc.updateUser("carol", { settings: { plan: "pro", budgets: [{ tokens: 20, per: "day" }] } }, by);
    // Its own budget (20 tokens a day) replaced the plan's; 34 tokens are used today already.
    const budget = await chat(key, { ...hello, max_tokens: 1 });
    assert.equal(budget.status, 429, budget.text);
    assert.equal(budget.json.error.code, "budget_exceeded", budget.text);
  });

  test("bad settings are refused naming the field; gateway.yaml's names are taken", async () => {
    await gateway();
    const svc = gw.accounts.service;
    const refused = async (p: Promise<unknown>, field: RegExp) => {
      await assert.rejects(p, (err: unknown) => err instanceof InvalidField && field.test(err.field) ? true : assert.fail(String(err)));
    };
    await refused(svc.createUser({ name: "dan", settings: { plan: "platinum" } }, by), /^plan$/);
    await refused(svc.createUser({ name: "dan", settings: { limits: { concurrent: 0 } } }, by), /^limits\.concurrent$/);
    await refused(svc.createUser({ name: "dan", settings: { budgets: [{ per: "day" }] } }, by), /^budgets\.0$/);
    await refused(svc.createUser({ name: "dan", settings: { budgets: [{ tokens: 5, per: "5h", rolling: false }] } }, by), /^budgets\.0\.rolling$/);
    await refused(svc.createUser({ name: "dan", groups: ["nope"] }, by), /^groups$/);
    await assert.rejects(svc.createUser({ name: "alice" }, by), (err: unknown) => err instanceof NameTaken && err.where === "gateway.yaml");
    await svc.createUser({ name: "dan", groups: ["default"] }, by);
    await refused(svc.createToken({ name: "dan-1", user: "dan", settings: { plan: "pro" } }, by), /^plan$/);
    await assert.rejects(svc.createToken({ name: "alice-main", user: "dan" }, by), (err: unknown) => err instanceof NameTaken && err.where === "gateway.yaml");
  });
});
