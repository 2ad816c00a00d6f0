// Which channel key served each request, end to end: a channel with two keys (rotated
// round-robin) behind the real gateway on a SQLite store; every entry records the serving
// key's fingerprint, `gateway usage --by key` shows both fingerprints with the requests each
// served, `gateway logs --key` finds them, and neither key appears in any output.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CliIo } from "../../src/cli/format.js";
import { runLogs } from "../../src/cli/logs.js";
import { runUsage } from "../../src/cli/usage.js";
import { keyFingerprint } from "../../src/routing/key-health.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { bearerKey } from "../helpers/fake-server.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, channel, config, rawRequest } from "./support.js";

const keyA = `sk-A-SECRET-${randomBytes(8).toString("hex")}`;
const keyB = `sk-B-SECRET-${randomBytes(8).toString("hex")}`;

async function cli(cmd: typeof runUsage, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t) };
  return { code: await cmd(args, io), out, err };
}

describe("usage by the channel key that served it", () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-usage-by-key-"));
  const file = join(dir, "gateway.db");
  const store = `sqlite:${file}`;
  let fake: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(config({
      models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } } },
      channels: [channel("main", fake.url, { keys: [keyA, keyB] })],
    }), { store: openSqliteStore(file) });
  });
  after(async () => {
    await gw?.close();
    gw?.store.close();
    await fake?.close();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  test("usage --by key shows both fingerprints with what each served; the keys appear nowhere", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await rawRequest(`${gw.url}/v1/chat/completions`, {
        method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: `hi ${i}` }] }),
      });
      assert.equal(r.status, 200, r.text);
      ids.push(String(r.headers["x-gateway-request-id"]));
    }
    const fpA = keyFingerprint(keyA);
    const fpB = keyFingerprint(keyB);
    // Requests go one at a time: the i-th entry was served by the key the fake saw i-th.
    const sent = fake.received.map((r) => bearerKey(r.headers));
    assert.equal(sent.length, 4);
    assert.deepEqual(new Set(sent), new Set([keyA, keyB]), "rotation used both keys");
    for (const [i, id] of ids.entries()) {
      const entry = await entryOf(gw.store, id);
      assert.equal(entry.key, keyFingerprint(sent[i]), id);
      assert.equal(entry.channel, "main");
    }
    const served = (key: string) => sent.filter((k) => k === key).length;

    // Read as another process would: SQLite and the journal's tail.
    const table = await cli(runUsage, ["--store", store, "--by", "key"]);
    assert.equal(table.code, 0, table.err);
    const rows = table.out.split("\n").filter((l) => l.startsWith("main/"));
    assert.deepEqual(rows.map((l) => l.split(/ +/).slice(0, 2)).sort(), [[`main/${fpA}`, String(served(keyA))], [`main/${fpB}`, String(served(keyB))]].sort());
    const json = (await cli(runUsage, ["--store", store, "--by", "key", "--json"])).out.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(json.map((r) => [r.key, r.requests]).sort(), [[`main/${fpA}`, served(keyA)], [`main/${fpB}`, served(keyB)]].sort());
    for (const r of json) assert.ok(r.cost > 0 && r.channelCost > 0, `${r.key} carries its revenue and cost`);

    const logs = await cli(runLogs, ["--store", store, "--key", `main/${fpA}`, "--json"]);
    assert.equal(logs.code, 0, logs.err);
    const logged = logs.out.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(logged.length, served(keyA));
    for (const l of logged) assert.equal(l.key, fpA);
    const table2 = await cli(runLogs, ["--store", store, "--status", "2xx"]);
    assert.equal(table2.out.trim().split("\n").length, 5);

    const everything = [table.out, table.err, JSON.stringify(json), logs.out, table2.out,
      (await cli(runLogs, ["--store", store, "--json"])).out, (await cli(runUsage, ["--store", store])).out].join("\n");
    for (const key of [keyA, keyB]) {
      assert.ok(!everything.includes(key), "a key appears in the output");
      assert.ok(!everything.includes(key.slice(-16)), "part of a key appears in the output");
    }
    assert.ok(everything.includes(fpA) && everything.includes(fpB));
  });
});
