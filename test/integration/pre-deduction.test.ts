// billing.pre_deduction: what a model call must find left before it runs. worst_case (the
// default) refuses a request whose worst case the balance cannot cover; available holds what
// is left and charges the answer in full (the balance may go below zero by what one request
// costs beyond it); none holds nothing and refuses only a used-up balance.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, channel, config, postChat, type Obj } from "./support.js";

// The fake answers 12 input (2 cached) and 5 output tokens: 0.017 at 1000 per 1M (cached
// input at the input price here); the worst case of max_tokens 100 is several times that.
const ask = { model: "gpt-4o-mini", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };

describe("billing.pre_deduction", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway | undefined;

  before(async () => {
    fake = await startFakeOpenAI({ name: "pre-deduction" });
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
  });

  async function gateway(policy: string | undefined, credit: number): Promise<TestGateway> {
    const doc = parse(config({
      users: { alice: { credit, groups: ["default"] } }, groups: { default: {} }, channels: [channel("main", fake.url)],
      models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 1000, output: 1000, cache_read_ratio: 1 } } },
    })) as Obj;
    gw = await startTestGateway(stringify({ ...(policy ? { billing: { pre_deduction: policy } } : {}), ...doc }));
    return gw;
  }
  const chat = () => postChat(gw!.url, ask, { authorization: `Bearer ${TOKEN}` });

  test("worst_case (the default): a balance short of the worst case is refused, naming both", async () => {
    await gateway(undefined, 0.02);
    const r = await chat();
    assert.equal(r.status, 402, r.text);
    assert.equal(r.json.error.code, "pre_deduction_failed");
    assert.match(r.json.error.message, /the remaining balance is 0\.02, but this request requires a pre-deduction of 0\.1\d*/);
    assert.equal(fake.received.length, 0);
  });

  test("available: what is left is held, the answer charged in full; then the used-up balance is refused", async () => {
    fake.received.length = 0;
    await gateway("available", 0.02);
    const first = await chat();
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers["x-gateway-cost"], "0.017");
    assert.equal(gw!.ledger.spentByUser("alice"), 17_000_000n);
    const second = await chat();
    assert.equal(second.status, 200, "0.003 left: held, and the answer charged in full");
    assert.equal(gw!.ledger.spentByUser("alice"), 34_000_000n, "the balance went 0.014 below zero: one request's cost beyond what was left");
    const third = await chat();
    assert.equal(third.status, 402, third.text);
    assert.equal(third.json.error.code, "insufficient_quota");
    assert.equal(fake.received.length, 2);
  });

  test("none: nothing is held; only a used-up balance is refused", async () => {
    fake.received.length = 0;
    await gateway("none", 0.02);
    assert.equal((await chat()).status, 200);
    assert.equal(gw!.ledger.reservedByUser("alice"), 0n);
    assert.equal((await chat()).status, 200);
    assert.equal((await chat()).status, 402);
  });

  test("gateway check refuses an unknown policy", async () => {
    await assert.rejects(gateway("sometimes", 1), /pre_deduction/);
  });
});
