// One request through the real gateway (SQLite store, the OpenAI fake, the official SDK):
// the cost it shows (X-Gateway-Cost) is the entry's costNano, is what its breakdown adds up
// to, is the total `gateway logs --explain` prints, is what `gateway usage` and the billing
// usage endpoint report; and the entry keeps its cost to the operator.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { decodeBreakdown, totalOf } from "../../src/billing/breakdown.js";
import { formatNano } from "../../src/billing/cost.js";
import type { CliIo } from "../../src/cli/format.js";
import { runLogs } from "../../src/cli/logs.js";
import { runUsage } from "../../src/cli/usage.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, channel, config, rawRequest } from "./support.js";

/**
 * The fake's usage (prompt 12 incl. 2 cached, completion 5) at input 0.15, output 0.6,
 * cache_read_ratio 0.5 per 1M: (10 × 0.15 + 2 × 0.075 + 5 × 0.6) / 1M = 0.00000465 at the
 * list price (what the channel costs the operator, no cost of its own declared), × 0.7 (the
 * group) = 0.000003255 charged.
 */
const CHARGED = 3255n;
const LIST = 4650n;

async function cli(cmd: typeof runLogs, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t) };
  return { code: await cmd(args, io), out, err };
}

describe("a request's cost, explained and reported alike", () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-cost-explained-"));
  const file = join(dir, "gateway.db");
  let fake: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(config({
      groups: { default: { multiplier: 0.7, show_cost: true }, video: { multiplier: 1 } },
      models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6, cache_read_ratio: 0.5 } } },
      channels: [channel("main", fake.url)],
    }), { store: openSqliteStore(file) });
  });
  after(async () => {
    await gw?.close();
    gw?.store.close();
    await fake?.close();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  test("X-Gateway-Cost = costNano = the breakdown's total = --explain's total = gateway usage = the billing usage endpoint", async () => {
    const sdk = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { response } = await sdk.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }).withResponse();
    const id = response.headers.get("x-gateway-request-id");
    assert.ok(id);
    const shown = response.headers.get("x-gateway-cost");

    const entry = await entryOf(gw.store, id);
    assert.equal(entry.costNano, CHARGED);
    assert.equal(shown, formatNano(entry.costNano));
    assert.equal(entry.channel, "main");
    assert.equal(entry.channelCostNano, LIST);
    assert.ok(entry.breakdown, "the entry keeps its breakdown");
    assert.equal(totalOf(decodeBreakdown(entry.breakdown)), entry.costNano);

    // The CLI reads the file as another process would (SQLite and the journal's tail).
    const explained = await cli(runLogs, ["--store", `sqlite:${file}`, "--explain", id]);
    assert.equal(explained.code, 0, explained.err);
    // Each line by hand: quantity × unit price / 1M × 0.7 (reasoning is billed as output).
    assert.match(explained.out, /^input +10 +0\.15 +1M +0\.7 +0\.00000105$/m);
    assert.match(explained.out, /^cache_read +2 +0\.075 +1M +0\.7 +0\.000000105$/m);
    assert.match(explained.out, /^output +4 +0\.6 +1M +0\.7 +0\.00000168$/m);
    assert.match(explained.out, /^reasoning +1 +0\.6 +1M +0\.7 +0\.00000042$/m);
    const total = /^total from the lines: (\S+) \((\d+) nano\)$/m.exec(explained.out);
    assert.ok(total, explained.out);
    assert.equal(total[1], shown);
    assert.equal(BigInt(total[2]), entry.costNano);
    assert.match(explained.out, /^charged: 0\.000003255 \(3255 nano\)\nthe lines reproduce the charged cost exactly$/m);
    assert.match(explained.out, /^cost to the operator: 0\.00000465 \(4650 nano\); margin -0\.000001395$/m);
    const json = JSON.parse((await cli(runLogs, ["--store", `sqlite:${file}`, "--explain", id, "--json"])).out);
    assert.equal(json.matches, true);
    assert.equal(String(json.total), shown);

    const byChannel = JSON.parse((await cli(runUsage, ["--store", `sqlite:${file}`, "--by", "channel", "--json"])).out);
    assert.deepEqual([byChannel.key, byChannel.requests, String(byChannel.cost), String(byChannel.channelCost)], ["main", 1, shown, formatNano(LIST)]);
    assert.equal(byChannel.marginPercent, "-42.86"); // (3255 − 4650) / 3255

    // The billing usage endpoint: spend in cents (a float, as OpenAI's), from the same sum.
    const usage = await rawRequest(`${gw.url}/v1/dashboard/billing/usage`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(usage.status, 200);
    assert.equal(Math.round(usage.json.total_usage * 1e7), Number(entry.costNano), usage.text);
    assert.equal(gw.store.spentByToken("alice-main"), entry.costNano);
  });
});
