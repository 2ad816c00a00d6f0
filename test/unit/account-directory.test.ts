// The directory the request path asks who a key belongs to: gateway.yaml's tokens first,
// stored ones through a cache; a user's credit is the file's plus the ledger's; changes in
// the store reach the cache through the change feed (a second store object on the same
// storage stands for another instance).

import assert from "node:assert/strict";
import { test } from "node:test";
import { AccountDirectory } from "../../src/accounts/directory.js";
import { MemoryAccountStore } from "../../src/accounts/memory-store.js";
import type { AccountChange, AccountStore } from "../../src/accounts/store.js";
import { sha256Hex } from "../../src/config/hash.js";
import { compileSource } from "../../src/config/index.js";
import type { Runtime } from "../../src/runtime/types.js";

const yaml = `
groups: { default: {}, gold: {} }
users: { alice: { credit: 10, groups: [default] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
channels:
  - { name: c1, protocol: openai, base_url: "https://api.openai.com/v1/", keys: [k], groups: [default], models: [m] }
models:
  m: { price: { input: 1 } }
`;
const runtime = (generation = 1): Runtime => compileSource(yaml, { path: "t.yaml", env: {}, generation }).runtime;
const by = { actor: "test" };

/** A store that counts the lookups the directory makes, to tell cache hits from misses. */
function counted(store: AccountStore): AccountStore & { lookups: number } {
  const counts = { lookups: 0 };
  return withMethod(store, "tokenByHash", async (hash: string) => {
    counts.lookups++;
    return store.tokenByHash(hash);
  }, counts);
}

/** `store` with one method replaced (the others bound to it: it has private fields). */
function withMethod<E extends object>(store: AccountStore, name: keyof AccountStore, method: unknown, extra: E): AccountStore & E {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === name) return method;
      if (prop in extra) return (extra as Record<string | symbol, unknown>)[prop];
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as AccountStore & E;
}

async function storeWithBob(): Promise<MemoryAccountStore> {
  const store = new MemoryAccountStore();
  await store.createUser({ name: "bob", groups: ["gold"] }, by);
  await store.createToken({ name: "bob-1", keyHash: sha256Hex("sk-bob"), user: "bob", group: "gold", models: ["m"] }, by);
  return store;
}

test("a gateway.yaml token is found synchronously; the store is never asked for it", async () => {
  const store = counted(new MemoryAccountStore());
  const directory = new AccountDirectory(store);
  const token = directory.token(runtime(), sha256Hex("sk-one"));
  assert.ok(!(token instanceof Promise));
  assert.equal(token?.name, "t1");
  assert.equal(store.lookups, 0);
});

test("a stored token is loaded once, then answered from the cache", async () => {
  const store = counted(await storeWithBob());
  const directory = new AccountDirectory(store);
  const rt = runtime();
  const burst = await Promise.all(Array.from({ length: 20 }, () => directory.token(rt, sha256Hex("sk-bob"))));
  assert.ok(burst.every((t) => t?.name === "bob-1" && t.allowModel?.("m") === true && t.allowModel("x") === false));
  assert.equal(store.lookups, 1, "a burst with one new key asks the store once");
  const again = directory.token(rt, sha256Hex("sk-bob"));
  assert.ok(!(again instanceof Promise), "cached");
  assert.equal(store.lookups, 1);
});

test("an unknown key is remembered as nobody's, until a token with that key is created", async () => {
  const store = counted(await storeWithBob());
  const directory = new AccountDirectory(store);
  await directory.start();
  const rt = runtime();
  const hash = sha256Hex("sk-new");
  assert.equal(await directory.token(rt, hash), undefined);
  assert.equal(directory.token(rt, hash), undefined, "answered without the store");
  assert.equal(store.lookups, 1);
  await store.createToken({ name: "bob-2", keyHash: hash, user: "bob", group: "gold" }, by);
  await directory.refresh();
  assert.equal((await directory.token(rt, hash))?.name, "bob-2");
  directory.stop();
});

test("revoked and disabled tokens: a revoked key is nobody's, a disabled one is found inactive", async () => {
  const store = await storeWithBob();
  const directory = new AccountDirectory(store);
  await directory.start();
  const rt = runtime();
  const hash = sha256Hex("sk-bob");
  assert.equal((await directory.token(rt, hash))?.active, true);
  await store.updateToken("bob-1", { status: "disabled" }, by);
  await directory.refresh();
  assert.equal((await directory.token(rt, hash))?.active, false);
  await store.revokeToken("bob-1", by);
  await directory.refresh();
  assert.equal(await directory.token(rt, hash), undefined);
  directory.stop();
});

test("a user's credit is gateway.yaml's plus the ledger's; a top-up reaches the cache through the feed", async () => {
  const store = await storeWithBob();
  const directory = new AccountDirectory(store, { pollMs: 20 });
  await directory.start();
  const rt = runtime();
  assert.equal((await directory.user(rt, "alice"))?.creditNano, 10_000_000_000n);
  assert.equal((await directory.user(rt, "bob"))?.creditNano, 0n);
  assert.equal(await directory.user(rt, "nobody"), undefined);
  await store.addCredit({ user: "alice", amountNano: 2_500_000_000n, reason: "top-up" }, by);
  await store.addCredit({ user: "bob", amountNano: 7n, reason: "top-up" }, by);
  // Polling (not refresh) carries the change: wait for it as another instance would.
  const deadline = Date.now() + 2000;
  while ((await directory.user(rt, "alice"))?.creditNano !== 12_500_000_000n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.equal((await directory.user(rt, "alice"))?.creditNano, 12_500_000_000n);
  assert.equal((await directory.user(rt, "bob"))?.creditNano, 7n);
  await store.updateUser("bob", { status: "disabled" }, by);
  await directory.refresh();
  assert.equal((await directory.user(rt, "bob"))?.active, false);
  directory.stop();
});

test("a cached user follows a reload of gateway.yaml (its credit, its groups)", async () => {
  const directory = new AccountDirectory(new MemoryAccountStore());
  assert.equal((await directory.user(runtime(1), "alice"))?.creditNano, 10_000_000_000n);
  const reloaded = compileSource(yaml.replace("credit: 10", "credit: 3"), { path: "t.yaml", env: {}, generation: 2 }).runtime;
  const user = directory.user(reloaded, "alice");
  assert.ok(!(user instanceof Promise));
  assert.equal(user?.creditNano, 3_000_000_000n);
});

test("a load that began before a change is not cached (it may hold what the change replaced)", async () => {
  const inner = await storeWithBob();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow = withMethod(inner, "tokenByHash", async (hash: string) => {
    const found = await inner.tokenByHash(hash);
    await gate;
    return found;
  }, {});
  const directory = new AccountDirectory(slow);
  const rt = runtime();
  const loading = directory.token(rt, sha256Hex("sk-bob"));
  await inner.revokeToken("bob-1", by);
  directory.apply(await inner.changesSince(0, 100) as AccountChange[]);
  release();
  assert.equal((await loading)?.name, "bob-1", "the load in flight answers what it read");
  assert.equal(await directory.token(rt, sha256Hex("sk-bob")), undefined, "but its answer was not kept");
});
