// The `gateway` command as operators run it: `node bin/gateway.js --config F` serving a
// fake upstream, SIGHUP reload, SIGTERM drain (exit 0 after an in-flight stream), and
// `gateway check` on a good and a broken file.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { eventually } from "../helpers/gateway.js";
import { alive, exited, root, runGateway as run, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { TOKEN, channel, config, postChat, rawRequest, token } from "./support.js";

describe("gateway check", { concurrency: true }, () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), "gw-check-")); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  test("the shipped gateway.yaml checks clean (exit 0)", async () => {
    const child = run(["check", "--config", "gateway.yaml"], root);
    const { code } = await exited(child, 15_000);
    assert.equal(code, 0, child.stderr);
    assert.match(child.stdout, /^ok: gateway\.yaml/m);
  });

  test("a broken config exits 1 with file:line:col for each problem", async () => {
    const file = join(dir, "broken.yaml");
    await writeFile(file, [
      "server:",
      "  listen: 127.0.0.1:0",
      "  bogus_key: 1",
      "groups:",
      "  default: { multiplier: 0.7 }",
      "users:",
      "  alice: { credit: 1, groups: [default] }",
      "tokens:",
      "  - name: t",
      "    key: abc",
      "    user: nobody",
      "    group: default",
      "models:",
      "  m: { price: { input: 1 } }",
      "",
    ].join("\n"));
    const child = run(["check", "--config", file], dir);
    const { code } = await exited(child, 15_000);
    assert.equal(code, 1, `stdout: ${child.stdout}\nstderr: ${child.stderr}`);
    assert.match(child.stderr, /broken\.yaml:3:\d+: .*bogus_key/, child.stderr);
    assert.match(child.stderr, /broken\.yaml:11:\d+: .*nobody/, child.stderr);
  });

  test("a YAML syntax error exits 1 with its position", async () => {
    const file = join(dir, "syntax.yaml");
    await writeFile(file, "server:\n  listen: [127.0.0.1:0\nmodels: {}\n");
    const child = run(["check", "--config", file], dir);
    const { code } = await exited(child, 15_000);
    assert.equal(code, 1);
    assert.match(child.stderr, /syntax\.yaml:\d+:\d+/);
  });
});

describe("gateway serve", () => {
  let dir: string;
  let file: string;
  let fake: FakeOpenAI;
  let script: Script = { kind: "ok" };
  let child: Child | undefined;

  const NEW_TOKEN = "sk-gw-after-sighup-000001";
  const yaml = (extra: { mapTo?: string; tokens?: Record<string, unknown>[] } = {}) => (port: number) => config({
    server: { listen: `127.0.0.1:${port}`, drain_timeout: "5s", upstream_timeout: "5s" },
    tokens: extra.tokens,
    channels: [channel("main", fake.url, extra.mapTo ? { model_map: { "gpt-4o-mini": extra.mapTo } } : {})],
  }) + "store: sqlite:./data/gateway.db\n";

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-serve-"));
    file = join(dir, "gateway.yaml");
    fake = await startFakeOpenAI({ name: "cli", script: () => script });
  });
  after(async () => {
    if (child && alive(child)) child.proc.kill("SIGKILL");
    await fake?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("serves, reloads on SIGHUP, and exits 0 on SIGTERM after finishing an in-flight stream", async () => {
    const { child: c, port, base } = await serveGateway({ file, cwd: dir, yaml: yaml() });
    child = c;

    // one chat request through the spawned gateway
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${base}/v1`, maxRetries: 0 });
    const out = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    assert.equal(out.choices[0].message.content, "cli says: hi");
    assert.equal(fake.received[fake.received.length - 1].body.model, "gpt-4o-mini");

    // SIGHUP: edit the file (new model_map and a new token), signal, observe the new behaviour
    await writeFile(file, yaml({ mapTo: "gpt-4o-mini-2024-07-18", tokens: [token("fresh", NEW_TOKEN)] })(port));
    c.proc.kill("SIGHUP");
    await eventually(async () => {
      const r = await postChat(base, { model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] },
        { authorization: `Bearer ${NEW_TOKEN}` });
      return r.status === 200;
    }, 5000, "the new token to be accepted after SIGHUP");
    assert.equal(fake.received[fake.received.length - 1].body.model, "gpt-4o-mini-2024-07-18");
    assert.equal((await postChat(base, { model: "gpt-4o-mini", messages: [] })).status, 401, "the old token is gone");
    assert.match(c.stderr, /"msg":"config reloaded"/);

    // a broken edit is rejected and the running config stays
    await writeFile(file, "server: [oops\n");
    c.proc.kill("SIGHUP");
    await eventually(() => /"msg":"config rejected/.test(c.stderr), 5000, "the broken config to be rejected");
    const still = await postChat(base, { model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] },
      { authorization: `Bearer ${NEW_TOKEN}` });
    assert.equal(still.status, 200);
    assert.equal(c.proc.exitCode, null, "a bad reload must not stop the gateway");

    // SIGTERM during a slow stream: the stream completes, then the process exits 0
    script = { kind: "ok", text: "every word arrives before exit", chunks: 6, chunkDelayMs: 60 };
    const fresh = new OpenAI({ apiKey: NEW_TOKEN, baseURL: `${base}/v1`, maxRetries: 0 });
    const stream = await fresh.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }], stream: true,
    });
    let text = "";
    let signalled = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (!signalled && text.length > 0) {
        signalled = true;
        c.proc.kill("SIGTERM");
      }
    }
    assert.ok(signalled);
    assert.equal(text, "every word arrives before exit");
    const { code, signal } = await exited(c, 8000);
    assert.equal(signal, null);
    assert.equal(code, 0, c.stderr);
    assert.match(c.stderr, /"msg":"stopped","forced":0/);
    await assert.rejects(rawRequest(`${base}/healthz`), (err: NodeJS.ErrnoException) => err.code === "ECONNREFUSED");
  });
});
