// The shared token holder on a clock the test moves, with mints the test counts and
// answers: a token kept until its refresh window, then minted in the background while the
// one in hand serves; one mint for concurrent callers; a failed early refresh keeps the
// token until its last use and backs off; past that the failure is the caller's; the
// least recently used credential is evicted past the bound.

import { test } from "node:test";
import assert from "node:assert/strict";
import { TokenHolder, type Mint, type MintedToken } from "../../src/providers/token-holder.js";
import { eventually } from "../helpers/gateway.js";

const HOUR = 3_600_000;

/** Mints "<id>-1", "<id>-2", … living `lifetimeMs`; fails while `failing` is set. */
function minter(id: string, lifetimeMs = HOUR) {
  const state = { calls: 0, failing: false };
  const mint: Mint = async (): Promise<MintedToken> => {
    const n = ++state.calls;
    if (state.failing) throw new Error(`refused ${id}`);
    return { value: `${id}-${n}`, lifetimeMs };
  };
  return { state, mint };
}

test("kept until the refresh window, then refreshed in the background while the old token serves", async () => {
  let now = 1_000_000;
  const holder = new TokenHolder({ clock: () => now });
  const { state, mint } = minter("a");
  assert.equal(await holder.token("a", mint), "a-1");
  now += 50 * 60_000; // 10 min before expiry: no refresh yet (5 min early at most)
  assert.equal(await holder.token("a", mint), "a-1");
  assert.equal(state.calls, 1);
  now += 7 * 60_000; // 3 min before expiry: the held one serves, a new one is minted
  assert.equal(await holder.token("a", mint), "a-1");
  await eventually(() => state.calls === 2, 2000, "the background mint");
  await eventually(async () => (await holder.token("a", mint)) === "a-2", 2000, "the new token in use");
  assert.equal(state.calls, 2);
});

test("a short-lived token is refreshed in its last quarter and not sent in its last tenth", async () => {
  let now = 0;
  const holder = new TokenHolder({ clock: () => now });
  const { state, mint } = minter("s", 4000);
  assert.equal(await holder.token("s", mint), "s-1");
  now = 2999;
  assert.equal(await holder.token("s", mint), "s-1");
  assert.equal(state.calls, 1);
  // Past 3/4 of its life, in the background: the held one still serves.
  now = 3000;
  assert.equal(await holder.token("s", mint), "s-1");
  await eventually(() => state.calls === 2, 2000, "the background mint");
  // The new one, dated from its mint at 3000: its last tenth starts at 6600; it is
  // minted anew (and waited for) from then.
  now = 6600;
  assert.equal(await holder.token("s", mint), "s-3");
  assert.equal(state.calls, 3);
});

test("one mint for concurrent callers, per credential", async () => {
  const holder = new TokenHolder();
  let calls = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const slow: Mint = async () => {
    calls++;
    await gate;
    return { value: "slow-1", lifetimeMs: HOUR };
  };
  const waiting = [1, 2, 3, 4, 5].map(() => holder.token("x", slow));
  release();
  assert.deepEqual(await Promise.all(waiting), ["slow-1", "slow-1", "slow-1", "slow-1", "slow-1"]);
  assert.equal(calls, 1);
  // Another credential has its own token.
  const other = minter("y");
  assert.equal(await holder.token("y", other.mint), "y-1");
  assert.equal(await holder.token("x", slow), "slow-1");
  assert.equal(calls, 1);
});

test("a failed early refresh keeps the token and backs off; past its last use the failure is the caller's", async () => {
  let now = 0;
  const holder = new TokenHolder({ clock: () => now });
  const { state, mint } = minter("f");
  assert.equal(await holder.token("f", mint), "f-1");
  state.failing = true;
  now = 57 * 60_000; // refresh window (from 55 min), before last use (59 min)
  assert.equal(await holder.token("f", mint), "f-1");
  await eventually(() => state.calls === 2, 2000, "the failed background mint");
  // Backing off: the next calls are served the held token without another mint.
  await eventually(async () => (await holder.token("f", mint)) === "f-1", 2000, "the held token");
  now += 1000;
  assert.equal(await holder.token("f", mint), "f-1");
  assert.equal(state.calls, 2, "no mint on every call after a failure");
  // After the back-off (at most 30 s), tried again in the background.
  now += 30_000;
  assert.equal(await holder.token("f", mint), "f-1");
  await eventually(() => state.calls === 3, 2000, "the retried background mint");
  // Its last minute: no longer sent; the mint's failure reaches the caller.
  now = 59.5 * 60_000;
  await assert.rejects(holder.token("f", mint), /refused f/);
  // Then a mint that works serves again.
  state.failing = false;
  assert.match(await holder.token("f", mint), /^f-\d+$/);
});

test("no token held and the mint fails: every call tries again and gets the failure", async () => {
  const holder = new TokenHolder();
  const { state, mint } = minter("n");
  state.failing = true;
  await assert.rejects(holder.token("n", mint), /refused n/);
  await assert.rejects(holder.token("n", mint), /refused n/);
  assert.equal(state.calls, 2);
});

test("credentials beyond the bound are evicted, least recently used first", async () => {
  const holder = new TokenHolder({ maxCredentials: 2 });
  const a = minter("a");
  const b = minter("b");
  const c = minter("c");
  await holder.token("a", a.mint);
  await holder.token("b", b.mint);
  await holder.token("a", a.mint); // a used last: b is the least recently used
  await holder.token("c", c.mint); // evicts b
  assert.equal(await holder.token("a", a.mint), "a-1");
  assert.equal(await holder.token("b", b.mint), "b-2", "b was evicted: minted again");
  assert.equal(a.state.calls, 1);
});
