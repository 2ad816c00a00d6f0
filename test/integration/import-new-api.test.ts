// `gateway import new-api` end to end: a database in new-api's own schema (the tables its
// GORM models create: users, tokens, channels, abilities, options) built on SQLite and on
// PostgreSQL, filled with a few users, tokens, channels and price options, imported
// through main() as an operator would run it. Checked: the plan (and that --dry-run writes
// nothing), the accounts store, the opening credits (remaining quota / 500,000), the
// generated gateway.yaml (it compiles, with the groups, channels and prices expected), a
// token answering through a started gateway with its ORIGINAL new-api key, and a second
// run that changes nothing.
//
// The accounts go to the embedded SQLite store in one world and to a PostgreSQL ledger in
// the other. MariaDB (or MySQL; GATEWAY_TEST_MYSQL, default mysql://root@127.0.0.1:3306)
// runs on the machine's server (.ci/run makes sure it answers).

import mysql from "mysql2/promise";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { parse } from "yaml";
import { openAccountStore } from "../../src/accounts/open.js";
import type { AccountStore } from "../../src/accounts/store.js";
import { allPages } from "../../src/cli/users.js";
import { main } from "../../src/cli/main.js";
import { compileSource } from "../../src/config/index.js";
import { RuntimeBox } from "../../src/runtime/box.js";
import { startGateway } from "../../src/server/server.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { rawRequest } from "./support.js";

/** new-api's tables as its GORM models create them, in each dialect (the columns the
 * import reads and the ones around them; types as GORM maps them). */
type Dialect = "sqlite" | "postgres" | "mysql";

function schema(dialect: Dialect): string[] {
  const id = { sqlite: "integer PRIMARY KEY AUTOINCREMENT", postgres: "bigserial PRIMARY KEY", mysql: "bigint AUTO_INCREMENT PRIMARY KEY" }[dialect];
  const bool = { sqlite: "numeric", postgres: "boolean", mysql: "tinyint(1)" }[dialect];
  const time = { sqlite: "datetime", postgres: "timestamptz", mysql: "datetime(3)" }[dialect];
  const indexed = dialect === "mysql" ? "varchar(191)" : "text"; // MySQL indexes no unbounded text
  const q = (name: string) => (dialect === "postgres" ? `"${name}"` : `\`${name}\``);
  return [
    `CREATE TABLE users (id ${id}, username ${indexed} UNIQUE, password text NOT NULL, display_name text, role bigint DEFAULT 1,
      status bigint DEFAULT 1, email text, github_id text, discord_id text, oidc_id text, wechat_id text, telegram_id text,
      access_token char(32) UNIQUE, quota bigint DEFAULT 0, used_quota bigint DEFAULT 0, request_count bigint DEFAULT 0,
      ${q("group")} varchar(64) DEFAULT 'default', aff_code varchar(32) UNIQUE, aff_count bigint DEFAULT 0,
      aff_quota bigint DEFAULT 0, aff_history bigint DEFAULT 0, inviter_id bigint, deleted_at ${time}, linux_do_id text,
      setting text, remark varchar(255), stripe_customer varchar(64), created_at bigint, last_login_at bigint DEFAULT 0)`,
    `CREATE TABLE tokens (id ${id}, user_id bigint, ${q("key")} varchar(128) UNIQUE, status bigint DEFAULT 1, name text,
      created_time bigint, accessed_time bigint, expired_time bigint DEFAULT -1, remain_quota bigint DEFAULT 0,
      unlimited_quota ${bool}, model_limits_enabled ${bool}, model_limits text, allow_ips text DEFAULT '',
      used_quota bigint DEFAULT 0, ${q("group")} text DEFAULT '', cross_group_retry ${bool}, billing_type bigint DEFAULT 0,
      deleted_at ${time})`,
    `CREATE TABLE channels (id ${id}, type bigint DEFAULT 0, ${q("key")} text NOT NULL, openai_organization text,
      test_model text, status bigint DEFAULT 1, name text, weight bigint DEFAULT 0, created_time bigint, test_time bigint,
      response_time bigint, base_url text DEFAULT '', other text, balance decimal, balance_updated_time bigint, models text,
      ${q("group")} varchar(64) DEFAULT 'default', used_quota bigint DEFAULT 0, model_mapping text,
      status_code_mapping varchar(1024) DEFAULT '', priority bigint DEFAULT 0, auto_ban bigint DEFAULT 1, other_info text,
      tag text, setting text, param_override text, header_override text, remark varchar(255), channel_info json, settings text)`,
    `CREATE TABLE abilities (${q("group")} varchar(64), model varchar(255), channel_id bigint, enabled ${bool},
      priority bigint DEFAULT 0, weight bigint DEFAULT 0, tag text, PRIMARY KEY (${q("group")}, model, channel_id))`,
    `CREATE TABLE options (${q("key")} ${indexed} PRIMARY KEY, value text)`,
  ];
}

const ALICE_KEY = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijkl"; // new-api keeps it without "sk-"
const ALICE_CI_KEY = "ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210zyxwvutsrqpo";
const BOB_KEY = "BoBBoBBoBBoBBoBBoBBoBBoBBoBBoBBoBBoBBoBBoBBoBBoB";
const FUTURE = 4102444800; // 2100-01-01, in seconds

/** The rows: a user with two tokens, a disabled one, a deleted one and one whose name
 * the gateway cannot take; five channels (three importable) and the price options. */
function fill(upstream: string, dialect: Dialect): { sql: string; values: unknown[] }[] {
  const rows: { sql: string; values: unknown[] }[] = [];
  const q = (name: string) => (dialect === "mysql" ? `\`${name}\`` : `"${name}"`);
  const insert = (table: string, columns: string[], values: unknown[]) => rows.push({
    sql: `INSERT INTO ${table} (${columns.map(q).join(", ")}) VALUES (${values.map((_, i) => (dialect === "postgres" ? `$${i + 1}` : "?")).join(", ")})`,
    values,
  });
  const user = ["id", "username", "password", "email", "status", "quota", "used_quota", "group", "aff_code", "deleted_at"];
  insert("users", user, [1, "alice", "x", "alice@example.com", 1, 5_000_000, 1_000_000, "default", "a1", null]);
  insert("users", user, [2, "bob", "x", "", 2, 250_000, 0, "vip", "b2", null]);
  insert("users", user, [3, "carol", "x", "", 1, 9_000_000, 0, "default", "c3", "2026-01-01 00:00:00"]);
  insert("users", user, [4, "张三", "x", "", 1, 100, 0, "default", "d4", null]);
  const token = ["id", "user_id", "key", "status", "name", "expired_time", "remain_quota", "unlimited_quota", "model_limits_enabled", "model_limits", "allow_ips", "group", "deleted_at"];
  insert("tokens", token, [1, 1, ALICE_KEY, 1, "默认 key", -1, 0, true, false, "", "", "", null]);
  insert("tokens", token, [2, 1, ALICE_CI_KEY, 1, "ci", FUTURE, 1_000_000, false, true, "gpt-4o-mini,claude-3-5-sonnet", "127.0.0.1\n10.0.0.0/8", "vip", null]);
  insert("tokens", token, [3, 2, BOB_KEY, 1, "bob", -1, 0, true, false, "", "", "", null]);
  insert("tokens", token, [4, 3, "carolcarolcarolcarolcarolcarolcarolcarolcarolca", 1, "c", -1, 0, true, false, "", "", "", null]);
  const channel = ["id", "type", "key", "status", "name", "weight", "base_url", "models", "group", "model_mapping", "priority"];
  insert("channels", channel, [1, 1, "sk-up-1\nsk-up-2\n", 1, "OpenAI 主渠道", 0, upstream, "gpt-4o-mini,mystery-model,dall-e-3", "default,vip", '{"gpt-4o-mini":"gpt-4o-mini-2024-07-18"}', 10]);
  insert("channels", channel, [2, 14, "sk-ant-1", 1, "claude", 5, "", "claude-3-5-sonnet", "vip", "", 0]);
  insert("channels", channel, [3, 24, "AIza-1", 2, "gemini", 1, "", "gemini-1.5-pro", "default", null, 0]);
  insert("channels", channel, [4, 3, "azure-key", 1, "azure", 1, "https://x.openai.azure.com", "gpt-4o-mini", "default", null, 0]);
  insert("channels", channel, [5, 15, "baidu-key", 1, "wenxin", 1, "", "ernie-4.0", "default", null, 0]);
  const ability = ["group", "model", "channel_id", "enabled", "priority", "weight"];
  for (const [g, m, c] of [["default", "gpt-4o-mini", 1], ["vip", "gpt-4o-mini", 1], ["vip", "claude-3-5-sonnet", 2], ["default", "gemini-1.5-pro", 3]] as const) {
    insert("abilities", ability, [g, m, c, true, 0, 0]);
  }
  const option = (key: string, value: unknown) => insert("options", ["key", "value"], [key, JSON.stringify(value)]);
  option("GroupRatio", { default: 1, vip: 0.8, svip: 0.5 });
  option("ModelRatio", { "gpt-4o-mini": 0.075, "claude-3-5-sonnet": 1.5, "gemini-1.5-pro": 1.25 });
  option("CompletionRatio", { "gpt-4o-mini": 4, "claude-3-5-sonnet": 5, "gemini-1.5-pro": 3 });
  option("CacheRatio", { "claude-3-5-sonnet": 0.1 });
  option("ModelPrice", { "dall-e-3": 0.04 });
  insert("options", ["key", "value"], ["QuotaPerUnit", "500000"]);
  return rows;
}

/** A database of one dialect (its --from URL), the accounts store the import writes to
 * (as the config names it), and how to drop what was made. */
interface Source {
  readonly url: string;
  readonly accounts: { readonly store: string; readonly ledger?: string };
  readonly drop: () => Promise<void>;
}

const sources: Record<string, (dir: string, upstream: string) => Promise<Source>> = {
  SQLite: async (dir, upstream) => {
    const path = join(dir, "one-api.db");
    const db = new Database(path);
    for (const statement of schema("sqlite")) db.exec(statement);
    for (const { sql, values } of fill(upstream, "sqlite")) {
      db.prepare(sql).run(...values.map((v) => (typeof v === "boolean" ? Number(v) : v)));
    }
    db.close();
    return { url: `sqlite:${path}`, accounts: { store: "sqlite:./gateway.db" }, drop: async () => {} };
  },
  PostgreSQL: async (_dir, upstream) => {
    const database: TestDatabase = await createTestDatabase("gw_newapi_src");
    const ledger: TestDatabase = await createTestDatabase("gw_newapi_ledger");
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      for (const statement of schema("postgres")) await client.query(statement);
      for (const { sql, values } of fill(upstream, "postgres")) await client.query(sql, values);
    } finally {
      await client.end();
    }
    // The accounts go to a PostgreSQL ledger here, to the embedded SQLite store above.
    return {
      url: database.url, accounts: { store: "sqlite:./gateway.db", ledger: ledger.url },
      drop: async () => {
        await database.drop();
        await ledger.drop();
      },
    };
  },
  "MariaDB/MySQL": async (_dir, upstream) => {
    const server = process.env.GATEWAY_TEST_MYSQL ?? "mysql://root@127.0.0.1:3306";
    const name = `gw_newapi_${process.pid}_${randomBytes(4).toString("hex")}`;
    const admin = await mysqlDriver.createConnection(server);
    await admin.query(`CREATE DATABASE ${name}`);
    const url = `${server}/${name}`;
    const db = await mysqlDriver.createConnection(url);
    try {
      for (const statement of schema("mysql")) await db.query(statement);
      for (const { sql, values } of fill(upstream, "mysql")) await db.query(sql, values);
    } finally {
      await db.end();
    }
    return {
      url, accounts: { store: "sqlite:./gateway.db" },
      drop: async () => {
        await admin.query(`DROP DATABASE ${name}`);
        await admin.end();
      },
    };
  },
};

/** What the test uses of mysql2's connections. */
interface MysqlConnection {
  query(sql: string, values?: unknown[]): Promise<unknown>;
  end(): Promise<void>;
}
const mysqlDriver = (mysql as unknown as { createConnection(url: string): Promise<MysqlConnection> });

/** Everything the store holds, to compare two runs. */
async function snapshot(store: AccountStore): Promise<string> {
  const users = await allPages((after, limit) => store.listUsers({ after, limit }));
  const tokens = await allPages((after, limit) => store.listTokens({ after, limit }));
  const credits = await Promise.all(users.map(async (u) => [u.name, await store.creditOf(u.name)]));
  const audit = await allPages((before, limit) => store.audit({ before: before === undefined ? undefined : Number(before), limit }));
  return JSON.stringify({ users, tokens, credits, audit: audit.length }, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
}

for (const [dialect, makeSource] of Object.entries(sources)) describe(`gateway import new-api from ${dialect}`, () => {
  let dir: string;
  let config: string;
  let out: string;
  let source: Source;
  let upstream: FakeOpenAI;

  async function gateway(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let stdout = "";
    let stderr = "";
    const code = await main(argv, { out: (t) => void (stdout += t), err: (t) => void (stderr += t) });
    return { code, out: stdout, err: stderr };
  }
  const importArgs = (...more: string[]) => ["import", "new-api", "--from", source.url, "--config", config, ...more];
  const openStore = () => openAccountStore(source.accounts, { baseDir: dir });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "import-new-api-"));
    config = join(dir, "gateway.yaml");
    out = join(dir, "imported.yaml");
    upstream = await startFakeOpenAI();
    source = await makeSource(dir, upstream.url);
    writeFileSync(config, Object.entries(source.accounts).map(([k, v]) => `${k}: ${JSON.stringify(v)}\n`).join(""));
  });
  after(async () => {
    await upstream?.close();
    await source?.drop();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  test("--dry-run prints the plan, with every skipped item and why, and writes nothing", async () => {
    const run = await gateway(...importArgs("--dry-run"));
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /users: +2 new users, 0 already there/);
    assert.match(run.out, /credit: +opening balances of new users: 10\.5 /);
    assert.match(run.out, /tokens: +3 new tokens, 0 already there/);
    assert.match(run.out, /groups: +default \(×1\), svip \(×0\.5\), vip \(×0\.8\)/);
    assert.match(run.out, /channels: +OpenAI \(openai, 2 models\), claude \(anthropic, 1 model\), gemini \(gemini, 1 model\)/);
    assert.match(run.out, /user carol \(#3\): deleted in new-api/);
    assert.match(run.out, /user 张三 \(#4\): the username is not a valid gateway name/);
    assert.match(run.out, /token c \(#4\) of carol: its user is not imported/);
    assert.match(run.out, /channel azure \(#4\): type Azure \(3\) has no protocol here/);
    assert.match(run.out, /channel wenxin \(#5\): type Baidu \(15\) has no protocol here/);
    assert.match(run.out, /model mystery-model on OpenAI 主渠道 \(#1\): no ModelRatio or ModelPrice/);
    assert.match(run.out, /channel OpenAI: weight 0 became 1/);
    const store = await openStore();
    try {
      assert.equal((await store.listUsers({})).items.length, 0);
    } finally {
      await store.close();
    }
  });

  test("the import writes users, tokens (original keys) and credits to the store, and a gateway.yaml that compiles and serves them", async () => {
    const run = await gateway(...importArgs("--out", out));
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /users: +2 created, 0 already there/);
    assert.match(run.out, /credit: +2 opening credits added \(10\.5\), 0 already there/);
    assert.match(run.out, /tokens: +3 created, 0 already there/);

    const text = readFileSync(out, "utf8");
    const runtime = compileSource(text, { path: out, env: {} }).runtime;
    assert.deepEqual([...runtime.groups.values()].map((g) => [g.name, g.multiplier]), [["default", 1], ["svip", 0.5], ["vip", 0.8]]);
    const doc = parse(text) as { store: string; ledger?: string; channels: Record<string, unknown>[]; models: Record<string, { price: Record<string, number> }> };
    assert.equal(doc.store, source.accounts.store);
    assert.equal(doc.ledger, source.accounts.ledger);
    assert.deepEqual(doc.channels.map((c) => [c.name, c.protocol, c.base_url, c.keys, c.groups, c.models, c.priority, c.weight, c.status]), [
      ["OpenAI", "openai", upstream.url, ["sk-up-1", "sk-up-2"], ["default", "vip"], ["gpt-4o-mini", "dall-e-3"], 10, 1, "enabled"],
      ["claude", "anthropic", "https://api.anthropic.com", ["sk-ant-1"], ["vip"], ["claude-3-5-sonnet"], 0, 5, "enabled"],
      ["gemini", "gemini", "https://generativelanguage.googleapis.com", ["AIza-1"], ["default"], ["gemini-1.5-pro"], 0, 1, "disabled"],
    ]);
    assert.deepEqual(doc.channels[0].model_map, { "gpt-4o-mini": "gpt-4o-mini-2024-07-18" });
    assert.deepEqual(doc.models, {
      "claude-3-5-sonnet": { price: { input: 3, output: 15, cache_read_ratio: 0.1 } },
      "dall-e-3": { endpoint: "image", price: { per_image: 0.04 } },
      "gemini-1.5-pro": { price: { input: 2.5, output: 7.5 } },
      "gpt-4o-mini": { price: { input: 0.15, output: 0.6 } },
    });
    assert.equal(runtime.models.get("gpt-4o-mini")?.price.inputPer1M, 150_000_000n);

    const store = await openStore();
    try {
      const alice = await store.user("alice");
      assert.equal(alice?.status, "active");
      assert.deepEqual(alice?.groups, ["default", "vip"]);
      assert.match(alice?.note ?? "", /^new-api user #1; alice@example\.com; used 2 there$/);
      assert.equal((await store.user("bob"))?.status, "disabled");
      assert.equal(await store.creditOf("alice"), 10_000_000_000n); // 5,000,000 / 500,000
      assert.equal(await store.creditOf("bob"), 500_000_000n); // 250,000 / 500,000
      const ci = await store.token("alice-ci-2");
      assert.equal(ci?.group, "vip");
      assert.equal(ci?.quotaNano, 2_000_000_000n);
      assert.equal(ci?.expiresAt, FUTURE * 1000);
      assert.deepEqual(ci?.allowIps, ["127.0.0.1", "10.0.0.0/8"]);
      assert.deepEqual(ci?.models, ["gpt-4o-mini", "claude-3-5-sonnet"]);
      assert.equal(ci?.keyHint, `sk-${ALICE_CI_KEY.slice(0, 7)}…${ALICE_CI_KEY.slice(-4)}`);
      const first = await store.token("alice-key-1"); // "默认 key": what of the name is ASCII
      assert.equal(first?.quotaNano, undefined);
      assert.equal(first?.group, "default");
      const audit = await store.audit({ target: "alice" });
      assert.ok(audit.items.length > 0 && audit.items.every((r) => r.actor === "import:new-api"));

      // The gateway on the generated config and the store: alice's ORIGINAL key works.
      const gw = await startGateway({ box: new RuntimeBox({ ...runtime, server: { ...runtime.server, port: 0 } }), accountStore: store });
      try {
        const auth = { authorization: `Bearer sk-${ALICE_KEY}` };
        const sub = await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: auth });
        assert.equal(sub.status, 200, sub.text);
        assert.equal(sub.json.balance, 10);
        const chat = await rawRequest(`${gw.url}/v1/chat/completions`, {
          method: "POST", headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
        });
        assert.equal(chat.status, 200, chat.text);
        assert.equal(upstream.received.at(-1)?.body.model, "gpt-4o-mini-2024-07-18");
        // bob is disabled in new-api, so here too; a key new-api never had is refused.
        assert.equal((await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer sk-${BOB_KEY}` } })).status, 401);
        assert.equal((await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: { authorization: "Bearer sk-nope" } })).status, 401);
      } finally {
        await gw.drain(1000);
      }
    } finally {
      await store.close();
    }
  });

  test("a second run changes nothing: the store and the yaml stay identical and it says what is already there", async () => {
    const store = await openStore();
    const before = await snapshot(store);
    await store.close();
    const yamlBefore = readFileSync(out, "utf8");

    const run = await gateway(...importArgs("--out", out));
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /users: +0 new users, 2 already there/);
    assert.match(run.out, /tokens: +0 new tokens, 3 already there/);
    assert.match(run.out, /users: +0 created, 2 already there/);
    assert.match(run.out, /credit: +0 opening credits added \(0\), 2 already there/);
    assert.match(run.out, /tokens: +0 created, 3 already there/);
    assert.equal(readFileSync(out, "utf8"), yamlBefore);

    const again = await openStore();
    try {
      assert.equal(await snapshot(again), before);
    } finally {
      await again.close();
    }
  });

  test("--out in another folder names the same store, by its absolute path", async () => {
    mkdirSync(join(dir, "elsewhere"));
    const run = await gateway(...importArgs("--out", join(dir, "elsewhere", "gateway.yaml")));
    assert.equal(run.code, 0, run.err);
    const doc = parse(readFileSync(join(dir, "elsewhere", "gateway.yaml"), "utf8")) as { store: string };
    assert.equal(doc.store, `sqlite:${join(dir, "gateway.db")}`);
  });

  test("without --out the yaml goes to stdout and the plan to stderr", async () => {
    const run = await gateway(...importArgs());
    assert.equal(run.code, 0, run.err);
    assert.equal(run.out, readFileSync(out, "utf8"));
    assert.match(run.err, /^plan:/);
  });
});

describe("gateway import new-api: bad command lines", () => {
  test("--from is required and must name a database the import reads", async () => {
    let err = "";
    const io = { out: () => {}, err: (t: string) => void (err += t) };
    assert.equal(await main(["import", "new-api"], io), 2);
    assert.match(err, /--from is required/);
    err = "";
    assert.equal(await main(["import", "new-api", "--from", "oracle://x"], io), 2);
    assert.match(err, /expected sqlite:\/path\/one-api\.db/);
  });
});
