// Stored accounts across instances: two gateway processes on one Redis and one PostgreSQL
// ledger. A token created through one instance's admin API works on the other within a
// second; a revoked token, a disabled user and a top-up reach it within a second too; 200
// concurrent redemptions of one code, split between both, credit once.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { deleteKeys, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { alive, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { rawRequest, type RawResponse } from "./support.js";

const ADMIN = "adm-instances-key-0123456789ab";
/** What "within a second" allows: the feed is read every 250 ms. */
const PROPAGATION_MS = 1000;

describe("stored accounts on two instances sharing Redis and PostgreSQL", () => {
  let dir: string;
  let db: TestDatabase;
  const prefix = testKeyPrefix("accounts-instances");
  const instances: { child: Child; base: string }[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-instances-"));
    db = await createTestDatabase("gw_instances");
    const yaml = (port: number) => stringify({
      server: { listen: `127.0.0.1:${port}` },
      store: `${REDIS_URL}?key_prefix=${prefix}`,
      ledger: db.url,
      admin: { keys: [{ name: "ops", key: ADMIN, scopes: ["read", "write", "billing"] }] },
      groups: { default: {} },
      users: {},
      tokens: [],
      channels: [],
      models: { "gpt-4o-mini": { endpoint: "chat", price: { input: 1, output: 1 } } },
    });
    // One at a time: the first creates the ledger's schema.
    for (const name of ["a", "b"]) {
      const served = await serveGateway({ file: join(dir, `${name}.yaml`), cwd: dir, yaml, readyMs: 20_000 });
      instances.push({ child: served.child, base: served.base });
    }
  });

  after(async () => {
    for (const i of instances) if (alive(i.child)) i.child.proc.kill("SIGKILL");
    await Promise.all(instances.map((i) => i.child.exit));
    await db?.drop().catch(() => {});
    const redis = testRedisClient(REDIS_URL);
    await deleteKeys(redis, prefix);
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  const admin = (base: string, method: string, path: string, body?: unknown): Promise<RawResponse> =>
    rawRequest(`${base}${path}`, {
      method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const balance = (base: string, key: string): Promise<RawResponse> =>
    rawRequest(`${base}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer ${key}` } });

  /** How long until `check` holds, polling every 10 ms; fails past `limitMs` (with slack
   * for the polling itself). */
  async function within(limitMs: number, what: string, check: () => Promise<boolean>): Promise<number> {
    const started = Date.now();
    for (;;) {
      if (await check()) return Date.now() - started;
      if (Date.now() - started > limitMs + 250) assert.fail(`${what}: not within ${limitMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  test("created on one instance, a token works on the other within a second; revoked, it is refused there within a second", async () => {
    const [a, b] = instances;
    assert.equal((await admin(a.base, "POST", "/admin/v1/users", { name: "pat", groups: ["default"], credit: 3 })).status, 201);
    const created = await admin(a.base, "POST", "/admin/v1/tokens", { name: "pat-1", user: "pat" });
    assert.equal(created.status, 201, created.text);
    const key = created.json.key as string;
    assert.equal((await balance(a.base, key)).status, 200, "at once on the instance that made it");
    const seen = await within(PROPAGATION_MS, "the new token on instance b", async () => (await balance(b.base, key)).status === 200);
    assert.ok(seen <= PROPAGATION_MS + 250, `seen after ${seen} ms`);
    assert.equal((await balance(b.base, key)).json.balance, 3);

    // A top-up on b reaches a's cached user.
    assert.equal((await admin(b.base, "POST", "/admin/v1/users/pat/credit", { amount: "2.5", reason: "top-up", idempotency_key: "pay-77" })).status, 201);
    await within(PROPAGATION_MS, "the top-up on instance a", async () => (await balance(a.base, key)).json.balance === 5.5);

    assert.equal((await admin(a.base, "DELETE", "/admin/v1/tokens/pat-1")).status, 200);
    await within(PROPAGATION_MS, "the revoked token refused on instance b", async () => (await balance(b.base, key)).status === 401);
    assert.equal((await balance(a.base, key)).status, 401);
  });

  test("a user disabled on one instance is refused on the other within a second", async () => {
    const [a, b] = instances;
    await admin(a.base, "POST", "/admin/v1/users", { name: "quin", groups: ["default"] });
    const key = (await admin(a.base, "POST", "/admin/v1/tokens", { name: "quin-1", user: "quin" })).json.key as string;
    await within(PROPAGATION_MS, "the token on instance b", async () => (await balance(b.base, key)).status === 200);
    assert.equal((await admin(b.base, "PATCH", "/admin/v1/users/quin", { status: "disabled" })).status, 200);
    await within(PROPAGATION_MS, "the disabled user on instance a", async () => {
      const r = await balance(a.base, key);
      return r.status === 401 && r.json.error.code === "user_disabled";
    });
  });

  test("200 concurrent redemptions of one code, split between the instances, credit once", async () => {
    const [a, b] = instances;
    await admin(a.base, "POST", "/admin/v1/users", { name: "rae", groups: ["default"] });
    const key = (await admin(a.base, "POST", "/admin/v1/tokens", { name: "rae-1", user: "rae" })).json.key as string;
    const codes = await admin(a.base, "POST", "/admin/v1/codes", { count: 1, amount: "7", expires: "1d" });
    assert.equal(codes.status, 201, codes.text);
    const [code] = codes.json.codes as string[];
    await within(PROPAGATION_MS, "the token on instance b", async () => (await balance(b.base, key)).status === 200);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => rawRequest(`${(i % 2 ? a : b).base}/v1/dashboard/redeem`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ code }),
    })));
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, `exactly one redemption: ${JSON.stringify(statuses.filter((s) => s !== 400))}`);
    assert.ok(statuses.every((s) => s === 200 || s === 400 || s === 429), JSON.stringify([...new Set(statuses)]));
    const user = await admin(b.base, "GET", "/admin/v1/users/rae");
    assert.equal(user.json.credit, "7");
    const entries = await admin(a.base, "GET", "/admin/v1/users/rae/credit");
    assert.equal(entries.json.data.length, 1);
  });
});
