// `gateway usage --by key` / `--by day` (with `--timezone`) and `gateway logs --key` /
// `--status 4xx` against a temp SQLite store with known entries: exact tables and JSON
// lines, and the errors of a bad command line.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CliIo } from "../../src/cli/format.js";
import { runLogs } from "../../src/cli/logs.js";
import { runUsage } from "../../src/cli/usage.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { entry } from "../helpers/usage-entry.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-cli-keys-"));
const store = `sqlite:${join(dir, "gw.db")}`;
// 23:30 UTC on 2026-03-09: 16:30 in Los Angeles (summer time since the 8th), 08:30 on the 10th in Tokyo.
const T = Date.parse("2026-03-09T23:30:00Z");
const H = 3600e3;
const u = (input: number, output: number) => ({ input, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 });

before(() => {
  const s = openSqliteStore(join(dir, "gw.db"));
  s.record(entry({ requestId: "k1", time: T, channel: "east", key: "aaaa1111", usage: u(1000, 100), costNano: 3_000_000n, channelCostNano: 2_000_000n }));
  s.record(entry({ requestId: "k2", time: T + H, channel: "east", key: "bbbb2222", usage: u(500, 50), costNano: 1_500_000n, channelCostNano: 1_800_000n }));
  s.record(entry({ requestId: "k3", time: T + 2 * H, channel: "east", key: "aaaa1111", usage: u(10, 0), costNano: 0n, status: 400 }));
  s.record(entry({ requestId: "k4", time: T + 25 * H, channel: "west", key: "cccc3333", usage: u(200, 20), costNano: 700_000n }));
  s.record(entry({ requestId: "k5", time: T + 26 * H, channel: "west", usage: u(0, 0), costNano: 0n, status: 502, error: "upstream_error" }));
  s.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function run(cmd: typeof runUsage, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t), now: () => T + 30 * H };
  const code = await cmd(["--store", store, ...args], io);
  return { code, out, err };
}

describe("gateway usage --by key", () => {
  test("a table per channel key fingerprint with revenue, cost and margin; requests no key served under -", async () => {
    const { code, out } = await run(runUsage, ["--by", "key"]);
    assert.equal(code, 0);
    assert.equal(out, [
      "by key",
      "KEY            REQUESTS  INPUT  CACHE_READ  CACHE_WRITE  OUTPUT  REASONING  REVENUE  CHANNEL_COST   MARGIN  MARGIN_%",
      "east/aaaa1111         2   1010           0            0     100          0    0.003         0.002    0.001     33.33",
      "east/bbbb2222         1    500           0            0      50          0   0.0015        0.0018  -0.0003    -20.00",
      "west/cccc3333         1    200           0            0      20          0   0.0007       unknown  unknown   unknown",
      "-                     1      0           0            0       0          0        0             0        0         -",
      "cost to the operator unknown (entries recorded before it was kept):",
      "  west/cccc3333: 1 of 1 requests recorded no cost to the operator",
      "",
    ].join("\n"));
  });

  test("--json: exact decimals, the row no key served keyed null", async () => {
    const { out } = await run(runUsage, ["--by", "key", "--json", "--until", "2026-03-10T00:00:00Z"]);
    assert.equal(out,
      '{"by":"key","key":"east/aaaa1111","requests":1,"input":1000,"cacheRead":0,"cacheWrite":0,"output":100,"reasoning":0,"cost":0.003,"channelCost":0.002,"margin":0.001,"marginPercent":"33.33","channelCostUnknown":0,"channelCostRecorded":0.002}\n');
    const all = (await run(runUsage, ["--by", "key", "--json"])).out.trim().split("\n");
    assert.equal(all.length, 4);
    assert.equal(all[3], '{"by":"key","key":null,"requests":1,"input":0,"cacheRead":0,"cacheWrite":0,"output":0,"reasoning":0,"cost":0,"channelCost":0,"margin":0,"marginPercent":null,"channelCostUnknown":0,"channelCostRecorded":0}');
  });
});

describe("gateway usage --by day", () => {
  test("one row per UTC day, newest first", async () => {
    const { code, out } = await run(runUsage, ["--by", "day"]);
    assert.equal(code, 0);
    assert.equal(out, [
      "by day",
      "DAY         REQUESTS  INPUT  CACHE_READ  CACHE_WRITE  OUTPUT  REASONING  REVENUE  CHANNEL_COST   MARGIN  MARGIN_%",
      "2026-03-11         2    200           0            0      20          0   0.0007       unknown  unknown   unknown",
      "2026-03-10         2    510           0            0      50          0   0.0015        0.0018  -0.0003    -20.00",
      "2026-03-09         1   1000           0            0     100          0    0.003         0.002    0.001     33.33",
      "cost to the operator unknown (entries recorded before it was kept):",
      "  2026-03-11: 1 of 2 requests recorded no cost to the operator",
      "",
    ].join("\n"));
  });

  test("--timezone counts days from that zone's midnight", async () => {
    const keys = async (zone: string) => (await run(runUsage, ["--by", "day", "--json", "--timezone", zone])).out
      .trim().split("\n").map((l) => { const r = JSON.parse(l); return [r.key, r.requests, r.cost]; });
    assert.deepEqual(await keys("America/Los_Angeles"), [["2026-03-10", 2, 0.0007], ["2026-03-09", 3, 0.0045]]);
    assert.deepEqual(await keys("Asia/Tokyo"), [["2026-03-11", 2, 0.0007], ["2026-03-10", 3, 0.0045]]);
    assert.deepEqual(await keys("UTC"), [["2026-03-11", 2, 0.0007], ["2026-03-10", 2, 0.0015], ["2026-03-09", 1, 0.003]]);
    const { out } = await run(runUsage, ["--by", "day", "--timezone", "America/Los_Angeles", "--since", "2026-03-10T00:00:00Z"]);
    assert.equal(out, [
      "by day",
      "DAY         REQUESTS  INPUT  CACHE_READ  CACHE_WRITE  OUTPUT  REASONING  REVENUE  CHANNEL_COST   MARGIN  MARGIN_%",
      "2026-03-10         2    200           0            0      20          0   0.0007       unknown  unknown   unknown",
      "2026-03-09         2    510           0            0      50          0   0.0015        0.0018  -0.0003    -20.00",
      "cost to the operator unknown (entries recorded before it was kept):",
      "  2026-03-10: 1 of 2 requests recorded no cost to the operator",
      "",
    ].join("\n"));
  });

  test("a zone the runtime does not know, or --timezone without --by day, exits 2", async () => {
    const bad = await run(runUsage, ["--by", "day", "--timezone", "Mars/Base"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /^gateway: --timezone 'Mars\/Base': expected an IANA time zone like Europe\/Berlin or UTC\n/);
    const alone = await run(runUsage, ["--timezone", "UTC"]);
    assert.equal(alone.code, 2);
    assert.match(alone.err, /^gateway: --timezone counts days: give it with --by day\n/);
    assert.equal(alone.out, "");
  });
});

describe("gateway logs --key and --status classes", () => {
  test("--key filters by fingerprint; the table names the key after its channel", async () => {
    const { code, out } = await run(runLogs, ["--key", "aaaa1111"]);
    assert.equal(code, 0);
    assert.equal(out, [
      "TIME                      REQUEST_ID  TOKEN  USER   MODEL        CHANNEL        STATUS    IN  OUT   COST  MS  NOTE",
      "2026-03-10T01:30:00.000Z  k3          t1     alice  gpt-4o-mini  east/aaaa1111     400    10    0      0  13",
      "2026-03-09T23:30:00.000Z  k1          t1     alice  gpt-4o-mini  east/aaaa1111     200  1000  100  0.003  13",
      "",
    ].join("\n"));
    assert.equal((await run(runLogs, ["--key", "dddd4444"])).out, "no matching requests\n");
  });

  test("--key CHANNEL/FP (as usage --by key shows it) filters by both; JSON lines end with the key when one served", async () => {
    const { out } = await run(runLogs, ["--key", "west/cccc3333", "--json"]);
    assert.equal(out, '{"requestId":"k4","time":"2026-03-11T00:30:00.000Z","token":"t1","user":"alice","group":"default","model":"gpt-4o-mini","upstreamModel":null,"channel":"west","inboundProtocol":"chat-completions","upstreamProtocol":null,"status":200,"error":null,"input":200,"cacheRead":0,"cacheWrite":0,"output":20,"reasoning":0,"cost":0.0007,"durationMs":12.5,"ttfbMs":null,"estimated":false,"refundedAt":null,"droppedFields":null,"breakdown":null,"channelCost":null,"key":"cccc3333"}\n');
    assert.equal((await run(runLogs, ["--key", "east/cccc3333", "--json"])).out, "");
    assert.equal((await run(runLogs, ["--key", "west/cccc3333", "--channel", "west", "--json"])).out, out);
  });

  test("--status 4xx, 5xx and 2xx filter by class; an exact status still works", async () => {
    const ids = async (...args: string[]) =>
      (await run(runLogs, ["--json", ...args])).out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l).requestId);
    assert.deepEqual(await ids("--status", "4xx"), ["k3"]);
    assert.deepEqual(await ids("--status", "5xx"), ["k5"]);
    assert.deepEqual(await ids("--status", "2xx"), ["k4", "k2", "k1"]);
    assert.deepEqual(await ids("--status", "2XX", "--key", "aaaa1111"), ["k1"]);
    assert.deepEqual(await ids("--status", "502"), ["k5"]);
    assert.deepEqual(await ids("--status", "3xx"), []);
    const { out } = await run(runLogs, ["--status", "5xx"]);
    assert.match(out.split("\n")[1], /^2026-03-11T01:30:00\.000Z +k5 +t1 +alice +gpt-4o-mini +west +502 +0 +0 +0 +13 +upstream_error$/);
  });

  test("a --key that is not a fingerprint, --key and --channel that disagree, or a bad class exit 2 without echoing the key", async () => {
    const secret = await run(runLogs, ["--key", "sk-live-0123456789abcdef"]);
    assert.equal(secret.code, 2);
    assert.match(secret.err, /^gateway: --key: expected a key fingerprint \(8 hex digits, or CHANNEL\/FINGERPRINT as `gateway usage --by key` shows\), never the key\n/);
    assert.doesNotMatch(secret.err, /sk-live/);
    const both = await run(runLogs, ["--key", "east/aaaa1111", "--channel", "west"]);
    assert.equal(both.code, 2);
    assert.match(both.err, /^gateway: --key names channel 'east' and --channel 'west': give one\n/);
    for (const status of ["6xx", "4x", "xx", "40x"]) {
      const r = await run(runLogs, ["--status", status]);
      assert.equal(r.code, 2, status);
      assert.match(r.err, /expected an HTTP status like 429, or a class like 4xx/);
    }
  });
});
