// The keyed-store contract, run against every implementation: values read back, expire at
// their TTL, live on when a read refreshes them, and are listed by prefix. Each fixture
// brings its own storage; the suite only uses the KeyedStore interface.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { KeyedStore } from "../../src/state/interfaces.js";
import { eventually } from "../helpers/gateway.js";

export interface KeyedStoreFixture {
  readonly keyed: KeyedStore;
  /** Closes what is open and removes what the fixture made. */
  close(): Promise<void>;
}

async function listed(keyed: KeyedStore, prefix: string): Promise<[string, string][]> {
  const found: [string, string][] = [];
  for await (const [key, value] of keyed.entries(prefix)) found.push([key, value]);
  return found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function keyedStoreContract(name: string, open: () => Promise<KeyedStoreFixture>): void {
  describe(`KeyedStore contract: ${name}`, () => {
    let fx: KeyedStoreFixture;
    let keyed: KeyedStore;
    beforeEach(async () => {
      fx = await open();
      keyed = fx.keyed;
    });
    afterEach(() => fx.close());

    test("set, get, overwrite and delete", async () => {
      assert.equal(await keyed.get("job:a"), undefined);
      await keyed.set("job:a", '{"channel":"x"}', 60_000);
      assert.equal(await keyed.get("job:a"), '{"channel":"x"}');
      await keyed.set("job:a", "second", 60_000);
      assert.equal(await keyed.get("job:a"), "second");
      await keyed.delete("job:a");
      assert.equal(await keyed.get("job:a"), undefined);
      await keyed.delete("job:a"); // deleting what is gone is harmless
      const odd = "aff:tok\u0000model\u0000session ✓";
      await keyed.set(odd, '"ch"', 60_000);
      assert.equal(await keyed.get(odd), '"ch"');
    });

    test("setIfAbsent: one of many concurrent claims wins; a held key is not overwritten; an expired one is free again", async () => {
      const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => keyed.setIfAbsent("claim:p1", `holder-${i}`, 60_000)));
      assert.equal(wins.filter(Boolean).length, 1);
      const holder = await keyed.get("claim:p1");
      assert.equal(holder, `holder-${wins.indexOf(true)}`);
      assert.equal(await keyed.setIfAbsent("claim:p1", "late", 60_000), false);
      assert.equal(await keyed.get("claim:p1"), holder);
      assert.equal(await keyed.setIfAbsent("claim:short", "a", 80), true);
      await eventually(async () => (await keyed.get("claim:short")) === undefined, 3000, "the claim's TTL to pass");
      assert.equal(await keyed.setIfAbsent("claim:short", "b", 60_000), true);
      assert.equal(await keyed.get("claim:short"), "b");
    });

    test("a value expires at its TTL; another with a longer TTL lives on", async () => {
      await keyed.set("health:short", "1", 80);
      await keyed.set("health:long", "2", 60_000);
      assert.equal(await keyed.get("health:short"), "1");
      await eventually(async () => (await keyed.get("health:short")) === undefined, 3000, "the short TTL to pass");
      assert.equal(await keyed.get("health:long"), "2");
      assert.deepEqual(await listed(keyed, "health:"), [["health:long", "2"]], "an expired key is not listed");
    });

    test("a read with refreshTtlMs restarts the TTL; a plain read does not", async () => {
      await keyed.set("aff:refreshed", "r", 150);
      await keyed.set("aff:plain", "p", 150);
      assert.equal(await keyed.get("aff:refreshed", { refreshTtlMs: 60_000 }), "r");
      assert.equal(await keyed.get("aff:plain"), "p");
      await eventually(async () => (await keyed.get("aff:plain")) === undefined, 3000, "the plain key to expire");
      assert.equal(await keyed.get("aff:refreshed"), "r");
      assert.equal(await keyed.get("aff:missing", { refreshTtlMs: 60_000 }), undefined, "refreshing nothing creates nothing");
    });

    test("overwriting sets the new TTL", async () => {
      await keyed.set("job:x", "old", 60_000);
      await keyed.set("job:x", "new", 80);
      await eventually(async () => (await keyed.get("job:x")) === undefined, 3000, "the new TTL to pass");
    });

    test("entries lists the live keys with a prefix, and only those", async () => {
      await keyed.set("job:1", "a", 60_000);
      await keyed.set("job:2", "b", 60_000);
      await keyed.set("jobend:1", "completed", 60_000);
      await keyed.set("aff:1", "c", 60_000);
      await keyed.set("job:3", "gone", 60_000);
      await keyed.delete("job:3");
      assert.deepEqual(await listed(keyed, "job:"), [["job:1", "a"], ["job:2", "b"]]);
      assert.deepEqual(await listed(keyed, "aff:"), [["aff:1", "c"]]);
      assert.deepEqual(await listed(keyed, "nothing:"), []);
    });

    test("many keys are listed whole", async () => {
      await Promise.all(Array.from({ length: 500 }, (_, i) => keyed.set(`job:${i}`, String(i), 60_000)));
      const all = await listed(keyed, "job:");
      assert.equal(all.length, 500);
      assert.equal(new Set(all.map(([, v]) => v)).size, 500);
    });
  });
}
