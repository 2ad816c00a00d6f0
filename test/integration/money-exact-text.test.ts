// Money leaves the gateway as the exact decimal of its nano-units, as text: a request that
// costs 9899999 nano (0.009899999) is never 0.009899999999999999 nor, in cents,
// 0.9899998999999999 (what Number(nano) / 1e9 * 100 prints). Checked on the raw text of the
// billing endpoints, `gateway usage --json` and `gateway logs --json`, through the real
// gateway on a SQLite store and a hand-written upstream reporting 1 prompt token.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CliIo } from "../../src/cli/format.js";
import { runLogs } from "../../src/cli/logs.js";
import { runUsage } from "../../src/cli/usage.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, channel, completionAnswer, config, postChat, rawRequest, startRawUpstream, token, type RawUpstream } from "./support.js";

/** 1 prompt token at 9899.999 per 1M, multiplier 1: 0.009899999, 9899999 nano. */
const COST = 9_899_999n;
const QUOTA_KEY = "sk-gw-test-exact-quota-0001";

async function cli(cmd: typeof runLogs, args: string[]): Promise<string> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t) };
  assert.equal(await cmd(args, io), 0, err);
  return out;
}

describe("money as exact decimal text", () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-money-text-"));
  const file = join(dir, "gateway.db");
  let upstream: RawUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await startRawUpstream((body, res) =>
      completionAnswer(res, body.model, "ok", { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 }));
    gw = await startTestGateway(config({
      groups: { default: { multiplier: 1 } },
      // 16 significant digits: past what a float's text keeps exactly in general.
      users: { alice: { credit: 1234567.123456789, groups: ["default"] } },
      tokens: [token("alice-main", TOKEN), token("alice-quota", QUOTA_KEY, { quota: 0.3 })],
      models: { "exact-model": { endpoint: "chat", price: { input: 9899.999, output: 0 } } },
      channels: [channel("raw", upstream.url, { models: ["exact-model"] })],
    }), { store: openSqliteStore(file) });
    // Two requests on the user's token, one on the quota token: 3 × 9899999 nano by the
    // user, 1 × by the quota token.
    for (const key of [TOKEN, TOKEN, QUOTA_KEY]) {
      const r = await postChat(gw.url, { model: "exact-model", messages: [{ role: "user", content: "x" }] }, { authorization: `Bearer ${key}` });
      assert.equal(r.status, 200, r.text);
    }
    await eventually(() => gw.store.spentByUser("alice") === 3n * COST, 3000, "three charges");
  });
  after(async () => {
    await gw?.close();
    gw?.store.close();
    await upstream?.close();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, key: string) => rawRequest(`${gw.url}/v1/dashboard/billing/${path}`, { headers: { authorization: `Bearer ${key}` } });

  test("/v1/dashboard/billing/usage: the spend in cents, exact", async () => {
    assert.equal((await get("usage", TOKEN)).text, `{"object":"list","total_usage":2.9699997}`);
    // Float: 9899999 / 1e9 × 100 = 0.9899998999999999; exact: 0.9899999.
    assert.equal((await get("usage", QUOTA_KEY)).text, `{"object":"list","total_usage":0.9899999}`);
  });

  test("/v1/dashboard/billing/subscription: the credit or the quota, and the balance left, exact, still JSON numbers", async () => {
    const user = await get("subscription", TOKEN);
    // balance: 1234567.123456789 − 0.029699997 spent (nothing in flight).
    assert.equal(user.text, `{"object":"billing_subscription","has_payment_method":true,"soft_limit_usd":1234567.123456789,`
      + `"hard_limit_usd":1234567.123456789,"system_hard_limit_usd":1234567.123456789,"access_until":0,"balance":1234567.093756792}`);
    assert.equal(typeof user.json.hard_limit_usd, "number");
    assert.equal(typeof user.json.balance, "number");
    const quota = await get("subscription", QUOTA_KEY);
    assert.match(quota.text, /"hard_limit_usd":0\.3,/);
    assert.match(quota.text, /"balance":1234567\.093756792\}$/, "the user's money left, whichever token asks");
  });

  test("gateway usage --json and gateway logs --json write each cost as its exact decimal", async () => {
    const usage = await cli(runUsage, ["--store", `sqlite:${file}`, "--by", "token", "--json"]);
    const byToken = Object.fromEntries(usage.trim().split("\n").map((line) => [JSON.parse(line).key as string, line]));
    assert.match(byToken["alice-main"], /"cost":0\.019799998,/);
    assert.match(byToken["alice-quota"], /"cost":0\.009899999,/);
    const user = await cli(runUsage, ["--store", `sqlite:${file}`, "--by", "user", "--json"]);
    assert.match(user, /"key":"alice",.*"cost":0\.029699997,/);

    const logs = await cli(runLogs, ["--store", `sqlite:${file}`, "--model", "exact-model", "--json"]);
    const lines = logs.trim().split("\n");
    assert.equal(lines.length, 3);
    for (const line of lines) assert.match(line, /"cost":0\.009899999,/);
    // A float artefact is a long run of digits after a decimal point (0.009899999999999999);
    // request ids hold long runs of digits by chance, so only numbers are looked at.
    assert.doesNotMatch(usage + user + logs, /\d\.\d{12,}/, "no float artefact anywhere");
  });
});
