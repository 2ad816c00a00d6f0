// Writing an import's accounts (on the memory implementation of the accounts store): a
// run that stopped half-way is finished by the next, a user of the same name made by
// someone else is left alone with no credit or tokens, and a key already in use is named.

import { test } from "node:test";
import assert from "node:assert/strict";
import { MemoryAccountStore } from "../../src/accounts/memory-store.js";
import { sha256Hex } from "../../src/config/hash.js";
import { applyImport } from "../../src/import/new-api/apply.js";
import { existingAccounts } from "../../src/import/new-api/existing.js";
import { planImport } from "../../src/import/new-api/plan.js";
import type { NewApiData } from "../../src/import/new-api/records.js";

const user = (id: number, username: string, quota: number) => ({ id, username, email: "", status: 1, group: "default", quota, usedQuota: 0, deleted: false });
const token = (id: number, userId: number, key: string) => ({
  id, userId, key, name: "t", status: 1, expiredTime: -1, remainQuota: 0, unlimitedQuota: true, modelLimits: [], allowIps: [], group: "", deleted: false,
});
const data: NewApiData = {
  users: [user(1, "ann", 1_000_000), user(2, "ben", 500_000)],
  tokens: [token(1, 1, "a".repeat(48)), token(2, 2, "b".repeat(48)), token(3, 1, "c".repeat(48))],
  channels: [], abilities: [], options: new Map(),
};
const by = { actor: "test" };

test("a half-finished import is completed by the next run, crediting once", async () => {
  const store = new MemoryAccountStore();
  const plan = planImport(data);
  // As if the first run stopped after creating ann: no credit, no tokens yet.
  await store.createUser(plan.users[0].user, by);
  const first = await applyImport(plan, store);
  assert.deepEqual([first.usersCreated, first.usersThere, first.creditsAdded, first.tokensCreated.length], [["ben"], ["ann"], 2, 3]);
  assert.equal(await store.creditOf("ann"), 2_000_000_000n);
  const second = await applyImport(plan, store);
  assert.deepEqual([second.usersCreated, second.creditsAdded, second.creditsThere, second.tokensThere.length], [[], 0, 2, 3]);
  assert.equal(await store.creditOf("ann"), 2_000_000_000n);
  assert.ok((await store.audit({})).items.filter((r) => r.actor !== "test").every((r) => r.actor === "import:new-api"));
});

test("a user of the same name not from new-api gets no credit and no tokens; a key in use is named", async () => {
  const store = new MemoryAccountStore();
  await store.createUser({ name: "ann", groups: ["default"], note: "made by hand" }, by);
  await store.createUser({ name: "zed", groups: ["default"] }, by);
  await store.createToken({ name: "zed-1", keyHash: sha256Hex(`sk-${"b".repeat(48)}`), user: "zed", group: "default" }, by);
  const plan = planImport(data);
  const existing = await existingAccounts(plan, store);
  assert.deepEqual([[...existing.foreignUsers], [...existing.keysTaken]], [["ann"], ["ben-t-2"]]);
  const outcome = await applyImport(plan, store);
  assert.deepEqual(outcome.usersForeign, ["ann"]);
  assert.deepEqual(outcome.tokensKeyTaken, ["ben-t-2"]);
  assert.deepEqual(outcome.tokensCreated, []);
  assert.equal(await store.creditOf("ann"), 0n);
  assert.equal(await store.creditOf("ben"), 1_000_000_000n);
});
