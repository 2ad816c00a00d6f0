// The account commands end to end on the stores a config names: `gateway users|tokens|
// codes|audit` through main(), as an operator types them, while a gateway serves from the
// same store with its own handles (as a second process would) — on the embedded SQLite
// file, and on Redis with a PostgreSQL ledger. A token the CLI creates authenticates, a
// code the CLI makes is redeemed over HTTP and the CLI sees the credit and the audit
// record, and a token the CLI revokes is refused within a second.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAccountStore } from "../../src/accounts/open.js";
import type { AccountStore } from "../../src/accounts/store.js";
import { main } from "../../src/cli/main.js";
import { loadConfigFile } from "../../src/config/index.js";
import { RuntimeBox } from "../../src/runtime/box.js";
import { startGateway, type GatewayServer } from "../../src/server/server.js";
import type { State } from "../../src/state/interfaces.js";
import { openState } from "../../src/state/open.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { eventually } from "../helpers/gateway.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { deleteKeys, REDIS_URL, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { rawRequest } from "./support.js";

/** The config, with a world's store lines. */
const yaml = (storeLines: string) => `
server: { listen: "127.0.0.1:0" }
${storeLines}groups: { default: { multiplier: 1 } }
users: { alice: { credit: 1, groups: [default] } }
tokens: [ { name: alice-main, key: sk-gw-test-alice-0123456789, user: alice, group: default } ]
channels: []
models: { gpt-4o-mini: { endpoint: chat, price: { input: 1, output: 1 } } }
`;

/** Where a world keeps its accounts: the config's store lines, and what to clean up. */
interface World {
  readonly storeLines: string;
  readonly cleanup: () => Promise<void>;
}

const worlds: Record<string, () => Promise<World>> = {
  "SQLite": async () => ({ storeLines: "store: sqlite:./gateway.db\n", cleanup: async () => {} }),
  "Redis with a PostgreSQL ledger": async () => {
    const db = await createTestDatabase("gw_cli_accounts");
    const prefix = testKeyPrefix("cli-accounts");
    return {
      storeLines: `store: ${JSON.stringify(`${REDIS_URL}?key_prefix=${prefix}`)}\nledger: ${JSON.stringify(db.url)}\n`,
      cleanup: async () => {
        const redis = testRedisClient();
        try {
          await deleteKeys(redis, prefix);
        } finally {
          redis.disconnect();
        }
        await db.drop();
      },
    };
  },
};

for (const [name, makeWorld] of Object.entries(worlds)) describe(`account commands on ${name}, beside a serving gateway`, () => {
  let world: World;
  let dir: string;
  let file: string;
  let state: State;
  let accountStore: AccountStore;
  let gw: GatewayServer;

  /** `gateway …argv --config FILE`, in process. */
  async function gateway(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    const code = await main([...argv, "--config", file], { out: (t) => void (out += t), err: (t) => void (err += t) });
    return { code, out, err };
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "cli-accounts-stores-"));
    file = join(dir, "gateway.yaml");
    world = await makeWorld();
    writeFileSync(file, yaml(world.storeLines));
    // The CLI first, on a store no gateway has opened yet.
    const bob = await gateway("users", "create", "bob", "--group", "default", "--credit", "2");
    assert.equal(bob.code, 0, bob.err);
    const { runtime } = await loadConfigFile(file, { env: {} });
    const spec = { store: runtime.store, ledger: runtime.ledger };
    state = await openState(spec, { baseDir: dir });
    accountStore = await openAccountStore(spec, { baseDir: dir });
    gw = await startGateway({ box: new RuntimeBox(runtime), state, accountStore, directory: { pollMs: 50 } });
  });
  after(async () => {
    await gw?.drain(1000);
    await accountStore?.close();
    await state?.close();
    await world?.cleanup();
    destroyAgents();
    rmSync(dir, { recursive: true, force: true });
  });

  const redeem = (key: string, code: string) => rawRequest(`${gw.url}/v1/dashboard/redeem`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ code }),
  });

  test("a token and codes made by the CLI work on the gateway; the CLI sees the redemption; a revoked token is refused within 1 s", async () => {
    const made = await gateway("tokens", "create", "bob-1", "--user", "bob", "--json");
    assert.equal(made.code, 0, made.err);
    const { key } = JSON.parse(made.out) as { key: string };
    const codes = await gateway("codes", "create", "--count", "2", "--amount", "3.5", "--expires", "1d", "--batch", "launch");
    assert.equal(codes.code, 0, codes.err);
    const [code] = codes.out.trim().split("\n");

    const redeemed = await redeem(key, code);
    assert.equal(redeemed.status, 200, redeemed.text);
    assert.deepEqual(redeemed.json, { object: "redemption", redeemed: "3.5", balance: "5.5" });
    assert.equal((await redeem(key, code)).status, 400);
    const sub = await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(sub.json.balance, 5.5);

    const bob = JSON.parse((await gateway("users", "show", "bob", "--json")).out);
    assert.equal(bob.credit, "5.5");
    assert.match((await gateway("codes", "show", "launch")).out, /^redeemed: +1 of 2$/m);
    const audit = (await gateway("audit", "--target", "bob", "--json")).out.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(audit[0].action, "code.redeem");
    assert.equal(audit[0].actor, "token:bob-1");
    assert.match(audit.at(-1).actor, /^cli:/);

    assert.equal((await gateway("tokens", "revoke", "bob-1")).code, 0);
    await eventually(async () => (await rawRequest(`${gw.url}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer ${key}` } })).status === 401,
      1000, "the revoked token refused");
  });
});
