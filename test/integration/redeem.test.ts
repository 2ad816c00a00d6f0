// Redeeming codes through the real gateway: POST /v1/dashboard/redeem with the holder's own
// token credits their user (a stored one, or one gateway.yaml declares: the ledger either
// way), the balance endpoint shows the new remaining, a code is single-use whatever the race
// (200 concurrent redemptions: one credit), expired and unknown codes are refused, a user
// with no money left may still redeem, failed guesses are limited per token, and nothing
// is charged.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { sha256Hex } from "../../src/config/hash.js";
import { GUESSES } from "../../src/pipeline/stages/redeem.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, config, rawRequest, token, type RawResponse } from "./support.js";

const NANO = 1_000_000_000n;
const operator = { actor: "test:operator" };
const HOUR = 3_600_000;

describe("POST /v1/dashboard/redeem", () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway(config({
      users: { alice: { credit: 1, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN)],
    }));
  });
  after(async () => {
    await gw?.close();
    destroyAgents();
  });

  const redeem = (key: string, body: unknown): Promise<RawResponse> => rawRequest(`${gw.url}/v1/dashboard/redeem`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body),
  });
  const subscription = (key: string) => rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer ${key}` } });

  /** A stored user in group default with `credit` (whole units) and one token; its key. */
  async function storedUser(name: string, credit = 0n): Promise<string> {
    await gw.accounts.service.createUser({ name, groups: ["default"], creditNano: credit * NANO }, operator);
    return (await gw.accounts.service.createToken({ name: `${name}-main`, user: name }, operator)).key;
  }

  let batches = 0;
  /** A batch's codes (named apart: the default name is the second it was made in). */
  const codes = async (count: number, amountNano: bigint, batch = `b${++batches}`) =>
    (await gw.accounts.service.createCodes({ count, amountNano, expiresAt: Date.now() + HOUR, batch }, operator)).codes;

  test("a stored user's token redeems a code: 200 with the amount and the new balance; the balance endpoint shows it", async () => {
    const key = await storedUser("bob", 2n);
    const [code] = await codes(1, 5n * NANO + 250_000_000n);
    const res = await redeem(key, { code });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.headers["x-gateway-request-id"]);
    assert.deepEqual(res.json, { object: "redemption", redeemed: "5.25", balance: "7.25" });

    const sub = await subscription(key);
    assert.equal(sub.status, 200, sub.text);
    assert.equal(sub.json.hard_limit_usd, 7.25, "the credit includes the ledger");
    assert.equal(sub.json.balance, 7.25);

    const again = await redeem(key, { code });
    assert.equal(again.status, 400, again.text);
    assert.equal(again.json.error.code, "invalid_parameter");
    assert.match(again.json.error.message, /redeemed already/);
    assert.equal(await gw.accounts.store.creditOf("bob"), 7_250_000_000n, "credited once");

    const [audit] = (await gw.accounts.store.audit({ target: "bob", limit: 1 })).items;
    assert.equal(audit.action, "code.redeem");
    assert.equal(audit.actor, "token:bob-main");
  });

  test("a gateway.yaml user redeems too: the credit goes to the ledger, on top of the config's", async () => {
    const [code] = await codes(1, 5n * NANO);
    const res = await redeem(TOKEN, { code: `  ${code}\n` });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { object: "redemption", redeemed: "5", balance: "6" });
    const sub = await subscription(TOKEN);
    assert.equal(sub.json.hard_limit_usd, 6);
    assert.equal(sub.json.balance, 6);
  });

  test("unknown, expired and missing codes are refused with a clear 400 in the OpenAI shape", async () => {
    const key = await storedUser("erin");
    const unknown = await redeem(key, { code: "gw-not-a-real-code" });
    assert.equal(unknown.status, 400);
    assert.match(unknown.json.error.message, /No such redemption code/);

    const expired = "gw-expired-code-for-the-test";
    await gw.accounts.store.createCodes({ batch: "old", amountNano: NANO, expiresAt: Date.now() - 1000, codeHashes: [sha256Hex(expired)] }, operator);
    const late = await redeem(key, { code: expired });
    assert.equal(late.status, 400, late.text);
    assert.match(late.json.error.message, /expired/);

    const missing = await redeem(key, {});
    assert.equal(missing.status, 400);
    assert.equal(missing.json.error.code, "missing_required_parameter");
    const wrong = await redeem(key, { code: 12 });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.json.error.code, "invalid_parameter");
    assert.equal(await gw.accounts.store.creditOf("erin"), 0n);
    assert.equal((await gw.accounts.service.codeBatch("old")).redeemed, 0);
  });

  test("a user with no money left may still redeem (topping up is how it comes back)", async () => {
    const key = await storedUser("carol");
    const before = await subscription(key);
    assert.equal(before.json.balance, 0);
    const [code] = await codes(1, 3n * NANO);
    const res = await redeem(key, { code });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.balance, "3");
  });

  test("redeeming is not billed: its usage-log entries charge nothing", async () => {
    const key = await storedUser("frank");
    const [code] = await codes(1, NANO);
    const ok = await redeem(key, { code });
    const refused = await redeem(key, { code });
    assert.equal(ok.status, 200);
    assert.equal(refused.status, 400);
    for (const res of [ok, refused]) {
      const entry = await entryOf(gw.store, String(res.headers["x-gateway-request-id"]));
      assert.equal(entry.costNano, 0n);
      assert.equal(entry.status, res.status);
    }
    assert.equal(gw.ledger.spentByUser("frank"), 0n);
    assert.equal(gw.ledger.spentByToken("frank-main"), 0n);
  });

  test(`failed guesses are limited per token: ${GUESSES.max} failures, then 429 with Retry-After; successes do not count`, async () => {
    const key = await storedUser("mallory");
    const [good] = await codes(1, NANO);
    assert.equal((await redeem(key, { code: good })).status, 200);
    for (let i = 0; i < GUESSES.max; i++) assert.equal((await redeem(key, { code: `gw-guess-${i}` })).status, 400, `guess ${i}`);
    const limited = await redeem(key, { code: "gw-guess-more" });
    assert.equal(limited.status, 429, limited.text);
    assert.equal(limited.json.error.code, "rate_limited");
    assert.match(limited.json.error.message, /failed redemptions/);
    assert.ok(Number(limited.headers["retry-after"]) > 0);
    // Another token is not held back by this one's guesses.
    const other = await storedUser("trent");
    const [code] = await codes(1, NANO);
    assert.equal((await redeem(other, { code })).status, 200);
  });

  test("200 concurrent redemptions of one code over HTTP: exactly one 200, the balance raised once", async () => {
    await gw.accounts.service.createUser({ name: "dave", groups: ["default"] }, operator);
    const keys: string[] = [];
    for (let i = 0; i < 200; i++) keys.push((await gw.accounts.service.createToken({ name: `dave-${i}`, user: "dave" }, operator)).key);
    const [code] = await codes(1, 7n * NANO, "race");
    const answers = await Promise.all(keys.map((key) => redeem(key, { code })));
    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    assert.deepEqual([...byStatus].sort(), [[200, 1], [400, 199]], answers.filter((a) => a.status !== 200 && a.status !== 400).map((a) => a.text).join("\n"));
    for (const a of answers) if (a.status === 400) assert.match(a.json.error.message, /redeemed already/);
    assert.equal(await gw.accounts.store.creditOf("dave"), 7n * NANO);
    assert.equal((await gw.accounts.service.codeBatch("race")).redeemed, 1);
    const sub = await subscription(keys[0]);
    assert.equal(sub.json.balance, 7);
  });
});
