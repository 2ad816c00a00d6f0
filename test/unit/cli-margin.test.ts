// `gateway usage --by channel|model` (revenue, cost to the operator, margin, margin %; an
// unknown cost said so) and `gateway logs --channel` and `--explain` against a temp SQLite
// store of entries with hand-computed breakdowns: exact figures, table and JSON.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeBreakdown, totalOf } from "../../src/billing/breakdown.js";
import type { CliIo } from "../../src/cli/format.js";
import { runLogs } from "../../src/cli/logs.js";
import { marginOf, percentText } from "../../src/billing/margin.js";
import { runUsage } from "../../src/cli/usage.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { entry } from "../helpers/usage-entry.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-cli-margin-"));
const store = `sqlite:${join(dir, "gw.db")}`;
const T0 = Date.parse("2026-02-01T00:00:00Z");

// (1200 × 3 + 300 × 15) / 1M × 0.7 = 0.00567: lines 0.00252 and 0.00315.
const PLAIN = "input=1200@3/1M output=300@15/1M multiplier=0.7";
// (250000 × 6 + 1000 × 22.5) / 1M + 2 × 10 / 1k = 1.5425, × 0.5 (flex) = 0.77125.
const TIERED = "input=250000@6/1M output=1000@22.5/1M web_search=2@10/1k multiplier=1 service_tier=flex@0.5 tier=200000 variant=quality:high";

before(() => {
  const s = openSqliteStore(join(dir, "gw.db"));
  const u = (input: number, output: number) => ({ input, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 });
  s.record(entry({ requestId: "x1", time: T0, channel: "east", model: "m1", usage: u(1200, 300), costNano: 5_670_000n, breakdown: PLAIN, channelCostNano: 4_000_000n }));
  s.record(entry({ requestId: "x2", time: T0 + 1, channel: "east", model: "m2", usage: u(250_000, 1000), costNano: 771_250_000n, breakdown: TIERED, channelCostNano: 800_000_000n }));
  s.record(entry({ requestId: "x3", time: T0 + 2, channel: "west", model: "m1", usage: u(10, 10), costNano: 1_000_000n })); // an old row
  s.record(entry({ requestId: "x4", time: T0 + 3, channel: "west", model: "m1", usage: u(0, 0), costNano: 2_000_000n, breakdown: "requests=1@0.002/1 multiplier=1", channelCostNano: 1_500_000n }));
  s.record(entry({ requestId: "x5", time: T0 + 4, model: "m1", usage: u(0, 0), costNano: 0n, status: 401, error: "unauthorized" }));
  s.record(entry({ requestId: "bad", time: T0 + 5, channel: "south", model: "m3", usage: u(1200, 300), costNano: 5_670_001n, breakdown: PLAIN, channelCostNano: 0n }));
  s.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function run(cmd: typeof runUsage, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t), now: () => T0 + 86_400_000 };
  const code = await cmd(args, io);
  return { code, out, err };
}

test("the hand-computed totals are what the breakdowns add up to", () => {
  assert.equal(totalOf(decodeBreakdown(PLAIN)), 5_670_000n);
  assert.equal(totalOf(decodeBreakdown(TIERED)), 771_250_000n);
});

test("margin %: exact nano in, two decimals out, halves rounded away from zero; unknown stays unknown", () => {
  const row = (revenue: bigint, cost: bigint, unknown = 0) => ({
    key: "k", requests: 1, usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
    costNano: revenue, channelCostNano: cost, channelCostUnknown: unknown,
  });
  const percent = (revenue: bigint, cost: bigint) => percentText(marginOf(row(revenue, cost)).marginHundredths!);
  assert.equal(percent(3n, 2n), "33.33");
  assert.equal(percent(8n, 7n), "12.50");
  assert.equal(percent(20_000n, 19_999n), "0.01"); // 0.005 % → 0.01
  assert.equal(percent(20_000n, 20_001n), "-0.01");
  assert.equal(percent(1n, 1000n), "-99900.00");
  assert.deepEqual(marginOf(row(0n, 5n)), { revenueNano: 0n, costNano: 5n, marginNano: -5n });
  assert.deepEqual(marginOf(row(10n, 5n, 1)), { revenueNano: 10n });
});

describe("gateway usage: revenue, cost, margin", () => {
  test("--by channel: a table with exact figures; an unknown cost is said so, never 0", async () => {
    const { code, out } = await run(runUsage, ["--store", store, "--by", "channel"]);
    assert.equal(code, 0);
    assert.equal(out, [
      "by channel",
      "CHANNEL  REQUESTS   INPUT  CACHE_READ  CACHE_WRITE  OUTPUT  REASONING      REVENUE  CHANNEL_COST       MARGIN  MARGIN_%",
      "east            2  251200           0            0    1300          0      0.77692         0.804     -0.02708     -3.49",
      "south           1    1200           0            0     300          0  0.005670001             0  0.005670001    100.00",
      "west            2      10           0            0      10          0        0.003       unknown      unknown   unknown",
      "-               1       0           0            0       0          0            0             0            0         -",
      "cost to the operator unknown (entries recorded before it was kept):",
      "  west: 1 of 2 requests recorded no cost to the operator; the others cost 0.0015",
      "",
    ].join("\n"));
  });

  test("--by channel --json: exact decimals, null where unknown, the no-channel row keyed null", async () => {
    const { out } = await run(runUsage, ["--store", store, "--by", "channel", "--json"]);
    const rows = out.trim().split("\n");
    assert.equal(rows[0], '{"by":"channel","key":"east","requests":2,"input":251200,"cacheRead":0,"cacheWrite":0,"output":1300,"reasoning":0,"cost":0.77692,"channelCost":0.804,"margin":-0.02708,"marginPercent":"-3.49","channelCostUnknown":0,"channelCostRecorded":0.804}');
    assert.equal(rows[2], '{"by":"channel","key":"west","requests":2,"input":10,"cacheRead":0,"cacheWrite":0,"output":10,"reasoning":0,"cost":0.003,"channelCost":null,"margin":null,"marginPercent":null,"channelCostUnknown":1,"channelCostRecorded":0.0015}');
    assert.equal(rows[3], '{"by":"channel","key":null,"requests":1,"input":0,"cacheRead":0,"cacheWrite":0,"output":0,"reasoning":0,"cost":0,"channelCost":0,"margin":0,"marginPercent":null,"channelCostUnknown":0,"channelCostRecorded":0}');
    assert.equal(rows.length, 4);
  });

  test("--by model: the same columns per model", async () => {
    const { out } = await run(runUsage, ["--store", store, "--by", "model", "--json", "--since", "2026-02-01T00:00:00.001Z"]);
    const byKey = new Map(out.trim().split("\n").map((l) => [JSON.parse(l).key, l]));
    assert.match(byKey.get("m2")!, /"cost":0\.77125,"channelCost":0\.8,"margin":-0\.02875,"marginPercent":"-3\.73","channelCostUnknown":0/);
    // x3 recorded no cost: m1's cost is unknown; x4 (and x5, charged nothing) did.
    assert.match(byKey.get("m1")!, /"requests":3,.*"cost":0\.003,"channelCost":null,"margin":null,"marginPercent":null,"channelCostUnknown":1,"channelCostRecorded":0\.0015/);
    const table = (await run(runUsage, ["--store", store, "--by", "model", "--until", "2026-02-01T00:00:00.002Z"])).out;
    assert.match(table, /^m2 +1 +250000 +0 +0 +1000 +0 +0\.77125 +0\.8 +-0\.02875 +-3\.73$/m);
    assert.match(table, /^m1 +1 +1200 +0 +0 +300 +0 +0\.00567 +0\.004 +0\.00167 +29\.45$/m);
  });
});

describe("gateway logs: --channel and --explain", () => {
  test("--channel filters; JSON lines carry the breakdown and the cost to the operator", async () => {
    const { out } = await run(runLogs, ["--store", store, "--channel", "east", "--json"]);
    const lines = out.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.requestId), ["x2", "x1"]);
    assert.equal(lines[1].breakdown, PLAIN);
    assert.match(out, /"breakdown":"input=1200@3\/1M output=300@15\/1M multiplier=0\.7","channelCost":0\.004\}\n$/);
    assert.deepEqual((await run(runLogs, ["--store", store, "--channel", "north", "--json"])).out, "");
  });

  test("--explain prints the lines, the total from them beside the charge, and the cost to the operator", async () => {
    const { code, out } = await run(runLogs, ["--store", store, "--explain", "x1"]);
    assert.equal(code, 0);
    assert.equal(out, [
      "request x1: model m1, channel east, status 200, 2026-02-01T00:00:00.000Z",
      "COMPONENT  QUANTITY  UNIT_PRICE  PER  MULTIPLIER  SUBTOTAL",
      "input          1200           3  1M          0.7   0.00252",
      "output          300          15  1M          0.7   0.00315",
      "total from the lines: 0.00567 (5670000 nano)",
      "charged: 0.00567 (5670000 nano)",
      "the lines reproduce the charged cost exactly",
      "cost to the operator: 0.004 (4000000 nano); margin 0.00167",
      "",
    ].join("\n"));
  });

  test("--explain shows the service tier, price tier and variant, every multiplier per line", async () => {
    const { out } = await run(runLogs, ["--store", store, "--explain", "x2"]);
    assert.match(out, /^input +250000 +6 +1M +1 × 0\.5 +0\.75$/m);
    assert.match(out, /^output +1000 +22\.5 +1M +1 × 0\.5 +0\.01125$/m);
    assert.match(out, /^web_search +2 +10 +1k +1 × 0\.5 +0\.01$/m);
    assert.match(out, /^service tier: flex \(× 0\.5\)$/m);
    assert.match(out, /^price tier: input above 200000 tokens$/m);
    assert.match(out, /^variant: quality=high$/m);
    assert.match(out, /^total from the lines: 0\.77125 \(771250000 nano\)\ncharged: 0\.77125 \(771250000 nano\)\nthe lines reproduce the charged cost exactly$/m);
    assert.match(out, /^cost to the operator: 0\.8 \(800000000 nano\); margin -0\.02875$/m);
  });

  test("--explain says plainly when the lines and the charge differ, and when there is no breakdown", async () => {
    const bad = await run(runLogs, ["--store", store, "--explain", "bad"]);
    assert.equal(bad.code, 0);
    assert.match(bad.out, /^total from the lines: 0\.00567 \(5670000 nano\)\ncharged: 0\.005670001 \(5670001 nano\)\nTHE LINES DO NOT REPRODUCE THE CHARGED COST: they add up to 0\.00567, -0\.000000001 off$/m);
    const old = await run(runLogs, ["--store", store, "--explain", "x3"]);
    assert.match(old.out, /^this entry has no breakdown \(recorded before breakdowns were kept, or nothing was priced\)\ncharged: 0\.001 \(1000000 nano\)\ncost to the operator: not recorded$/m);
  });

  test("--explain --json gives the same as one JSON line", async () => {
    const { out } = await run(runLogs, ["--store", store, "--explain", "x2", "--json"]);
    const j = JSON.parse(out);
    assert.equal(out.split("\n").length, 2);
    assert.deepEqual(j.lines, [
      { component: "input", quantity: 250000, unitPrice: "6", per: "1M", subtotal: "0.75" },
      { component: "output", quantity: 1000, unitPrice: "22.5", per: "1M", subtotal: "0.01125" },
      { component: "web_search", quantity: 2, unitPrice: "10", per: "1k", subtotal: "0.01" },
    ]);
    assert.equal(j.multiplier, "1");
    assert.deepEqual(j.serviceTier, { name: "flex", multiplier: "0.5" });
    assert.equal(j.tierAbove, 200000);
    assert.deepEqual(j.variant, { quality: "high" });
    assert.match(out, /"total":0\.77125,"cost":0\.77125,"matches":true,"refundedAt":null,"channelCost":0\.8\}/);
    const old = JSON.parse((await run(runLogs, ["--store", store, "--explain", "x3", "--json"])).out);
    assert.equal(old.breakdown, null);
    assert.equal(old.lines, null);
    assert.equal(old.matches, null);
    assert.equal(old.channelCost, null);
    assert.equal(JSON.parse((await run(runLogs, ["--store", store, "--explain", "bad", "--json"])).out).matches, false);
  });

  test("--explain of an unknown id exits 1; with another filter, 2", async () => {
    const missing = await run(runLogs, ["--store", store, "--explain", "nope"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.err, "no request nope in the usage log\n");
    const mixed = await run(runLogs, ["--store", store, "--explain", "x1", "--user", "alice"]);
    assert.equal(mixed.code, 2);
    assert.match(mixed.err, /--explain shows one request: drop --user/);
  });
});
