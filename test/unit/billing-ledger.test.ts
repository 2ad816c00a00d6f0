import assert from "node:assert/strict";
import { test } from "node:test";
import { Ledger } from "../../src/billing/ledger.js";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { emptyUsage } from "../../src/protocols/usage.js";
import type { Token, User } from "../../src/runtime/types.js";
import { createMemoryStore } from "../../src/state/memory.js";
import type { UsageEntry } from "../../src/state/store.js";

const user = (creditNano: bigint): User => ({ name: "u", creditNano, groups: new Set(["default"]), active: true });
const token = (quotaNano?: bigint): Token => ({ name: "t", keyHash: "0".repeat(64), user: "u", group: "default", quotaNano, active: true });
let seq = 0;
const entry = (costNano: bigint, requestId = `r${seq++}`): UsageEntry => ({
  requestId, time: Date.now(), token: "t", user: "u", group: "default", model: "m", inboundProtocol: "chat-completions",
  usage: emptyUsage(), costNano, status: 200, durationMs: 1, estimated: false,
});

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return `${err.status} ${err.code}`;
  }
  return "ok";
}

test("reservations count against the balance until settled or released", () => {
  const ledger = new Ledger(createMemoryStore());
  const u = user(100n);
  const a = ledger.reserve(token(), u, 60n);
  assert.equal(code(() => ledger.reserve(token(), u, 60n)), "402 pre_deduction_failed");
  ledger.settle(a, entry(10n));
  assert.equal(ledger.spentByUser("u"), 10n);
  const b = ledger.reserve(token(), u, 90n); // 100 - 10 spent = 90 left
  ledger.release(b);
  ledger.release(b); // twice is harmless
  assert.equal(ledger.reservedByUser("u"), 0n);
});

test("the refusal states the remaining balance and the required pre-deduction", () => {
  const ledger = new Ledger(createMemoryStore());
  try {
    ledger.reserve(token(), user(1_000_000n), 2_500_000n);
    assert.fail("expected a refusal");
  } catch (err) {
    assert.match((err as Error).message, /remaining balance is 0\.001\b.*pre-deduction of 0\.0025\b/);
  }
});

test("token quota: exhausted is 401, not enough for the estimate is 402", () => {
  const ledger = new Ledger(createMemoryStore());
  const t = token(50n);
  ledger.settle(ledger.reserve(t, user(1000n), 10n), entry(30n));
  assert.equal(code(() => ledger.reserve(t, user(1000n), 30n)), "402 pre_deduction_failed");
  ledger.settle(undefined, entry(20n));
  assert.equal(code(() => ledger.reserve(t, user(1000n), 1n)), "401 token_quota_exhausted");
});

test("a user whose balance is used up gets insufficient_quota (402)", () => {
  const ledger = new Ledger(createMemoryStore());
  ledger.settle(undefined, entry(100n));
  assert.equal(code(() => ledger.checkNotExhausted(token(), user(100n))), "402 insufficient_quota");
  assert.equal(code(() => ledger.checkNotExhausted(token(), user(101n))), "ok");
});

test("many concurrent reservations against a small balance never overspend", async () => {
  const ledger = new Ledger(createMemoryStore());
  const u = user(1000n);
  let admitted = 0;
  await Promise.all(Array.from({ length: 200 }, async (_, i) => {
    await new Promise((r) => setImmediate(r));
    let r;
    try { r = ledger.reserve(token(), u, 30n); } catch { return; }
    admitted++;
    await new Promise((res) => setTimeout(res, i % 3));
    ledger.settle(r, entry(30n)); // the real cost equals the estimate: worst case
  }));
  assert.ok(ledger.spentByUser("u") <= 1000n, `spent ${ledger.spentByUser("u")}`);
  assert.equal(ledger.spentByUser("u"), BigInt(admitted) * 30n);
  assert.equal(admitted, 33);
});

test("a request id recorded twice is charged once in the store", () => {
  const store = createMemoryStore();
  const ledger = new Ledger(store);
  ledger.settle(undefined, entry(7n, "same"));
  ledger.settle(undefined, entry(7n, "same"));
  assert.equal(new Ledger(store).spentByToken("t"), 7n); // what a restart reads
});
