// `gateway channels test`: each key of a channel sent one small real request, plain and
// streamed, against the fake upstreams of each protocol (which refuse a key they do not
// know as the provider does). A good and a bad key: one pass and one auth failure per mode,
// exit 1; JSON lines; every enabled channel when none is named; the model mapped through
// model_map; a timeout bounded; an unknown name exits 2; the key never shows.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { keyFingerprint } from "../../src/routing/key-health.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fake-anthropic.js";
import { startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { exited, runGateway } from "../helpers/spawn-gateway.js";
import { channel, config } from "./support.js";

const GOOD = { openai: "sk-good-openai-KEY-0001", anthropic: "sk-ant-good-KEY-0002", gemini: "AIza-good-gemini-KEY-0003" };
const BAD = { openai: "sk-bad-openai-KEY-9991", anthropic: "sk-ant-bad-KEY-9992", gemini: "AIza-bad-gemini-KEY-9993" };
const ALL_KEYS = [...Object.values(GOOD), ...Object.values(BAD)];

interface JsonRow {
  channel: string; protocol: string; model: string; key: string; mode: "plain" | "stream"; ok: boolean;
  status: number | null; firstByteMs: number | null; totalMs: number; error: string | null; message: string | null;
}

describe("gateway channels test", { concurrency: true }, () => {
  let dir: string;
  let file: string;
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;
  let hanging: FakeOpenAI;
  let overloaded: FakeAnthropic;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-chtest-"));
    file = join(dir, "gateway.yaml");
    [openai, anthropic, gemini, hanging, overloaded] = await Promise.all([
      startFakeOpenAI({ keys: [GOOD.openai] }), startFakeAnthropic({ keys: [GOOD.anthropic] }), startFakeGemini({ keys: [GOOD.gemini] }),
      startFakeOpenAI({ script: () => ({ kind: "hang" }) }),
      // Answers a stream with 200, then Anthropic's overloaded error event inside it.
      startFakeAnthropic({ script: (r) => (r.body.stream === true ? { kind: "error", status: 529, inStream: true } : { kind: "ok" }) }),
    ]);
    await writeFile(file, config({
      channels: [
        channel("oa", `${openai.url}/v1`, { keys: [GOOD.openai, BAD.openai], models: ["gpt-4o-mini"], model_map: { "gpt-4o-mini": "gpt-4o-mini-2024-07-18" } }),
        channel("an", anthropic.url, { protocol: "anthropic", keys: [GOOD.anthropic, BAD.anthropic], models: ["claude-sonnet-4-5"] }),
        channel("ge", gemini.url, { protocol: "gemini", keys: [GOOD.gemini, BAD.gemini], models: ["gemini-2.5-flash"], model_map: { "gemini-2.5-flash": "gemini-2.5-flash-001" } }),
        channel("oa-good", `${openai.url}/v1`, { keys: [GOOD.openai], models: ["gpt-4o-mini", "gpt-4o-2024-08-06"] }),
        channel("slow", hanging.url, { keys: [GOOD.openai] }),
        channel("an-overloaded", overloaded.url, { protocol: "anthropic", keys: [GOOD.anthropic], models: ["claude-sonnet-4-5"] }),
        channel("off", `${openai.url}/v1`, { keys: [BAD.openai], status: "disabled" }),
      ],
    }));
  });
  after(async () => {
    await Promise.all([openai, anthropic, gemini, hanging, overloaded].map((f) => f?.close()));
    await rm(dir, { recursive: true, force: true });
  });

  async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    const code = await main(["channels", "test", "--config", file, ...args], { out: (t) => void (out += t), err: (t) => void (err += t) });
    for (const key of ALL_KEYS) {
      assert.ok(!out.includes(key) && !err.includes(key), `the key ${key} appears in the output:\n${out}${err}`);
    }
    return { code, out, err };
  }

  const rowsOf = (out: string) => out.trimEnd().split("\n").map((line) => JSON.parse(line) as JsonRow);

  for (const [name, protocol] of [["oa", "openai"], ["an", "anthropic"], ["ge", "gemini"]] as const) {
    test(`${protocol}: the good key passes and the bad one fails as auth, plain and streamed; exit 1`, async () => {
      const { code, out } = await run(name);
      assert.equal(code, 1, out);
      const lines = out.split("\n").filter((l) => l.startsWith(`${name} `));
      assert.equal(lines.length, 4, out);
      const good = keyFingerprint(GOOD[protocol]);
      const bad = keyFingerprint(BAD[protocol]);
      for (const mode of ["plain", "stream"]) {
        assert.match(out, new RegExp(`^${name} +\\S+ +${good} +${mode} +pass +200 +\\d+ ms +\\d+ ms +-`, "m"), out);
        assert.match(out, new RegExp(`^${name} +\\S+ +${bad} +${mode} +FAIL +40[01] +\\d+ ms +\\d+ ms +auth +\\S`, "m"), out);
      }
      assert.match(out, /^2 of 4 tests failed$/m);
    });
  }

  test("--json: one object per key and mode, with the upstream model, statuses, latencies and the failure's class", async () => {
    const { code, out } = await run("oa", "ge", "--json");
    assert.equal(code, 1);
    const rows = rowsOf(out);
    assert.deepEqual(rows.map((r) => [r.channel, r.key, r.mode, r.ok, r.error]), [
      ["oa", keyFingerprint(GOOD.openai), "plain", true, null], ["oa", keyFingerprint(GOOD.openai), "stream", true, null],
      ["oa", keyFingerprint(BAD.openai), "plain", false, "auth"], ["oa", keyFingerprint(BAD.openai), "stream", false, "auth"],
      ["ge", keyFingerprint(GOOD.gemini), "plain", true, null], ["ge", keyFingerprint(GOOD.gemini), "stream", true, null],
      ["ge", keyFingerprint(BAD.gemini), "plain", false, "auth"], ["ge", keyFingerprint(BAD.gemini), "stream", false, "auth"],
    ]);
    for (const r of rows) {
      assert.equal(r.model, r.channel === "oa" ? "gpt-4o-mini-2024-07-18" : "gemini-2.5-flash-001", "the first model, mapped");
      assert.ok(r.firstByteMs !== null && r.firstByteMs <= r.totalMs, JSON.stringify(r));
      if (r.ok) assert.equal(r.status, 200);
      else assert.match(r.message ?? "", /API key|Incorrect/, "the provider's message");
    }
    // The wire: each protocol's own request, plain and streamed, for the mapped model.
    const oaSent = openai.received.filter((r) => r.body.model === "gpt-4o-mini-2024-07-18");
    assert.ok(oaSent.some((r) => r.body.stream === true) && oaSent.some((r) => r.body.stream === undefined));
    assert.ok(oaSent.every((r) => r.path === "/v1/chat/completions" && r.body.max_completion_tokens === 8));
    const geSent = gemini.received.map((r) => r.path);
    assert.ok(geSent.includes("/v1beta/models/gemini-2.5-flash-001:generateContent"), geSent.join());
    assert.ok(geSent.includes("/v1beta/models/gemini-2.5-flash-001:streamGenerateContent?alt=sse"), geSent.join());
  });

  test("a channel whose every key is good exits 0; --model picks the model, mapped through model_map", async () => {
    const { code, out } = await run("oa-good", "--model", "gpt-4o-2024-08-06", "--json");
    assert.equal(code, 0, out);
    const rows = rowsOf(out);
    assert.deepEqual(rows.map((r) => [r.mode, r.ok, r.model]), [["plain", true, "gpt-4o-2024-08-06"], ["stream", true, "gpt-4o-2024-08-06"]]);
    const table = await run("oa-good");
    assert.equal(table.code, 0);
    assert.match(table.out, /^all 2 tests passed$/m);
  });

  test("none named: every enabled channel, not a disabled one; a named disabled one is tested", async () => {
    const { out } = await run("--json", "--timeout", "300ms");
    assert.deepEqual([...new Set(rowsOf(out).map((r) => r.channel))], ["oa", "an", "ge", "oa-good", "slow", "an-overloaded"]);
    const off = await run("off", "--json");
    assert.equal(off.code, 1);
    assert.deepEqual(rowsOf(off.out).map((r) => [r.channel, r.error]), [["off", "auth"], ["off", "auth"]]);
  });

  test("an upstream that does not answer fails as timeout within --timeout", async () => {
    const started = Date.now();
    const { code, out } = await run("slow", "--timeout", "300ms", "--json");
    assert.equal(code, 1);
    assert.deepEqual(rowsOf(out).map((r) => [r.mode, r.ok, r.error, r.status]), [["plain", false, "timeout", null], ["stream", false, "timeout", null]]);
    assert.ok(Date.now() - started < 5_000, "bounded by the timeout");
  });

  test("a 200 stream with an error event in it fails (bad_answer) with the provider's message; the plain answer passes", async () => {
    const { code, out } = await run("an-overloaded", "--json");
    assert.equal(code, 1);
    const rows = rowsOf(out);
    assert.deepEqual(rows.map((r) => [r.mode, r.ok, r.status, r.error]), [["plain", true, 200, null], ["stream", false, 200, "bad_answer"]]);
    assert.match(rows[1].message ?? "", /Overloaded/);
  });

  test("a named channel the config lacks exits 2 naming it, and tests nothing", async () => {
    const before = openai.received.length;
    const { code, out, err } = await run("oa", "nosuch");
    assert.equal(code, 2);
    assert.equal(out, "");
    assert.match(err, /no channel named 'nosuch'/);
    assert.equal(openai.received.length, before);
    const bad = await run("--timeout", "soon");
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--timeout 'soon'/);
  });

  test("`gateway channels test` as a process: its exit code, and it ends at once (no socket held)", async () => {
    const child = runGateway(["channels", "test", "an", "--config", file], dir);
    const { code } = await exited(child, 20_000);
    assert.equal(code, 1, child.stderr);
    assert.match(child.stdout, /^2 of 4 tests failed$/m);
    for (const key of ALL_KEYS) assert.ok(!child.stdout.includes(key) && !child.stderr.includes(key));
  });
});
