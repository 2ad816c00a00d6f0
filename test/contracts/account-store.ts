// The accounts store contract (src/accounts/store.ts), run against every implementation:
// users and tokens read back as written, lists page by name bytewise, every documented
// error is thrown, credit sums exactly (beyond 2^53 nano), an idempotency key credits once,
// a code redeems once whatever the race, and every change writes one audit record and one
// change-feed row. Each fixture brings its own storage; the suite only uses AccountStore.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { formatNano } from "../../src/billing/cost.js";
import { auditView } from "../../src/accounts/records.js";
import {
  IdempotencyMismatch, KeyTaken, NameTaken, NotFound, VersionConflict,
  type AccountStore, type AuditRecord, type CreditEntry, type NewToken, type StoredToken, type StoredUser,
} from "../../src/accounts/store.js";

export interface AccountStoreFixture {
  /** A store on fresh, empty storage. */
  readonly store: AccountStore;
  /** Another store object on the same storage (what a second instance or a restarted
   * gateway sees); absent when the store does not outlive its object. The fixture owns
   * what it returns: close() closes it. */
  readonly reopen?: () => Promise<AccountStore>;
  /** Closes every store it opened and removes what the fixture made. */
  close(): Promise<void>;
}

const admin = { actor: "admin:ops" };
/** 2^53 + 1: a Number cannot hold it, so money that went through a float shows. */
const BIG = 9_007_199_254_740_993n;
/** sha256-shaped hex (64 characters) distinct per label. */
const hash = (label: string): string => Buffer.from(label).toString("hex").padEnd(64, "0").slice(0, 64);
const HOUR = 3_600_000;

/** The error a promise rejects with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  assert.fail("expected a rejection");
}

/** @param reopens the fixture's stores outlive their object (`reopen`): the tests across two
 * store objects and across a reopen are registered (a store in memory has none to run) */
export function accountStoreContract(name: string, open: () => Promise<AccountStoreFixture>, { reopens = false } = {}): void {
  // Tests that need a second store object on the same storage exist only where there is one.
  const durableTest: (title: string, fn: () => Promise<void>) => void = reopens ? (title, fn) => void test(title, fn) : () => {};
  describe(`AccountStore contract: ${name}`, () => {
    let fx: AccountStoreFixture;
    let store: AccountStore;
    beforeEach(async () => {
      fx = await open();
      store = fx.store;
    });
    afterEach(() => fx.close());

    const newToken = (tokenName: string, user = "alice", extra: Partial<NewToken> = {}): NewToken =>
      ({ name: tokenName, keyHash: hash(`key-${tokenName}`), user, group: "default", ...extra });
    const allAudit = async (): Promise<readonly AuditRecord[]> => (await store.audit({ limit: 1000 })).items;

    describe("users", () => {
      test("a created user reads back as returned, with defaults, version 1", async () => {
        const before = Date.now();
        const created = await store.createUser({ name: "alice" }, admin);
        assert.deepEqual(created, { name: "alice", status: "active", groups: [], createdAt: created.createdAt, updatedAt: created.createdAt, version: 1 });
        assert.equal(typeof created.createdAt, "number");
        assert.ok(created.createdAt >= before - 1000 && created.createdAt <= Date.now() + 1000, "createdAt is epoch ms");
        assert.deepEqual(await store.user("alice"), created);
        const full = await store.createUser({ name: "bob", status: "disabled", groups: ["default", "video"], note: "bob@example.com" }, admin);
        assert.deepEqual(full, { name: "bob", status: "disabled", groups: ["default", "video"], note: "bob@example.com", createdAt: full.createdAt, updatedAt: full.createdAt, version: 1 });
        assert.deepEqual(await store.user("bob"), full);
        assert.equal(await store.user("carol"), undefined);
      });

      test("an opening credit is written with the user, in one step; a taken name adds no credit", async () => {
        await store.createUser({ name: "alice", openingCredit: { amountNano: BIG, reason: "opening grant" } }, admin);
        assert.equal(await store.creditOf("alice"), BIG);
        const [entry] = (await store.creditEntries("alice", {})).items;
        assert.deepEqual([entry.kind, entry.reason, entry.actor, entry.amountNano], ["grant", "opening grant", admin.actor, BIG]);
        assert.ok((await rejection(store.createUser({ name: "alice", openingCredit: { amountNano: 5n, reason: "again" } }, admin))) instanceof NameTaken);
        assert.equal(await store.creditOf("alice"), BIG, "the refused creation credited nothing");
        const actions = (await store.audit({ target: "alice" })).items.map((r) => r.action).reverse();
        assert.deepEqual(actions, ["user.create", "credit.add"]);
      });

      test("takenNames: which names the store holds, users and tokens apart, revoked tokens too, in batches", async () => {
        await store.createUser({ name: "alice" }, admin);
        await store.createUser({ name: "bob" }, admin);
        await store.createToken(newToken("t1", "alice"), admin);
        await store.createToken(newToken("t2", "alice"), admin);
        await store.revokeToken("t2", admin);
        assert.deepEqual((await store.takenNames("user", ["bob", "carol", "alice", "t1"])).sort(), ["alice", "bob"]);
        assert.deepEqual((await store.takenNames("token", ["t1", "t2", "t3", "alice"])).sort(), ["t1", "t2"]);
        assert.deepEqual(await store.takenNames("user", []), []);
        const many = Array.from({ length: 1200 }, (_, i) => `nobody-${i}`);
        assert.deepEqual(await store.takenNames("user", [...many, "bob"]), ["bob"], "past one batch");
      });

      test("a taken name is NameTaken and changes nothing", async () => {
        const first = await store.createUser({ name: "alice", note: "first" }, admin);
        const error = await rejection(store.createUser({ name: "alice", note: "second" }, admin));
        assert.ok(error instanceof NameTaken, String(error));
        assert.equal(error.kind, "user");
        assert.equal(error.resource, "alice");
        assert.equal(error.where, "store");
        assert.deepEqual(await store.user("alice"), first);
        assert.equal((await allAudit()).length, 1);
      });

      test("20 concurrent creations of one name: exactly one succeeds", async () => {
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.createUser({ name: "alice", note: `n${i}` }, admin)));
        assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
        for (const r of results) if (r.status === "rejected") assert.ok(r.reason instanceof NameTaken, String(r.reason));
        assert.equal((await allAudit()).length, 1);
      });

      test("a patch changes what it names, null removes the note, each change adds a version", async () => {
        const created = await store.createUser({ name: "alice", groups: ["default"], note: "hello" }, admin);
        const disabled = await store.updateUser("alice", { status: "disabled" }, admin);
        assert.deepEqual(disabled, { ...created, status: "disabled", updatedAt: disabled.updatedAt, version: 2 });
        assert.ok(disabled.updatedAt >= created.updatedAt);
        const regrouped = await store.updateUser("alice", { groups: ["video", "default"], note: null }, admin, 2);
        assert.deepEqual(regrouped, { name: "alice", status: "disabled", groups: ["video", "default"], createdAt: created.createdAt, updatedAt: regrouped.updatedAt, version: 3 });
        assert.ok(!("note" in regrouped), "null removes the note");
        assert.deepEqual(await store.user("alice"), regrouped);
        const noted = await store.updateUser("alice", { note: "again", status: "active" }, admin);
        assert.deepEqual(await store.user("alice"), noted);
        assert.equal(noted.note, "again");
        assert.equal(noted.version, 4);
      });

      test("updating an unknown user is NotFound; a stale version is VersionConflict and changes nothing", async () => {
        const missing = await rejection(store.updateUser("ghost", { status: "disabled" }, admin));
        assert.ok(missing instanceof NotFound, String(missing));
        assert.equal(missing.kind, "user");
        assert.equal(missing.resource, "ghost");
        await store.createUser({ name: "alice" }, admin);
        const v2 = await store.updateUser("alice", { note: "x" }, admin, 1);
        const stale = await rejection(store.updateUser("alice", { status: "disabled" }, admin, 1));
        assert.ok(stale instanceof VersionConflict, String(stale));
        assert.equal(stale.kind, "user");
        assert.equal(stale.resource, "alice");
        assert.equal(stale.expected, 1);
        assert.equal(stale.found, 2);
        assert.deepEqual(await store.user("alice"), v2);
        assert.equal((await allAudit()).length, 2);
      });

      test("20 concurrent updates naming the same version: exactly one lands", async () => {
        await store.createUser({ name: "alice" }, admin);
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.updateUser("alice", { note: `n${i}` }, admin, 1)));
        const landed = results.filter((r): r is PromiseFulfilledResult<StoredUser> => r.status === "fulfilled");
        assert.equal(landed.length, 1);
        for (const r of results) if (r.status === "rejected") assert.ok(r.reason instanceof VersionConflict, String(r.reason));
        assert.deepEqual(await store.user("alice"), landed[0].value);
        assert.equal((await store.user("alice"))!.version, 2);
      });

      test("listUsers: ordered by name bytewise, paged with next, filtered by prefix", async () => {
        // Bytewise: uppercase before lowercase, "b" before "bob", non-ASCII last; no locale.
        const names = ["bob", "Zed", "alice", "b", "ä-user", "a_b", "axb", "a%c", "carol"];
        for (const n of names) await store.createUser({ name: n }, admin);
        const sorted = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        assert.deepEqual(sorted, ["Zed", "a%c", "a_b", "alice", "axb", "b", "bob", "carol", "ä-user"]);
        const all = await store.listUsers({});
        assert.deepEqual(all.items.map((u) => u.name), sorted);
        assert.equal(all.next, undefined, "the last page has no next");
        assert.deepEqual(all.items.find((u) => u.name === "bob"), await store.user("bob"));

        const seen: string[] = [];
        let after: string | undefined;
        let pages = 0;
        do {
          const page = await store.listUsers({ limit: 4, ...(after === undefined ? {} : { after }) });
          assert.ok(page.items.length <= 4);
          seen.push(...page.items.map((u) => u.name));
          after = page.next;
          pages++;
        } while (after !== undefined);
        assert.deepEqual(seen, sorted);
        assert.equal(pages, 3);

        assert.deepEqual((await store.listUsers({ prefix: "b" })).items.map((u) => u.name), ["b", "bob"]);
        // A prefix is text, not a pattern: _ and % match only themselves.
        assert.deepEqual((await store.listUsers({ prefix: "a_" })).items.map((u) => u.name), ["a_b"]);
        assert.deepEqual((await store.listUsers({ prefix: "a%" })).items.map((u) => u.name), ["a%c"]);
        assert.deepEqual((await store.listUsers({ prefix: "ä" })).items.map((u) => u.name), ["ä-user"]);
        assert.deepEqual((await store.listUsers({ prefix: "nobody" })).items, []);
        const first = await store.listUsers({ prefix: "a", limit: 1 });
        assert.deepEqual(first.items.map((u) => u.name), ["a%c"]);
        assert.equal(first.next, "a%c");
        assert.deepEqual((await store.listUsers({ prefix: "a", after: first.next })).items.map((u) => u.name), ["a_b", "alice", "axb"]);
      });

      test("a list's page is 100 by default and when the limit is not 1..1000", async () => {
        for (let i = 0; i < 101; i++) await store.createUser({ name: `u${String(i).padStart(3, "0")}` }, admin);
        for (const limit of [undefined, 0, -5, 1.5]) {
          const page = await store.listUsers(limit === undefined ? {} : { limit });
          assert.equal(page.items.length, 100, `limit ${limit}`);
          assert.equal(page.next, "u099");
        }
        const rest = await store.listUsers({ after: "u099" });
        assert.deepEqual(rest.items.map((u) => u.name), ["u100"]);
        assert.equal(rest.next, undefined);
        assert.equal((await store.listUsers({ limit: 5000 })).items.length, 101);
        const exact = await store.listUsers({ limit: 101 });
        assert.equal(exact.items.length, 101);
        assert.equal(exact.next, undefined, "a page that holds the rest exactly is the last");
      });
    });

    describe("tokens", () => {
      test("a created token reads back by name and by hash, with every setting; money beyond 2^53 is exact", async () => {
        await store.createUser({ name: "alice" }, admin);
        const plain = await store.createToken(newToken("t1"), admin);
        assert.deepEqual(plain, { name: "t1", keyHash: hash("key-t1"), user: "alice", group: "default", status: "active", createdAt: plain.createdAt, updatedAt: plain.createdAt, version: 1 });
        assert.equal(typeof plain.createdAt, "number");
        const settings = { keyHint: "sk-gw-Ab3d…x9Qz", status: "disabled", expiresAt: Date.now() + HOUR, quotaNano: BIG, allowIps: ["10.0.0.0/8", "::1"], models: ["gpt-*", "claude-3"] } as const;
        const full = await store.createToken(newToken("t2", "alice", settings), admin);
        assert.deepEqual(full, { name: "t2", keyHash: hash("key-t2"), user: "alice", group: "default", ...settings, createdAt: full.createdAt, updatedAt: full.createdAt, version: 1 });
        assert.equal(typeof full.quotaNano, "bigint");
        assert.deepEqual(await store.token("t1"), plain);
        assert.deepEqual(await store.token("t2"), full);
        assert.deepEqual(await store.tokenByHash(hash("key-t2")), full);
        assert.equal(await store.token("t3"), undefined);
        assert.equal(await store.tokenByHash(hash("nothing")), undefined);
        const empty = await store.createToken(newToken("t3", "alice", { allowIps: [], models: [], quotaNano: 0n }), admin);
        assert.deepEqual(await store.token("t3"), empty);
        assert.deepEqual(empty.allowIps, []);
        assert.equal(empty.quotaNano, 0n);
      });

      test("NameTaken for a taken name, KeyTaken for a taken key hash, NotFound for an unknown user", async () => {
        await store.createUser({ name: "alice" }, admin);
        const t1 = await store.createToken(newToken("t1"), admin);
        const taken = await rejection(store.createToken(newToken("t1", "alice", { keyHash: hash("other") }), admin));
        assert.ok(taken instanceof NameTaken, String(taken));
        assert.equal(taken.kind, "token");
        assert.equal(taken.resource, "t1");
        assert.equal(taken.where, "store");
        const key = await rejection(store.createToken(newToken("t2", "alice", { keyHash: t1.keyHash }), admin));
        assert.ok(key instanceof KeyTaken, String(key));
        assert.ok(!key.message.includes("t1"), "KeyTaken never says which token holds the key");
        const user = await rejection(store.createToken(newToken("t3", "ghost"), admin));
        assert.ok(user instanceof NotFound, String(user));
        assert.equal(user.kind, "user");
        assert.equal(user.resource, "ghost");
        assert.equal(await store.token("t2"), undefined);
        assert.equal(await store.token("t3"), undefined);
        assert.deepEqual(await store.tokenByHash(t1.keyHash), t1);
        assert.equal((await allAudit()).length, 2);
      });

      test("a patch changes what it names and null removes a setting; key, user and name stay", async () => {
        await store.createUser({ name: "alice" }, admin);
        const created = await store.createToken(newToken("t1", "alice", { expiresAt: 1_900_000_000_000, quotaNano: 5n, allowIps: ["10.0.0.1"], models: ["gpt-4o"] }), admin);
        const patched = await store.updateToken("t1", { status: "disabled", group: "video", quotaNano: BIG * 3n, models: ["a", "b"] }, admin);
        assert.deepEqual(patched, { ...created, status: "disabled", group: "video", quotaNano: BIG * 3n, models: ["a", "b"], updatedAt: patched.updatedAt, version: 2 });
        assert.deepEqual(await store.token("t1"), patched);
        const cleared = await store.updateToken("t1", { expiresAt: null, quotaNano: null, allowIps: null, models: null, status: "active" }, admin, 2);
        assert.deepEqual(cleared, { name: "t1", keyHash: created.keyHash, user: "alice", group: "video", status: "active", createdAt: created.createdAt, updatedAt: cleared.updatedAt, version: 3 });
        for (const key of ["expiresAt", "quotaNano", "allowIps", "models"]) assert.ok(!(key in cleared), `${key} removed`);
        assert.deepEqual(await store.token("t1"), cleared);
        assert.deepEqual(await store.tokenByHash(created.keyHash), cleared);
        const again = await store.updateToken("t1", { expiresAt: 1_950_000_000_000, allowIps: [] }, admin);
        assert.deepEqual(await store.token("t1"), again);
        assert.equal(again.expiresAt, 1_950_000_000_000);
      });

      test("settings (a user's plan, limits and budgets; a token's limits and budgets) read back as written, replaced whole, removed by null", async () => {
        const settings = { plan: "pro", limits: { concurrent: 8, request_rate: { max: 60, per: "1m" } }, budgets: [{ amount: 20, per: "month" }, { tokens: 5_000_000, per: "5h" }] };
        const user = await store.createUser({ name: "alice", settings }, admin);
        assert.deepEqual(user.settings, settings);
        assert.deepEqual((await store.user("alice"))?.settings, settings);
        const token = await store.createToken(newToken("t1", "alice", { settings: { budgets: [{ amount: 5, per: "day" }] } }), admin);
        assert.deepEqual((await store.tokenByHash(token.keyHash))?.settings, { budgets: [{ amount: 5, per: "day" }] });
        const replaced = await store.updateUser("alice", { settings: { plan: "basic" } }, admin);
        assert.deepEqual(replaced.settings, { plan: "basic" }, "replaced whole");
        assert.deepEqual(await store.user("alice"), replaced);
        const untouched = await store.updateUser("alice", { note: "x" }, admin);
        assert.deepEqual(untouched.settings, { plan: "basic" }, "a patch without settings keeps them");
        const removed = await store.updateUser("alice", { settings: null }, admin);
        assert.ok(!("settings" in removed));
        assert.ok(!("settings" in (await store.user("alice"))!));
        const tokenCleared = await store.updateToken("t1", { settings: {} }, admin);
        assert.ok(!("settings" in tokenCleared), "settings that set nothing are none");
        assert.deepEqual(await store.token("t1"), tokenCleared);
      });

      test("updating an unknown token is NotFound; a stale version is VersionConflict and changes nothing", async () => {
        const missing = await rejection(store.updateToken("ghost", { status: "disabled" }, admin));
        assert.ok(missing instanceof NotFound, String(missing));
        assert.equal(missing.kind, "token");
        assert.equal(missing.resource, "ghost");
        await store.createUser({ name: "alice" }, admin);
        await store.createToken(newToken("t1"), admin);
        const v2 = await store.updateToken("t1", { group: "video" }, admin, 1);
        const stale = await rejection(store.updateToken("t1", { status: "disabled" }, admin, 1));
        assert.ok(stale instanceof VersionConflict, String(stale));
        assert.equal(stale.kind, "token");
        assert.equal(stale.resource, "t1");
        assert.equal(stale.expected, 1);
        assert.equal(stale.found, 2);
        assert.deepEqual(await store.token("t1"), v2);
      });

      test("revoking is final: the token stays readable and its name taken, updating it is NotFound, revoking again returns it unchanged", async () => {
        await store.createUser({ name: "alice" }, admin);
        const created = await store.createToken(newToken("t1"), admin);
        const revoked = await store.revokeToken("t1", admin);
        assert.deepEqual(revoked, { ...created, status: "revoked", updatedAt: revoked.updatedAt, version: 2 });
        assert.deepEqual(await store.token("t1"), revoked);
        assert.deepEqual(await store.tokenByHash(created.keyHash), revoked, "any status reads back by hash");
        const update = await rejection(store.updateToken("t1", { status: "active" }, admin));
        assert.ok(update instanceof NotFound, String(update));
        assert.equal(update.kind, "token");
        assert.deepEqual(await store.revokeToken("t1", admin), revoked, "revoking again returns it unchanged");
        assert.deepEqual(await store.token("t1"), revoked);
        const name = await rejection(store.createToken(newToken("t1", "alice", { keyHash: hash("fresh") }), admin));
        assert.ok(name instanceof NameTaken, String(name));
        const unknown = await rejection(store.revokeToken("ghost", admin));
        assert.ok(unknown instanceof NotFound, String(unknown));
        assert.equal(unknown.kind, "token");
        assert.deepEqual((await allAudit()).map((r) => r.action), ["token.revoke", "token.create", "user.create"], "revoking twice writes one record");
      });

      test("listTokens: ordered by name bytewise, paged, filtered by user and prefix", async () => {
        await store.createUser({ name: "alice" }, admin);
        await store.createUser({ name: "bob" }, admin);
        const owners: Record<string, string> = { "b-1": "bob", "a-2": "alice", "A-3": "alice", "a-1": "bob", "a_x": "alice", "c": "alice" };
        for (const [t, u] of Object.entries(owners)) await store.createToken(newToken(t, u), admin);
        await store.revokeToken("c", admin);
        const all = await store.listTokens({});
        assert.deepEqual(all.items.map((t) => t.name), ["A-3", "a-1", "a-2", "a_x", "b-1", "c"], "revoked tokens are listed too");
        assert.equal(all.next, undefined);
        assert.deepEqual(all.items.find((t) => t.name === "c"), await store.token("c"));
        assert.deepEqual((await store.listTokens({ user: "alice" })).items.map((t) => t.name), ["A-3", "a-2", "a_x", "c"]);
        assert.deepEqual((await store.listTokens({ user: "bob", prefix: "a" })).items.map((t) => t.name), ["a-1"]);
        assert.deepEqual((await store.listTokens({ prefix: "a_" })).items.map((t) => t.name), ["a_x"]);
        assert.deepEqual((await store.listTokens({ user: "nobody" })).items, []);
        const first = await store.listTokens({ user: "alice", limit: 2 });
        assert.deepEqual(first.items.map((t) => t.name), ["A-3", "a-2"]);
        assert.equal(first.next, "a-2");
        const second = await store.listTokens({ user: "alice", limit: 2, after: first.next });
        assert.deepEqual(second.items.map((t) => t.name), ["a_x", "c"]);
        assert.equal(second.next, undefined);
      });
    });

    describe("credit", () => {
      test("creditOf sums grants and adjustments exactly, beyond 2^53; 0n for none", async () => {
        assert.equal(await store.creditOf("alice"), 0n);
        const a = await store.addCredit({ user: "alice", amountNano: BIG, reason: "opening grant" }, admin);
        assert.equal(a.created, true);
        assert.deepEqual(a.entry, { id: a.entry.id, user: "alice", amountNano: BIG, kind: "grant", reason: "opening grant", actor: "admin:ops", at: a.entry.at });
        assert.equal(typeof a.entry.id, "number");
        assert.equal(typeof a.entry.at, "number");
        await store.addCredit({ user: "alice", amountNano: 123_456_789_012_345_678n, reason: "top-up" }, { actor: "cli:root" });
        const down = await store.addCredit({ user: "alice", amountNano: -7n, reason: "correction" }, admin);
        assert.equal(down.entry.kind, "adjustment");
        assert.equal(down.entry.amountNano, -7n);
        await store.addCredit({ user: "bob", amountNano: 5n, reason: "other user" }, admin);
        assert.equal(await store.creditOf("alice"), BIG + 123_456_789_012_345_678n - 7n);
        assert.equal(await store.creditOf("bob"), 5n);
        assert.equal(await store.creditOf("carol"), 0n);
        await store.addCredit({ user: "carol", amountNano: -BIG, reason: "debt" }, admin);
        assert.equal(await store.creditOf("carol"), -BIG, "a balance may go below zero");
      });

      test("an idempotency key credits once; the same key with another user or amount is IdempotencyMismatch", async () => {
        const first = await store.addCredit({ user: "alice", amountNano: BIG, reason: "payment", idempotencyKey: "pay_1" }, admin);
        assert.equal(first.created, true);
        assert.equal(first.entry.idempotencyKey, "pay_1");
        const again = await store.addCredit({ user: "alice", amountNano: BIG, reason: "payment (retried)", idempotencyKey: "pay_1" }, { actor: "other" });
        assert.equal(again.created, false);
        assert.deepEqual(again.entry, first.entry, "the first entry, as it was");
        for (const credit of [{ user: "alice", amountNano: BIG + 1n }, { user: "bob", amountNano: BIG }]) {
          const error = await rejection(store.addCredit({ ...credit, reason: "payment", idempotencyKey: "pay_1" }, admin));
          assert.ok(error instanceof IdempotencyMismatch, String(error));
          assert.equal(error.key, "pay_1");
        }
        assert.equal(await store.creditOf("alice"), BIG);
        assert.equal(await store.creditOf("bob"), 0n);
        const other = await store.addCredit({ user: "alice", amountNano: 1n, reason: "another payment", idempotencyKey: "pay_2" }, admin);
        assert.equal(other.created, true);
        assert.equal(await store.creditOf("alice"), BIG + 1n);
        assert.equal((await store.creditEntries("alice", {})).items.length, 2);
        assert.deepEqual((await allAudit()).map((r) => r.action), ["credit.add", "credit.add"], "a repeat writes nothing");
        assert.equal((await store.changesSince(0, 100)).length, 2);
      });

      test("50 concurrent credits with one idempotency key: one entry", async () => {
        const results = await Promise.all(Array.from({ length: 50 }, () =>
          store.addCredit({ user: "alice", amountNano: BIG, reason: "webhook", idempotencyKey: "evt_42" }, admin)));
        assert.equal(results.filter((r) => r.created).length, 1);
        for (const r of results) assert.deepEqual(r.entry, results[0].entry);
        assert.equal((await store.creditEntries("alice", {})).items.length, 1);
        assert.equal(await store.creditOf("alice"), BIG);
        assert.equal((await allAudit()).length, 1);
      });

      test("creditEntries: the user's entries newest first, paged with next", async () => {
        const made: CreditEntry[] = [];
        for (let i = 1; i <= 5; i++) {
          made.push((await store.addCredit({ user: "alice", amountNano: BIG * BigInt(i), reason: `r${i}`, ...(i === 2 ? { idempotencyKey: "k2" } : {}) }, admin)).entry);
          await store.addCredit({ user: "bob", amountNano: BigInt(i), reason: "bob's" }, admin);
        }
        for (let i = 1; i < made.length; i++) assert.ok(made[i].id > made[i - 1].id, "ids increase with insertion");
        const newest = [...made].reverse();
        const all = await store.creditEntries("alice", {});
        assert.deepEqual(all.items, newest, "entries read back as returned");
        assert.equal(all.next, undefined);
        const first = await store.creditEntries("alice", { limit: 2 });
        assert.deepEqual(first.items, newest.slice(0, 2));
        assert.equal(first.next, String(newest[1].id));
        const second = await store.creditEntries("alice", { limit: 2, before: Number(first.next) });
        assert.deepEqual(second.items, newest.slice(2, 4));
        const last = await store.creditEntries("alice", { limit: 2, before: Number(second.next) });
        assert.deepEqual(last.items, newest.slice(4));
        assert.equal(last.next, undefined);
        assert.deepEqual((await store.creditEntries("carol", {})).items, []);
        assert.equal((await store.creditEntries("bob", {})).items.length, 5);
      });
    });

    describe("redemption codes", () => {
      const now = Date.now();
      const batchOf = (batch: string, codes: readonly string[], amountNano = BIG, expiresAt = now + HOUR) =>
        ({ batch, amountNano, expiresAt, codeHashes: codes.map((c) => hash(`code-${c}`)) });

      test("a batch reads back; a taken batch name is NameTaken", async () => {
        const created = await store.createCodes(batchOf("promo", ["a", "b", "c"]), admin);
        assert.deepEqual(created, { batch: "promo", count: 3, amountNano: BIG, expiresAt: now + HOUR, redeemed: 0, createdAt: created.createdAt, actor: "admin:ops" });
        assert.equal(typeof created.createdAt, "number");
        assert.deepEqual(await store.codeBatch("promo"), created);
        assert.equal(await store.codeBatch("other"), undefined);
        const taken = await rejection(store.createCodes(batchOf("promo", ["d"]), admin));
        assert.ok(taken instanceof NameTaken, String(taken));
        assert.equal(taken.kind, "batch");
        assert.equal(taken.resource, "promo");
        assert.deepEqual(await store.codeBatch("promo"), created);
        assert.equal((await store.redeem(hash("code-d"), "alice", { actor: "token:t1" }, now)).ok, false, "the refused batch's codes were not kept");
      });

      test("listCodeBatches: name order bytewise, paged with next, filtered by prefix; redemptions counted, money exact", async () => {
        for (const b of ["promo-b", "Promo-z", "promo-a", "gift", "promo-a2"]) await store.createCodes(batchOf(b, [`${b}-1`, `${b}-2`]), admin);
        assert.equal((await store.redeem(hash("code-promo-a-1"), "alice", { actor: "token:t1" }, now)).ok, true);
        const all = await store.listCodeBatches({});
        assert.deepEqual(all.items.map((b) => b.batch), ["Promo-z", "gift", "promo-a", "promo-a2", "promo-b"]);
        assert.equal(all.next, undefined);
        const a = all.items[2];
        assert.deepEqual(a, { ...(await store.codeBatch("promo-a"))!, redeemed: 1 });
        assert.equal(a.amountNano, BIG);
        const first = await store.listCodeBatches({ prefix: "promo-", limit: 2 });
        assert.deepEqual([first.items.map((b) => b.batch), first.next], [["promo-a", "promo-a2"], "promo-a2"]);
        const rest = await store.listCodeBatches({ prefix: "promo-", limit: 2, after: first.next });
        assert.deepEqual([rest.items.map((b) => b.batch), rest.next], [["promo-b"], undefined]);
        assert.deepEqual((await store.listCodeBatches({ prefix: "none" })).items, []);
      });

      test("redeem: ok once into the user's credit, then redeemed; unknown and expired codes credit nothing", async () => {
        await store.createCodes(batchOf("promo", ["a", "b", "c"]), admin);
        await store.createCodes(batchOf("old", ["x"], 5n, now - 1), admin);
        const by = { actor: "token:t1" };
        const ok = await store.redeem(hash("code-a"), "alice", by, now);
        assert.ok(ok.ok);
        assert.deepEqual(ok.entry, { id: ok.entry.id, user: "alice", amountNano: BIG, kind: "redeem", reason: ok.entry.reason, actor: "token:t1", at: ok.entry.at });
        assert.deepEqual((await store.creditEntries("alice", {})).items, [ok.entry]);
        assert.deepEqual(await store.redeem(hash("code-a"), "alice", by, now), { ok: false, reason: "redeemed" });
        assert.deepEqual(await store.redeem(hash("code-a"), "bob", by, now), { ok: false, reason: "redeemed" });
        assert.deepEqual(await store.redeem(hash("code-zzz"), "alice", by, now), { ok: false, reason: "unknown" });
        assert.deepEqual(await store.redeem(hash("code-x"), "alice", by, now), { ok: false, reason: "expired" });
        assert.deepEqual(await store.redeem(hash("code-b"), "alice", by, now + 2 * HOUR), { ok: false, reason: "expired" }, "expiry is judged at `now`");
        const second = await store.redeem(hash("code-b"), "bob", { actor: "token:t2" }, now + HOUR - 1);
        assert.ok(second.ok, "an expired attempt left the code usable before its expiry");
        assert.equal(await store.creditOf("alice"), BIG);
        assert.equal(await store.creditOf("bob"), BIG);
        assert.equal((await store.codeBatch("promo"))!.redeemed, 2);
        assert.equal((await store.codeBatch("old"))!.redeemed, 0);
        assert.deepEqual((await allAudit()).map((r) => r.action), ["code.redeem", "code.redeem", "codes.create", "codes.create"], "failed attempts write nothing");
      });

      test("200 concurrent redemptions of one code: exactly one ok and one credit entry", async () => {
        await store.createCodes(batchOf("promo", ["a"]), admin);
        const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
          store.redeem(hash("code-a"), i % 2 ? "alice" : "bob", { actor: `token:t${i}` }, now)));
        assert.equal(results.filter((r) => r.ok).length, 1);
        for (const r of results) if (!r.ok) assert.equal(r.reason, "redeemed");
        const entries = [...(await store.creditEntries("alice", {})).items, ...(await store.creditEntries("bob", {})).items];
        assert.equal(entries.length, 1);
        assert.equal((await store.creditOf("alice")) + (await store.creditOf("bob")), BIG);
        assert.equal((await store.codeBatch("promo"))!.redeemed, 1);
        assert.equal((await allAudit()).filter((r) => r.action === "code.redeem").length, 1);
      });

      durableTest("200 concurrent redemptions of one code across two store objects on the same storage: exactly one ok", async () => {
        const other = await fx.reopen!();
        await store.createCodes(batchOf("promo", ["a"]), admin);
        const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
          (i % 2 ? store : other).redeem(hash("code-a"), "alice", { actor: `token:t${i}` }, now)));
        assert.equal(results.filter((r) => r.ok).length, 1);
        for (const r of results) if (!r.ok) assert.equal(r.reason, "redeemed");
        assert.equal((await store.creditEntries("alice", {})).items.length, 1);
        assert.equal(await other.creditOf("alice"), BIG);
        assert.equal((await other.codeBatch("promo"))!.redeemed, 1);
      });

      durableTest("50 concurrent idempotent credits across two store objects: one entry", async () => {
        const other = await fx.reopen!();
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
          (i % 2 ? store : other).addCredit({ user: "alice", amountNano: BIG, reason: "webhook", idempotencyKey: "evt_1" }, admin)));
        assert.equal(results.filter((r) => r.created).length, 1);
        for (const r of results) assert.deepEqual(r.entry, results[0].entry);
        assert.equal((await other.creditEntries("alice", {})).items.length, 1);
        assert.equal(await store.creditOf("alice"), BIG);
      });
    });

    describe("audit log", () => {
      test("every change writes one record: actor, action, target, before and after as the records' JSON views", async () => {
        const start = Date.now();
        const user = await store.createUser({ name: "alice", note: "n" }, admin);
        const user2 = await store.updateUser("alice", { groups: ["default"] }, { actor: "cli:root" });
        const token = await store.createToken(newToken("t1", "alice", { quotaNano: BIG, keyHint: "sk-gw-Ab…9Qz" }), admin);
        const token2 = await store.updateToken("t1", { quotaNano: BIG * 2n }, admin);
        const token3 = await store.revokeToken("t1", admin);
        const credit = await store.addCredit({ user: "alice", amountNano: BIG, reason: "grant", idempotencyKey: "k" }, admin);
        const batch = await store.createCodes({ batch: "promo", amountNano: BIG, expiresAt: start + HOUR, codeHashes: [hash("code-a")] }, admin);
        const redeemed = await store.redeem(hash("code-a"), "alice", { actor: "token:t9" }, start);
        assert.ok(redeemed.ok);

        const records = [...(await allAudit())].reverse();
        const expected = [
          { actor: "admin:ops", action: "user.create", target: "alice", after: user },
          { actor: "cli:root", action: "user.update", target: "alice", before: user, after: user2 },
          { actor: "admin:ops", action: "token.create", target: "t1", after: token },
          { actor: "admin:ops", action: "token.update", target: "t1", before: token, after: token2 },
          { actor: "admin:ops", action: "token.revoke", target: "t1", before: token2, after: token3 },
          { actor: "admin:ops", action: "credit.add", target: "alice", after: credit.entry },
          { actor: "admin:ops", action: "codes.create", target: "promo", after: batch },
          { actor: "token:t9", action: "code.redeem", target: "alice", after: redeemed.entry },
        ];
        assert.equal(records.length, expected.length);
        for (const [i, want] of expected.entries()) {
          const got = records[i];
          assert.equal(typeof got.id, "number");
          assert.ok(i === 0 || got.id > records[i - 1].id, "ids increase");
          assert.equal(typeof got.at, "number");
          assert.ok(got.at >= start - 1000 && got.at <= Date.now() + 1000, "at is epoch ms");
          assert.deepEqual(
            { actor: got.actor, action: got.action, target: got.target, before: got.before, after: got.after },
            { actor: want.actor, action: want.action, target: want.target, before: want.before === undefined ? undefined : auditView.of(want.before), after: auditView.of(want.after) },
            `record ${i}: ${want.action}`);
          if (want.before === undefined) assert.ok(!("before" in got), `${want.action} has no before`);
        }
        // Money as exact decimal strings; never a key hash or a code hash.
        assert.equal((records[3].after as { quotaNano: string }).quotaNano, formatNano(BIG * 2n));
        assert.equal((records[3].after as { quotaNano: string }).quotaNano, "18014398.509481986");
        assert.equal((records[5].after as { amountNano: string }).amountNano, "9007199.254740993");
        assert.equal((records[6].after as { amountNano: string }).amountNano, "9007199.254740993");
        const text = JSON.stringify(records);
        assert.ok(!text.includes(token.keyHash), "no key hash in the audit log");
        assert.ok(!text.includes("keyHash"), "no keyHash field in the audit log");
        assert.ok(!text.includes(hash("code-a")), "no code hash in the audit log");
        assert.doesNotThrow(() => JSON.parse(text));
      });

      test("failed changes and reads write nothing", async () => {
        await store.createUser({ name: "alice" }, admin);
        await store.createToken(newToken("t1"), admin);
        await Promise.allSettled([
          store.createUser({ name: "alice" }, admin),
          store.updateUser("ghost", {}, admin),
          store.updateUser("alice", { note: "x" }, admin, 7),
          store.createToken(newToken("t1"), admin),
          store.createToken(newToken("t2", "ghost"), admin),
          store.updateToken("t1", {}, admin, 9),
          store.revokeToken("ghost", admin),
          store.redeem(hash("code-none"), "alice", admin, Date.now()),
        ]);
        await store.user("alice");
        await store.listTokens({});
        assert.equal((await allAudit()).length, 2);
        assert.equal((await store.changesSince(0, 100)).length, 2);
      });

      test("filters by target and actor, newest first, paged with next", async () => {
        await store.createUser({ name: "alice" }, admin);
        await store.createUser({ name: "bob" }, { actor: "cli:root" });
        for (let i = 0; i < 4; i++) await store.updateUser("alice", { note: `n${i}` }, i % 2 ? admin : { actor: "cli:root" });
        const all = await allAudit();
        assert.equal(all.length, 6);
        for (let i = 1; i < all.length; i++) assert.ok(all[i].id < all[i - 1].id, "newest first");
        const alice = await store.audit({ target: "alice" });
        assert.deepEqual(alice.items.map((r) => r.action), ["user.update", "user.update", "user.update", "user.update", "user.create"]);
        assert.deepEqual(alice.items, all.filter((r) => r.target === "alice"));
        const root = await store.audit({ actor: "cli:root" });
        assert.deepEqual(root.items, all.filter((r) => r.actor === "cli:root"));
        assert.equal(root.items.length, 3);
        assert.deepEqual((await store.audit({ actor: "cli:root", target: "bob" })).items.map((r) => r.target), ["bob"]);
        assert.deepEqual((await store.audit({ target: "nobody" })).items, []);

        const first = await store.audit({ target: "alice", limit: 2 });
        assert.deepEqual(first.items, alice.items.slice(0, 2));
        assert.equal(first.next, String(alice.items[1].id));
        const second = await store.audit({ target: "alice", limit: 2, before: Number(first.next) });
        assert.deepEqual(second.items, alice.items.slice(2, 4));
        const third = await store.audit({ target: "alice", limit: 2, before: Number(second.next) });
        assert.deepEqual(third.items, alice.items.slice(4));
        assert.equal(third.next, undefined);
      });
    });

    describe("change feed", () => {
      test("each user and token change, credit and redemption adds one change naming it; token changes carry the key hash", async () => {
        const start = await store.latestChange();
        assert.equal(start, 0, "a fresh store has no changes");
        assert.deepEqual(await store.changesSince(0, 100), []);
        await store.createUser({ name: "alice" }, admin);
        await store.updateUser("alice", { note: "x" }, admin);
        const t = await store.createToken(newToken("t1"), admin);
        await store.updateToken("t1", { status: "disabled" }, admin);
        await store.revokeToken("t1", admin);
        await store.revokeToken("t1", admin); // unchanged: no change
        await store.addCredit({ user: "bob", amountNano: BIG, reason: "grant", idempotencyKey: "k" }, admin);
        await store.addCredit({ user: "bob", amountNano: BIG, reason: "grant", idempotencyKey: "k" }, admin); // a repeat: no change
        await store.createCodes({ batch: "promo", amountNano: 1n, expiresAt: Date.now() + HOUR, codeHashes: [hash("code-a")] }, admin);
        await store.redeem(hash("code-a"), "carol", { actor: "token:t1" }, Date.now());
        await store.redeem(hash("code-a"), "carol", { actor: "token:t1" }, Date.now()); // refused: no change

        const changes = await store.changesSince(start, 100);
        assert.deepEqual(changes.map(({ seq: _seq, ...c }) => c), [
          { kind: "user", name: "alice" },
          { kind: "user", name: "alice" },
          { kind: "token", name: "t1", keyHash: t.keyHash },
          { kind: "token", name: "t1", keyHash: t.keyHash },
          { kind: "token", name: "t1", keyHash: t.keyHash },
          { kind: "user", name: "bob" },
          { kind: "user", name: "carol" },
        ]);
        for (const [i, c] of changes.entries()) {
          assert.equal(typeof c.seq, "number");
          assert.ok(c.seq > (i === 0 ? start : changes[i - 1].seq), "seq increases");
        }
        assert.equal(await store.latestChange(), changes.at(-1)!.seq);
        assert.deepEqual(await store.changesSince(changes.at(-1)!.seq, 100), []);
      });

      test("changesSince honours its limit and resumes from a seq", async () => {
        for (const n of ["a", "b", "c", "d", "e"]) await store.createUser({ name: n }, admin);
        const all = await store.changesSince(0, 100);
        assert.equal(all.length, 5);
        const first = await store.changesSince(0, 2);
        assert.deepEqual(first, all.slice(0, 2));
        const rest = await store.changesSince(first[1].seq, 2);
        assert.deepEqual(rest, all.slice(2, 4));
        assert.deepEqual(await store.changesSince(rest[1].seq, 10), all.slice(4));
        assert.deepEqual(all.map((c) => c.name), ["a", "b", "c", "d", "e"]);
        const mid = await store.latestChange();
        await store.updateUser("c", { status: "disabled" }, admin);
        assert.deepEqual((await store.changesSince(mid, 10)).map((c) => c.name), ["c"]);
      });
    });

    describe("persistence and shared storage", () => {
      durableTest("everything reads back from a store reopened on the same storage", async () => {
        const user = await store.updateUser((await store.createUser({ name: "alice", groups: ["g"] }, admin)).name, { note: "n" }, admin);
        const token = await store.createToken(newToken("t1", "alice", { quotaNano: BIG, allowIps: ["10.0.0.0/8"], models: ["m*"], expiresAt: 1_900_000_000_000, keyHint: "h" }), admin);
        const revoked = await store.revokeToken((await store.createToken(newToken("t2"), admin)).name, admin);
        const credit = await store.addCredit({ user: "alice", amountNano: BIG, reason: "grant", idempotencyKey: "k1" }, admin);
        const now = Date.now();
        const batch = await store.createCodes({ batch: "promo", amountNano: BIG * 2n, expiresAt: now + HOUR, codeHashes: [hash("code-a"), hash("code-b")] }, admin);
        const redeemed = await store.redeem(hash("code-a"), "alice", { actor: "token:t1" }, now);
        assert.ok(redeemed.ok);
        const audit = await allAudit();
        const changes = await store.changesSince(0, 100);
        const latest = await store.latestChange();

        const again = await fx.reopen!();
        assert.deepEqual(await again.user("alice"), user);
        assert.deepEqual(await again.token("t1"), token);
        assert.deepEqual(await again.tokenByHash(token.keyHash), token);
        assert.deepEqual(await again.token("t2"), revoked);
        assert.deepEqual((await again.listTokens({})).items, [token, revoked]);
        assert.equal(await again.creditOf("alice"), BIG * 3n);
        assert.deepEqual((await again.creditEntries("alice", {})).items, [redeemed.entry, credit.entry]);
        assert.deepEqual(await again.codeBatch("promo"), { ...batch, redeemed: 1 });
        assert.deepEqual((await again.audit({ limit: 1000 })).items, audit);
        assert.deepEqual(await again.changesSince(0, 100), changes);
        assert.equal(await again.latestChange(), latest);

        // What the second object remembers and refuses holds for both.
        assert.deepEqual(await again.redeem(hash("code-a"), "bob", { actor: "token:x" }, now), { ok: false, reason: "redeemed" });
        assert.equal((await again.addCredit({ user: "alice", amountNano: BIG, reason: "retry", idempotencyKey: "k1" }, admin)).created, false);
        assert.ok((await rejection(again.createUser({ name: "alice" }, admin))) instanceof NameTaken);
        assert.ok((await rejection(again.createToken(newToken("t3", "alice", { keyHash: token.keyHash }), admin))) instanceof KeyTaken);
        assert.ok((await rejection(again.updateUser("alice", {}, admin, 1))) instanceof VersionConflict);
        assert.ok((await rejection(again.updateToken("t2", {}, admin))) instanceof NotFound);

        // A change through either object is seen by the other, and the feed is one sequence.
        const bob = await again.createUser({ name: "bob" }, admin);
        assert.deepEqual(await store.user("bob"), bob);
        const second = await again.redeem(hash("code-b"), "bob", { actor: "token:t1" }, now);
        assert.ok(second.ok);
        assert.equal(await store.creditOf("bob"), BIG * 2n);
        const feed = await store.changesSince(latest, 100);
        assert.deepEqual(feed.map((c) => [c.kind, c.name]), [["user", "bob"], ["user", "bob"]]);
        assert.equal(await again.latestChange(), feed.at(-1)!.seq);
        assert.ok(second.entry.id > redeemed.entry.id);
      });

      durableTest("a token read back has the shape the store wrote, whichever object wrote it", async () => {
        const other = await fx.reopen!();
        await other.createUser({ name: "alice" }, admin);
        const made: StoredToken = await other.createToken(newToken("t1", "alice", { quotaNano: 0n, allowIps: [], models: [] }), admin);
        assert.deepEqual(await store.token("t1"), made);
        const patched = await store.updateToken("t1", { quotaNano: null }, admin, 1);
        assert.deepEqual(await other.token("t1"), patched);
        assert.ok(!("quotaNano" in patched));
      });
    });
  });
}
