// `gateway usage` and `gateway logs` against a temp SQLite store with known entries:
// exact JSON lines (money as exact decimals), table content, filters, flags and errors.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatNano, jsonLine, parseTimeArg, type CliIo } from "../../src/cli/format.js";
import { runLogs } from "../../src/cli/logs.js";
import { runUsage } from "../../src/cli/usage.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { entry } from "../helpers/usage-entry.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-cli-"));
const dbPath = join(dir, "data/gw.db");
const store = `sqlite:${dbPath}`;
const T0 = Date.parse("2026-01-10T00:00:00Z");
const NOW = Date.parse("2026-01-11T00:00:00Z");
const u = (input: number, output: number) => ({ input, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 });

before(() => {
  const s = openSqliteStore(dbPath);
  s.record(entry({ requestId: "r1", time: T0, token: "t1", user: "alice", model: "m1", group: "default", usage: u(100, 10), costNano: 1_500_000n }));
  s.record(entry({ requestId: "r2", time: T0 + 3600e3, token: "t2", user: "alice", model: "m2", group: "video", usage: u(5, 0), costNano: 2n ** 53n + 1n, channel: "c1", upstreamModel: "m2-2025", upstreamProtocol: "openai", ttfbMs: 4 }));
  s.record(entry({ requestId: "r3", time: NOW - 3600e3, token: "t3", user: "bob", model: "m1", group: "default", usage: u(1, 1), costNano: 0n, status: 429, error: "rate_limited", estimated: true }));
  s.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a command with captured output and a fixed clock. */
async function run(cmd: typeof runUsage, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t), now: () => NOW };
  const code = await cmd(args, io);
  return { code, out, err };
}

describe("format", () => {
  test("formatNano is an exact decimal of the currency", () => {
    assert.equal(formatNano(1_500_000n), "0.0015");
    assert.equal(formatNano(0n), "0");
    assert.equal(formatNano(1n), "0.000000001");
    assert.equal(formatNano(2_000_000_000n), "2");
    assert.equal(formatNano(2n ** 53n + 1n), "9007199.254740993");
    assert.equal(formatNano(-1_250_000_000n), "-1.25");
  });

  test("jsonLine writes bigint money as an exact number and undefined as null", () => {
    assert.equal(jsonLine({ a: "x", cost: 9_007_199_254_740_993n, b: undefined }), '{"a":"x","cost":9007199.254740993,"b":null}\n');
  });

  test("time arguments: ISO or a span back from now", () => {
    assert.equal(parseTimeArg("since", "24h", NOW), NOW - 86400e3);
    assert.equal(parseTimeArg("since", "7d", NOW), NOW - 7 * 86400e3);
    assert.equal(parseTimeArg("since", "2026-01-10", NOW), T0);
    assert.equal(parseTimeArg("since", "2026-01-10T01:00:00Z", NOW), T0 + 3600e3);
    assert.throws(() => parseTimeArg("since", "yesterday", NOW), /--since 'yesterday'/);
  });
});

describe("gateway usage", () => {
  test("--json --by user prints exact lines, highest cost first", async () => {
    const { code, out } = await run(runUsage, ["--store", store, "--by", "user", "--json"]);
    assert.equal(code, 0);
    assert.equal(
      out,
      '{"by":"user","key":"alice","requests":2,"input":105,"cacheRead":0,"cacheWrite":0,"output":10,"reasoning":0,"cost":9007199.256240993,"channelCost":null,"margin":null,"marginPercent":null,"channelCostUnknown":2,"channelCostRecorded":0}\n' +
        '{"by":"user","key":"bob","requests":1,"input":1,"cacheRead":0,"cacheWrite":0,"output":1,"reasoning":0,"cost":0,"channelCost":0,"margin":0,"marginPercent":null,"channelCostUnknown":0,"channelCostRecorded":0}\n',
    );
  });

  test("--since and --until bound the range", async () => {
    const { out } = await run(runUsage, ["--store", store, "--by=model", "--json", "--since", "2026-01-10T00:30:00Z", "--until=2h"]);
    assert.equal(out, '{"by":"model","key":"m2","requests":1,"input":5,"cacheRead":0,"cacheWrite":0,"output":0,"reasoning":0,"cost":9007199.254740993,"channelCost":null,"margin":null,"marginPercent":null,"channelCostUnknown":1,"channelCostRecorded":0}\n');
  });

  test("--user and --token report one subject's requests only; both at once exit 2", async () => {
    const byModel = (args: string[]) => run(runUsage, ["--store", store, "--by", "model", "--json", ...args]);
    const alice = await byModel(["--user", "alice"]);
    assert.equal(alice.code, 0, alice.err);
    assert.deepEqual(alice.out.trim().split("\n").map((l) => [JSON.parse(l).key, /"cost":([0-9.]+)/.exec(l)![1]]), [["m2", "9007199.254740993"], ["m1", "0.0015"]]);
    const t3 = await byModel(["--token", "t3"]);
    assert.deepEqual(t3.out.trim().split("\n").map((l) => [JSON.parse(l).key, JSON.parse(l).requests]), [["m1", 1]]);
    assert.equal((await byModel(["--user", "nobody"])).out, "");
    const both = await byModel(["--user", "alice", "--token", "t1"]);
    assert.equal(both.code, 2);
    assert.match(both.err, /--user or --token, not both/);
  });

  test("the default prints four table sections", async () => {
    const { code, out } = await run(runUsage, ["--store", store]);
    assert.equal(code, 0);
    assert.deepEqual(out.split("\n").filter((l) => l.startsWith("by ")), ["by user", "by token", "by model", "by group"]);
    assert.match(out, /^USER +REQUESTS +INPUT +CACHE_READ +CACHE_WRITE +OUTPUT +REASONING +REVENUE +CHANNEL_COST +MARGIN +MARGIN_%$/m);
    assert.match(out, /^alice +2 +105 +0 +0 +10 +0 +9007199\.256240993 +unknown +unknown +unknown$/m);
    assert.match(out, /^video +1 +5 +0 +0 +0 +0 +9007199\.254740993 +unknown +unknown +unknown$/m);
  });

  test("reads the store named by the config file, relative to its folder", async () => {
    const config = join(dir, "gateway.yaml");
    writeFileSync(
      config,
      `store: sqlite:./data/gw.db
groups: { default: {} }
users: { alice: { groups: [default] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
channels:
  - { name: c1, protocol: openai, base_url: https://api.openai.com, keys: [k], groups: [default], models: [m] }
models:
  m: { price: { input: 1 } }
`,
    );
    const { code, out } = await run(runUsage, ["--config", config, "--by", "group", "--json"]);
    assert.equal(code, 0);
    assert.deepEqual(out.trim().split("\n").map((l) => JSON.parse(l).key), ["video", "default"]);
  });

  test("bad flags exit 2; a missing store or config exits 1", async () => {
    assert.equal((await run(runUsage, ["--store", store, "--by", "colour"])).code, 2);
    assert.equal((await run(runUsage, ["--store", store, "--since", "soon"])).code, 2);
    assert.equal((await run(runUsage, ["--bogus"])).code, 2);
    const missing = await run(runUsage, ["--store", `sqlite:${join(dir, "nope.db")}`]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no store at/);
    const redis = await run(runUsage, ["--store", "redis://localhost:6379"]);
    assert.equal(redis.code, 1);
    assert.match(redis.err, /store redis:\/\/localhost:6379 keeps no usage log: add ledger: postgres:/);
    const noConfig = await run(runUsage, ["--config", join(dir, "absent.yaml")]);
    assert.equal(noConfig.code, 1);
    assert.match(noConfig.err, /pass --store/);
  });
});

describe("gateway logs", () => {
  test("--json prints every field, newest first, cost exact", async () => {
    const { code, out } = await run(runLogs, ["--store", store, "--json", "--limit", "2"]);
    assert.equal(code, 0);
    assert.equal(
      out,
      '{"requestId":"r3","time":"2026-01-10T23:00:00.000Z","token":"t3","user":"bob","group":"default","model":"m1","upstreamModel":null,"channel":null,"inboundProtocol":"chat-completions","upstreamProtocol":null,"status":429,"error":"rate_limited","input":1,"cacheRead":0,"cacheWrite":0,"output":1,"reasoning":0,"cost":0,"durationMs":12.5,"ttfbMs":null,"estimated":true,"refundedAt":null,"droppedFields":null,"breakdown":null,"channelCost":null}\n' +
        '{"requestId":"r2","time":"2026-01-10T01:00:00.000Z","token":"t2","user":"alice","group":"video","model":"m2","upstreamModel":"m2-2025","channel":"c1","inboundProtocol":"chat-completions","upstreamProtocol":"openai","status":200,"error":null,"input":5,"cacheRead":0,"cacheWrite":0,"output":0,"reasoning":0,"cost":9007199.254740993,"durationMs":12.5,"ttfbMs":4,"estimated":false,"refundedAt":null,"droppedFields":null,"breakdown":null,"channelCost":null}\n',
    );
  });

  test("filters select entries", async () => {
    const ids = async (...args: string[]) =>
      (await run(runLogs, ["--store", store, "--json", ...args])).out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l).requestId);
    assert.deepEqual(await ids("--request-id", "r2"), ["r2"]);
    assert.deepEqual(await ids("--token", "t1"), ["r1"]);
    assert.deepEqual(await ids("--user", "alice"), ["r2", "r1"]);
    assert.deepEqual(await ids("--model", "m1"), ["r3", "r1"]);
    assert.deepEqual(await ids("--status", "429"), ["r3"]);
    assert.deepEqual(await ids("--since", "12h"), ["r3"]);
    assert.deepEqual(await ids("--user", "carol"), []);
  });

  test("the table shows one row per entry with notes", async () => {
    const { out } = await run(runLogs, ["--store", store]);
    const lines = out.trimEnd().split("\n");
    assert.match(lines[0], /^TIME +REQUEST_ID +TOKEN +USER +MODEL +CHANNEL +STATUS +IN +OUT +COST +MS +NOTE$/);
    assert.equal(lines.length, 4);
    assert.match(lines[1], /^2026-01-10T23:00:00\.000Z +r3 +t3 +bob +m1 +- +429 +1 +1 +0 +13 +rate_limited, estimated$/);
    assert.match(lines[3], /r1 +t1 +alice +m1 +- +200 +100 +10 +0\.0015 +13$/);
    assert.equal((await run(runLogs, ["--store", store, "--user", "carol"])).out, "no matching requests\n");
  });

  test("bad values exit 2 with the usage", async () => {
    for (const args of [["--status", "abc"], ["--limit", "0"], ["--user"], ["--user", "--json"]]) {
      const { code, err } = await run(runLogs, ["--store", store, ...args]);
      assert.equal(code, 2, args.join(" "));
      assert.match(err, /usage: gateway logs/);
    }
  });
});
