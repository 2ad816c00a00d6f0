// gateway.yaml's users and tokens never share a name with the accounts store's: a gateway
// whose file names a stored user or token does not start (the error names both), and a
// reload that would make such a clash is refused with the running config kept.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { openSqliteAccountStore } from "../../src/accounts/sqlite-store.js";
import { eventually } from "../helpers/gateway.js";
import { alive, exited, runGateway, serveGateway } from "../helpers/spawn-gateway.js";
import { rawRequest } from "./support.js";

const config = (port: number, users: Record<string, unknown>, tokens: unknown[]) => stringify({
  server: { listen: `127.0.0.1:${port}` }, store: "sqlite:./gateway.db",
  groups: { default: {} }, users, tokens, channels: [], models: { m: { endpoint: "chat", price: { input: 1 } } },
});

describe("names shared by gateway.yaml and the accounts store", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-clash-"));
    const store = openSqliteAccountStore(join(dir, "gateway.db"));
    await store.createUser({ name: "bob", groups: ["default"] }, { actor: "test" });
    await store.createToken({ name: "bob-1", keyHash: "a".repeat(64), user: "bob", group: "default" }, { actor: "test" });
    await store.close();
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("a file naming a stored user or token does not start; the error names each", async () => {
    const file = join(dir, "clash.yaml");
    await writeFile(file, config(0, { bob: { groups: ["default"] }, carol: { groups: ["default"] } }, [
      { name: "bob-1", key: "sk-clash-0123456789", user: "carol", group: "default" },
    ]));
    const child = runGateway(["--config", file], dir, "warn");
    const { code } = await exited(child, 20_000);
    assert.equal(code, 1, child.stderr);
    assert.match(child.stderr, /users\.bob: a user named 'bob' is also kept in the accounts store/);
    assert.match(child.stderr, /a token named 'bob-1' is also kept in the accounts store/);
  });

  test("a reload that would clash is refused; the running config keeps serving", async () => {
    const file = join(dir, "reload.yaml");
    const users = { carol: { credit: 1, groups: ["default"] } };
    const tokens = [{ name: "carol-1", key: "sk-carol-0123456789", user: "carol", group: "default" }];
    const served = await serveGateway({ file, cwd: dir, yaml: (port) => config(port, users, tokens), readyMs: 20_000, logLevel: "info" });
    try {
      const balance = () => rawRequest(`${served.base}/v1/dashboard/billing/subscription`, { headers: { authorization: "Bearer sk-carol-0123456789" } });
      assert.equal((await balance()).status, 200);
      await writeFile(file, config(served.port, { ...users, bob: { groups: ["default"] } }, tokens));
      served.child.proc.kill("SIGHUP");
      await eventually(() => /config rejected; keeping the running config/.test(served.child.stderr + served.child.stdout), 10_000, "the reload refused");
      assert.match(served.child.stderr + served.child.stdout, /a user named 'bob' is also kept in the accounts store/);
      assert.equal((await balance()).status, 200, "still serving the running config");
    } finally {
      if (alive(served.child)) served.child.proc.kill("SIGKILL");
      await served.child.exit;
    }
  });
});
