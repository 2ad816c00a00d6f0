// Budgets that reset, end to end: a token's budget in tokens per day, a user's in money over
// all its tokens, a plan's budgets and a user's own in their place; each refusal is a 429
// budget_exceeded naming the budget and when it frees; and a restart does not hand out a
// fresh budget (the counter is seeded from the usage log).

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import type { Store } from "../../src/state/store.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, channel, config, postChat, token, type Obj, type RawResponse } from "./support.js";

const OTHER = "sk-gw-test-alice-other-0001";
/** The fake answers 12 input and 5 output tokens: 17 counted per request. */
const USED = 17;
const ask = { model: "gpt-4o-mini", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };

describe("budgets that reset", () => {
  let fake: FakeOpenAI;
  const open: TestGateway[] = [];
  const stores: Store[] = [];
  let dir: string;

  before(async () => {
    fake = await startFakeOpenAI({ name: "budgets" });
    dir = mkdtempSync(join(tmpdir(), "gw-budgets-"));
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    while (stores.length) stores.pop()!.close();
    fake.received.length = 0;
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  function yaml(parts: { users?: Obj; tokens?: Obj[]; plans?: Obj; usage?: Obj }): string {
    const doc = parse(config({
      users: parts.users, tokens: parts.tokens, channels: [channel("main", fake.url)], groups: { default: {}, video: {} },
      models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 1000, output: 1000 } } },
    })) as Obj;
    return stringify({ ...(parts.usage ? { usage: parts.usage } : {}), ...(parts.plans ? { plans: parts.plans } : {}), ...doc });
  }

  async function gateway(text: string, store?: Store): Promise<TestGateway> {
    const gw = await startTestGateway(text, { store });
    open.push(gw);
    return gw;
  }

  const chat = (gw: TestGateway, key = TOKEN) => postChat(gw.url, ask, { authorization: `Bearer ${key}` });

  /** Sends until the first refusal (at most `most`); the answers that passed. */
  async function untilRefused(gw: TestGateway, keys: string[], most: number): Promise<{ passed: number; refusal: RawResponse }> {
    for (let i = 0; i < most; i++) {
      const r = await chat(gw, keys[i % keys.length]);
      if (r.status !== 200) return { passed: i, refusal: r };
    }
    throw new Error(`no refusal within ${most} requests`);
  }

  const nextUtcMidnight = () => {
    const d = new Date();
    return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString().replace(/\.000Z$/, "Z");
  };

  test("a token's budget in tokens per day: refused once what is left does not cover the estimate, until midnight", async () => {
    const gw = await gateway(yaml({ tokens: [token("alice-main", TOKEN, { budgets: [{ tokens: 60, per: "day" }] }), token("alice-other", OTHER)] }));
    const { passed, refusal } = await untilRefused(gw, [TOKEN], 10);
    assert.ok(passed >= 2 && passed * USED <= 60, `passed ${passed}: ${refusal.text}`);
    assert.equal(refusal.status, 429, refusal.text);
    assert.equal(refusal.json.error.code, "budget_exceeded");
    assert.match(refusal.json.error.message, /this token may use 60 tokens per day \(UTC\)/);
    assert.match(refusal.json.error.message, new RegExp(`It resets at ${nextUtcMidnight()}`));
    assert.equal(refusal.headers["x-should-retry"], "false", "a reset hours away is not worth an SDK's retries");
    assert.ok(Number(refusal.headers["retry-after"]) > 0);
    assert.equal(fake.received.length, passed, "a refused request never reaches the upstream");
    assert.equal((await chat(gw, OTHER)).status, 200, "the other token has no budget");
  });

  test("a user's money budget holds all its tokens together; its pre-deduction is what must fit", async () => {
    // Each answer costs (12 + 5) × 1000 / 1M = 0.017 at most; the pre-deduction is larger.
    const gw = await gateway(yaml({
      users: { alice: { credit: 100, groups: ["default"], budgets: [{ amount: 0.1, per: "week" }] } },
      tokens: [token("alice-main", TOKEN), token("alice-other", OTHER)],
    }));
    const { passed, refusal } = await untilRefused(gw, [TOKEN, OTHER], 20);
    assert.ok(passed >= 3, `passed ${passed}`);
    assert.equal(refusal.json.error.code, "budget_exceeded", refusal.text);
    assert.match(refusal.json.error.message, /your account may use 0\.1 per week \(UTC\)/);
    assert.match(refusal.json.error.message, /it may cost up to 0\.0\d+/);
    const spent = gw.store.spentByUser("alice");
    assert.ok(spent <= 100_000_000n, `spent ${spent} nano within the 0.1 budget`);
  });

  test("a plan's budgets apply to its users; a user's own list replaces them", async () => {
    const text = yaml({
      usage: { timezone: "Asia/Tokyo" },
      plans: { starter: { budgets: [{ tokens: 40, per: "day" }] } },
      users: {
        alice: { credit: 100, groups: ["default"], plan: "starter" },
        bob: { credit: 100, groups: ["default"], plan: "starter", budgets: [{ tokens: 1000, per: "5h" }] },
      },
      tokens: [token("alice-main", TOKEN), { name: "bob-main", key: OTHER, user: "bob", group: "default" }],
    });
    const gw = await gateway(text);
    const alice = await untilRefused(gw, [TOKEN], 10);
    assert.match(alice.refusal.json.error.message, /your account may use 40 tokens per day \(Asia\/Tokyo\)/, alice.refusal.text);
    for (let i = 0; i < alice.passed + 2; i++) assert.equal((await chat(gw, OTHER)).status, 200, "bob's own budget replaced the plan's");
  });

  test("a rolling budget names its window and when enough of it frees", async () => {
    const gw = await gateway(yaml({ tokens: [token("alice-main", TOKEN, { budgets: [{ tokens: 50, per: "5h" }] })] }));
    const { refusal } = await untilRefused(gw, [TOKEN], 10);
    assert.match(refusal.json.error.message, /this token may use 50 tokens per 5h \(rolling\)/);
    assert.match(refusal.json.error.message, /Enough of it frees by \d{4}-\d\d-\d\dT/);
    const retry = Number(refusal.headers["retry-after"]);
    assert.ok(retry > 4 * 3600 && retry <= 5 * 3600 + 600, `Retry-After ${retry}`);
  });

  test("a request whose estimate alone exceeds the budget is refused as too large, never retried", async () => {
    const gw = await gateway(yaml({ tokens: [token("alice-main", TOKEN, { budgets: [{ tokens: 5, per: "day" }] })] }));
    const r = await chat(gw);
    assert.equal(r.status, 429);
    assert.match(r.json.error.message, /Request too large for a budget/);
    assert.equal(r.headers["x-should-retry"], "false");
  });

  test("a restart keeps what the budget used: the counter is seeded from the usage log", async () => {
    const path = join(dir, "restart.db");
    const text = yaml({ tokens: [token("alice-main", TOKEN, { budgets: [{ tokens: 60, per: "month" }] })] });
    const first = openSqliteStore(path);
    stores.push(first);
    const gw = await gateway(text, first);
    const { passed } = await untilRefused(gw, [TOKEN], 10);
    assert.ok(passed >= 2);
    await open.pop()!.close();
    stores.pop()!.close();

    const again = openSqliteStore(path);
    stores.push(again);
    const restarted = await gateway(text, again);
    const r = await chat(restarted);
    assert.equal(r.status, 429, "the month's budget is as used up as before the restart");
    assert.equal(r.json.error.code, "budget_exceeded");
  });

  test("gateway check refuses a duration that is not rolling, a duplicate budget, an unknown zone", async () => {
    const bad = yaml({
      usage: { timezone: "Mars/Olympus" },
      tokens: [token("alice-main", TOKEN, { budgets: [{ tokens: 5, per: "5h", rolling: false }, { tokens: 9, per: "5h" }] })],
    });
    await assert.rejects(gateway(bad), (err: Error) =>
      /a window given as a duration is rolling/.test(err.message) && /counts the same as/.test(err.message) && /unknown time zone "Mars\/Olympus"/.test(err.message));
  });
});
