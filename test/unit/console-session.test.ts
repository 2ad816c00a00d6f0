// Console sessions apart from HTTP: the cookie's attributes (Secure only over TLS), reading
// the id back from a Cookie header, the CSRF comparison, and what the keyed store holds: the
// session under the id's hash, never the id, with its idle TTL.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ConsoleSessions, clearedCookie, csrfMatches, sessionCookie, sessionIdOf } from "../../src/admin/console/session.js";
import { sha256Hex } from "../../src/config/hash.js";
import { MemoryKeyedStore } from "../../src/state/memory-keyed.js";

const id = "a".repeat(43);

test("the cookie is HttpOnly, SameSite=Strict, scoped to /console, and Secure only over TLS", () => {
  assert.equal(sessionCookie(id, false), `gateway_console=${id}; HttpOnly; SameSite=Strict; Path=/console`);
  assert.equal(sessionCookie(id, true), `gateway_console=${id}; HttpOnly; SameSite=Strict; Path=/console; Secure`);
  assert.match(clearedCookie(true), /^gateway_console=; .*Max-Age=0; Secure$/);
});

test("the id is read from the Cookie header only in its own shape", () => {
  assert.equal(sessionIdOf(`theme=dark; gateway_console=${id}; x=1`), id);
  assert.equal(sessionIdOf(`gateway_console=${id.slice(1)}`), undefined);
  assert.equal(sessionIdOf(`gateway_console=${id.slice(1)}/`), undefined);
  assert.equal(sessionIdOf(`other_gateway_console=${id}`), undefined);
  assert.equal(sessionIdOf(undefined), undefined);
});

test("a session is stored under its id's hash, found by its cookie, and ended", async () => {
  const keyed = new MemoryKeyedStore();
  const sessions = new ConsoleSessions(keyed, 60_000);
  const made = await sessions.create({ role: "customer", name: "t1", keyHash: "f".repeat(64), scopes: [] }, 1000);
  assert.match(made.id, /^[A-Za-z0-9_-]{43}$/);
  const stored = [];
  for await (const entry of keyed.entries("console:session:")) stored.push(entry);
  assert.equal(stored.length, 1);
  assert.equal(stored[0][0], `console:session:${sha256Hex(made.id)}`);
  assert.ok(!stored[0][1].includes(made.id), "the store never holds the id");
  const found = await sessions.find({ cookie: `gateway_console=${made.id}` });
  assert.equal(found?.record.name, "t1");
  assert.ok(csrfMatches({ "x-csrf-token": made.record.csrf }, found!.record));
  assert.ok(!csrfMatches({ "x-csrf-token": made.record.csrf.slice(1) + "x" }, found!.record));
  assert.ok(!csrfMatches({}, found!.record));
  await sessions.end(made.id);
  assert.equal(await sessions.find({ cookie: `gateway_console=${made.id}` }), undefined);
});
