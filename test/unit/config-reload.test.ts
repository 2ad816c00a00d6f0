// Live reload: edits are applied, bad files keep the running config and are counted,
// unchanged files are skipped, restart-only settings are kept, old Runtimes stay intact.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfigFile } from "../../src/config/index.js";
import { RuntimeBox } from "../../src/runtime/box.js";
import { createReloader, type Reloader } from "../../src/config/reload.js";
import { configReloadsTotal, registry } from "../../src/observability/metrics.js";
import { setLogLevel, setLogSink } from "../../src/observability/log.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-reload-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const logs: string[] = [];
setLogLevel("warn");
setLogSink((line) => logs.push(line));

function configText(opts: { input?: number; port?: number; extra?: string } = {}): string {
  return `server: { listen: "127.0.0.1:${opts.port ?? 8080}" }
groups: { default: {} }
users: { alice: { groups: [default] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
channels:
  - { name: c1, protocol: openai, base_url: https://api.openai.com, keys: [k], groups: [default], models: [m] }
models:
  m: { price: { input: ${opts.input ?? 1} } }
${opts.extra ?? ""}`;
}

/** Polls `check` until it passes or `timeoutMs` elapses (then rethrows its last failure). */
async function eventually(check: () => void | Promise<void>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

async function counts(): Promise<Record<string, number>> {
  const metric = await configReloadsTotal.get();
  const out: Record<string, number> = { applied: 0, unchanged: 0, rejected: 0 };
  for (const v of metric.values) out[String(v.labels.outcome)] = v.value;
  return out;
}

async function setup(name: string, watch: boolean): Promise<{ path: string; box: RuntimeBox; reloader: Reloader }> {
  const path = join(dir, name);
  writeFileSync(path, configText());
  const { runtime } = await loadConfigFile(path, { env: {} });
  const box = new RuntimeBox(runtime);
  const reloader = createReloader({ path, box, env: {}, watch, debounceMs: 30 });
  await reloader.ready;
  return { path, box, reloader };
}

const inputPrice = (box: RuntimeBox): bigint | undefined => box.current.models.get("m")?.price.inputPer1M;

test("watched edits apply; a bad file is rejected, counted, and watching goes on", async () => {
  const { path, box, reloader } = await setup("watched.yaml", true);
  try {
    const first = box.current;
    const before = await counts();

    writeFileSync(path, configText({ input: 2 }));
    await eventually(() => assert.equal(box.current.generation, 2));
    assert.equal(inputPrice(box), 2_000_000_000n);
    // A held reference to the old Runtime is untouched and still frozen.
    assert.equal(first.generation, 1);
    assert.equal(first.models.get("m")?.price.inputPer1M, 1_000_000_000n);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.models.get("m")?.price));

    writeFileSync(path, configText({ input: 3 }).replace("user: alice", "user: bob"));
    await eventually(async () => assert.equal((await counts()).rejected, before.rejected + 1));
    assert.equal(box.current.generation, 2);
    assert.equal(inputPrice(box), 2_000_000_000n);
    assert.ok(logs.some((l) => l.includes("config rejected") && l.includes("watched.yaml:5:") && l.includes("tokens[0].user")));

    // Editors that save by renaming a new file over the old one are still seen.
    writeFileSync(path + ".tmp", configText({ input: 4 }));
    renameSync(path + ".tmp", path);
    await eventually(() => assert.equal(inputPrice(box), 4_000_000_000n));
    assert.equal(box.current.generation, 3);
    assert.ok((await counts()).applied >= before.applied + 2);
  } finally {
    await reloader.close();
  }
});

test("two saves in quick succession: the last one is applied", async () => {
  const { path, box, reloader } = await setup("quick.yaml", true);
  try {
    writeFileSync(path, configText({ input: 7 }));
    await eventually(() => assert.equal(inputPrice(box), 7_000_000_000n));
    writeFileSync(path, configText({ input: 8 }));
    writeFileSync(path, configText({ input: 9 }));
    await eventually(() => assert.equal(inputPrice(box), 9_000_000_000n));
  } finally {
    await reloader.close();
  }
});

test("unchanged content is skipped and counted", async () => {
  const { box, reloader } = await setup("same.yaml", false);
  const before = await counts();
  assert.equal(await reloader.reload("manual"), "unchanged");
  assert.equal(box.current.generation, 1);
  assert.equal((await counts()).unchanged, before.unchanged + 1);
  await reloader.close();
});

test("the watcher finds a text just rejected unchanged; a signal tries it again; fixed, it applies", async () => {
  const { path, box, reloader } = await setup("rejected-once.yaml", false);
  const before = await counts();
  writeFileSync(path, "server: [not a mapping\n");
  assert.equal(await reloader.reload("signal"), "rejected");
  assert.equal(await reloader.reload("watch"), "unchanged");
  assert.equal((await counts()).rejected, before.rejected + 1);
  assert.match(await registry.metrics(), /^gateway_config_last_reload_successful 0$/m, "the file still does not load");
  assert.equal(await reloader.reload("signal"), "rejected");
  writeFileSync(path, configText({ input: 4 }));
  assert.equal(await reloader.reload("signal"), "applied");
  assert.equal(inputPrice(box), 4_000_000_000n);
  await reloader.close();
});

test("a file the watcher finds empty is a save under way: not rejected; a signal still rejects it", async () => {
  const { path, box, reloader } = await setup("truncated.yaml", false);
  const before = await counts();
  writeFileSync(path, ""); // truncated, its new text not yet written
  assert.equal(await reloader.reload("watch"), "unchanged");
  assert.equal((await counts()).rejected, before.rejected);
  assert.equal(await reloader.reload("signal"), "rejected", "an operator's reload of an empty file is refused");
  writeFileSync(path, configText({ input: 6 }));
  assert.equal(await reloader.reload("watch"), "applied");
  assert.equal(inputPrice(box), 6_000_000_000n);
  await reloader.close();
});

test("server and store changes keep the running values until a restart", async () => {
  const { path, box, reloader } = await setup("server.yaml", false);
  logs.length = 0;
  writeFileSync(path, configText({ input: 5, port: 9999, extra: "store: redis://localhost:6379\n" }));
  assert.equal(await reloader.reload("signal"), "applied");
  assert.equal(box.current.server.port, 8080);
  assert.equal(box.current.store, "sqlite:./data/gateway.db");
  assert.equal(inputPrice(box), 5_000_000_000n, "live settings still apply");
  assert.ok(Object.isFrozen(box.current));
  assert.ok(logs.some((l) => l.includes("apply after a restart")));
  await reloader.close();
});

test("reloads run one at a time; requests during one coalesce into one follow-up", async () => {
  const { path, box, reloader } = await setup("serial.yaml", false);
  writeFileSync(path, configText({ input: 6 }));
  const outcomes = await Promise.all([reloader.reload("manual"), reloader.reload("manual"), reloader.reload("signal")]);
  assert.deepEqual(outcomes, ["applied", "unchanged", "unchanged"]);
  assert.equal(box.current.generation, 2);
  await reloader.close();
});
