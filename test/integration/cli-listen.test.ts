// `gateway --listen HOST:PORT` (and `gateway serve --listen`): the command line's address
// replaces the config's server.listen for the run, in a single process and in every worker
// of a cluster; a reload keeps it (and does not warn that server settings changed); a bad
// address exits 2 in the CLI's usual shape.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../helpers/gateway.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { REDIS_URL, deleteKeys, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { alive, exited, runGateway, type Child } from "../helpers/spawn-gateway.js";
import { TOKEN, closedPort, config, postChat, rawRequest, token } from "./support.js";

const refused = (url: string) => assert.rejects(rawRequest(url), (err: NodeJS.ErrnoException) => err.code === "ECONNREFUSED");

/** Waits until the child answers /healthz at `base`, failing at once if it exits. */
async function healthy(child: Child, base: string): Promise<void> {
  await eventually(async () => {
    if (!alive(child)) throw new Error(`gateway exited early:\n${child.stderr}`);
    return (await rawRequest(`${base}/healthz`).catch(() => undefined))?.status === 200;
  }, 10_000, `the gateway to answer ${base}/healthz`);
}

describe("gateway --listen", () => {
  let dir: string;
  const children: Child[] = [];
  before(async () => { dir = await mkdtemp(join(tmpdir(), "gw-listen-")); });
  after(async () => {
    for (const child of children) if (alive(child)) child.proc.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  test("serves on the flag's address, not server.listen's, and a reload keeps it", async () => {
    const configured = await closedPort();
    const flagged = await closedPort();
    const file = join(dir, "reload.yaml");
    const yaml = (tokens?: Record<string, unknown>[]) =>
      config({ server: { listen: `127.0.0.1:${configured}` }, tokens }) + "store: sqlite:./data-reload/gateway.db\n";
    await writeFile(file, yaml());
    const child = runGateway(["--config", file, "--listen", `127.0.0.1:${flagged}`], dir, "info");
    children.push(child);
    const base = `http://127.0.0.1:${flagged}`;
    await healthy(child, base);
    await refused(`http://127.0.0.1:${configured}/healthz`);
    assert.match(child.stderr, new RegExp(`"msg":"gateway listening","url":"http://127\\.0\\.0\\.1:${flagged}"`));

    // A reload (a new token) applies, and the gateway stays where the flag put it.
    const fresh = "sk-gw-listen-after-reload-01";
    await writeFile(file, yaml([token("alice-main", TOKEN), token("fresh", fresh)]));
    child.proc.kill("SIGHUP");
    await eventually(async () => {
      const r = await postChat(base, { model: "gpt-4o-mini", messages: [] }, { authorization: `Bearer ${fresh}` });
      return r.status !== 401;
    }, 5000, "the reloaded token to be accepted");
    assert.equal((await rawRequest(`${base}/healthz`)).status, 200);
    await refused(`http://127.0.0.1:${configured}/healthz`);
    assert.doesNotMatch(child.stderr, /settings changed; they apply after a restart/, "the flag is not a changed setting");

    child.proc.kill("SIGTERM");
    const { code } = await exited(child, 8000);
    assert.equal(code, 0, child.stderr);
    await refused(`${base}/healthz`);
  });

  test("`gateway serve --listen` does the same", async () => {
    const configured = await closedPort();
    const flagged = await closedPort();
    const file = join(dir, "serve.yaml");
    await writeFile(file, config({ server: { listen: `127.0.0.1:${configured}` } }) + "store: sqlite:./data-serve/gateway.db\n");
    const child = runGateway(["serve", `--listen=127.0.0.1:${flagged}`, "-c", file], dir, "warn");
    children.push(child);
    await healthy(child, `http://127.0.0.1:${flagged}`);
    await refused(`http://127.0.0.1:${configured}/healthz`);
    child.proc.kill("SIGTERM");
    assert.equal((await exited(child, 8000)).code, 0, child.stderr);
  });

  test("with server.workers: 2 (Redis and PostgreSQL) every worker listens on the flag's address, across a reload", async () => {
    const prefix = testKeyPrefix("listen");
    const db = await createTestDatabase("gw_listen");
    try {
      const configured = await closedPort();
      const flagged = await closedPort();
      const file = join(dir, "workers.yaml");
      const yaml = (tokens?: Record<string, unknown>[]) => config({
        server: { listen: `127.0.0.1:${configured}`, workers: 2, drain_timeout: "5s" },
        store: `${REDIS_URL}?key_prefix=${prefix}`,
        tokens,
      }) + `ledger: ${db.url}\n`;
      await writeFile(file, yaml());
      const child = runGateway(["--config", file, "--listen", `127.0.0.1:${flagged}`], dir, "info");
      children.push(child);
      const base = `http://127.0.0.1:${flagged}`;
      await healthy(child, base);
      // The primary says so once every worker listens.
      await eventually(() => new RegExp(`"msg":"gateway listening","url":"http://127\\.0\\.0\\.1:${flagged}".*"workers":2`).test(child.stderr),
        15_000, "both workers to listen on the flag's address");
      await refused(`http://127.0.0.1:${configured}/healthz`);

      const fresh = "sk-gw-listen-workers-reload-1";
      await writeFile(file, yaml([token("alice-main", TOKEN), token("fresh", fresh)]));
      child.proc.kill("SIGHUP");
      // Fresh connections, so the cluster hands them to either worker: each knows the token.
      await eventually(async () => {
        const answers = await Promise.all(Array.from({ length: 6 }, () =>
          postChat(base, { model: "gpt-4o-mini", messages: [] }, { authorization: `Bearer ${fresh}`, connection: "close" })));
        return answers.every((r) => r.status !== 401);
      }, 8000, "every worker to accept the reloaded token");
      await refused(`http://127.0.0.1:${configured}/healthz`);
      assert.doesNotMatch(child.stderr, /settings changed; they apply after a restart/);

      child.proc.kill("SIGTERM");
      assert.equal((await exited(child, 15_000)).code, 0, child.stderr);
      await refused(`${base}/healthz`);
    } finally {
      await db.drop().catch(() => {});
      const client = testRedisClient();
      try { await deleteKeys(client, prefix); } finally { client.disconnect(); }
    }
  });

  for (const [args, message] of [
    [["--listen", "localhost"], `--listen: invalid listen address "localhost": write host:port, e.g. "127.0.0.1:8080" or "[::1]:8080"`],
    [["serve", "--listen", "127.0.0.1:70000"], `--listen: invalid listen address "127.0.0.1:70000": port 70000 is above 65535`],
    [["serve", "--listen"], "option '--listen' needs a value (HOST:PORT)"],
  ] as const) {
    test(`gateway ${args.join(" ")} exits 2 naming the problem, serving nothing`, async () => {
      const child = runGateway([...args, "--config", join(dir, "absent.yaml")], dir, "warn");
      children.push(child);
      const { code } = await exited(child, 15_000);
      assert.equal(code, 2, child.stderr);
      assert.equal(child.stdout, "");
      assert.equal(child.stderr, `gateway: ${message}\nusage: gateway [serve] [options]\nrun 'gateway serve --help' for its options\n`);
    });
  }
});
