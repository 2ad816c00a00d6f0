// Budgets reset at the window's edge, end to end, with the clock injected (node:test's mock
// of Date; timers stay real): a daily budget used up at 23:59 in the configured zone is
// whole again at 00:00 there, not a minute before; a rolling 5-hour budget frees what was
// used once five hours (and a slice) have passed.

import { after, afterEach, before, describe, mock, test } from "node:test";
import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, channel, config, postChat, token, type Obj } from "./support.js";

const ask = { model: "gpt-4o-mini", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };

describe("budgets reset at the window's edge (injected clock)", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway | undefined;

  before(async () => {
    fake = await startFakeOpenAI({ name: "budget-reset" });
  });
  afterEach(async () => {
    mock.timers.reset();
    await gw?.close();
    gw = undefined;
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
  });

  async function gateway(budgets: Obj[], timezone: string): Promise<TestGateway> {
    const doc = parse(config({
      tokens: [token("alice-main", TOKEN, { budgets })], groups: { default: {}, video: {} }, channels: [channel("main", fake.url)],
    })) as Obj;
    gw = await startTestGateway(stringify({ usage: { timezone }, ...doc }));
    return gw;
  }
  const chat = () => postChat(gw!.url, ask, { authorization: `Bearer ${TOKEN}` });
  const at = (iso: string) => mock.timers.setTime(Date.parse(iso));

  test("a daily budget in Asia/Tokyo: used up before midnight there, whole again at midnight, not a minute before", async () => {
    mock.timers.enable({ apis: ["Date"], now: Date.parse("2026-03-10T14:00:00Z") }); // 23:00 in Tokyo
    await gateway([{ tokens: 60, per: "day" }], "Asia/Tokyo");
    let passed = 0;
    while ((await chat()).status === 200) passed++;
    assert.ok(passed >= 1 && passed <= 3, `passed ${passed}`);
    const refused = await chat();
    assert.equal(refused.json.error.code, "budget_exceeded");
    assert.match(refused.json.error.message, /It resets at 2026-03-10T15:00:00Z/);
    at("2026-03-10T14:59:00Z");
    assert.equal((await chat()).status, 429, "23:59 in Tokyo: still the same day");
    at("2026-03-10T15:00:00Z");
    assert.equal((await chat()).status, 200, "midnight in Tokyo: a new day's budget");
  });

  test("a rolling 5-hour budget frees what was used once five hours and a slice have passed", async () => {
    mock.timers.enable({ apis: ["Date"], now: Date.parse("2026-03-10T08:00:00Z") });
    await gateway([{ tokens: 40, per: "5h" }], "UTC");
    assert.equal((await chat()).status, 200);
    at("2026-03-10T10:00:00Z");
    assert.equal((await chat()).status, 429, "two hours on: the first request's tokens still count");
    at("2026-03-10T13:00:00Z");
    assert.equal((await chat()).status, 429, "five hours on: not yet (usage leaves up to a slice late, never early)");
    at("2026-03-10T13:05:01Z");
    assert.equal((await chat()).status, 200, "five hours and a slice (5 minutes) on: freed");
  });
});
