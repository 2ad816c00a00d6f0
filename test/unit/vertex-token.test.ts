// Kind vertex's service-account tokens against the fake token endpoint (real HTTP, a JWT
// it verifies), on a clock the test moves: kept until the refresh window, then minted in
// the background while the token in hand serves; a refresh that fails keeps it until its
// last minute and is not retried on every call; past that, the failure is the caller's.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeVertex, type FakeVertex } from "../helpers/fake-vertex.js";
import { eventually } from "../helpers/gateway.js";
import { CredentialFailure } from "../../src/providers/kind.js";
import { ServiceAccountTokens } from "../../src/providers/vertex/token.js";
import { closedPort } from "../integration/support.js";
import { writeFileSync, readFileSync } from "node:fs";

let fake: FakeVertex;
before(async () => { fake = await startFakeVertex({ project: "p", locations: ["global"], tokenLifetimeS: 3600 }); });
after(async () => { await fake?.close(); });

test("kept, refreshed early in the background, a failed early refresh backs off, then fails", async () => {
  let offset = 0;
  const tokens = new ServiceAccountTokens({ clock: () => Date.now() + offset });
  const first = await tokens.token(fake.keyFile);
  assert.equal(fake.mints.length, 1);
  assert.equal(first, fake.mints[0].token);
  offset = 50 * 60_000; // 10 min before expiry: not yet refreshed
  assert.equal(await tokens.token(fake.keyFile), first);
  assert.equal(fake.mints.length, 1);

  offset = 57 * 60_000; // 3 min before expiry: the old token now, a new one minted meanwhile
  assert.equal(await tokens.token(fake.keyFile), first);
  await eventually(() => fake.mints.length === 2, 5000, "the background mint");
  await eventually(async () => (await tokens.token(fake.keyFile)) === fake.mints[1].token, 5000, "the new token in use");

  // The new token's refresh window, with the token endpoint refusing.
  fake.refuseTokens = true;
  offset = 57 * 60_000 + 57 * 60_000;
  const second = fake.mints[1].token;
  assert.equal(await tokens.token(fake.keyFile), second);
  await eventually(() => fake.refusals.length === 1, 5000, "the refused background mint");
  await eventually(async () => (await tokens.token(fake.keyFile)) === second && fake.refusals.length === 1, 5000, "the held token, no new mint");
  // Its last minute: no longer sent; the refusal is the caller's.
  offset = 57 * 60_000 + 59.5 * 60_000;
  await assert.rejects(tokens.token(fake.keyFile), (err: unknown) => err instanceof CredentialFailure && err.fault === "auth");
  assert.equal(fake.refusals.length, 2);
  fake.refuseTokens = false;
});

test("a token endpoint that does not answer is unreachable, not the key's fault; a missing file is", async () => {
  const down = `${fake.keyFile}.down.json`;
  writeFileSync(down, JSON.stringify({ ...JSON.parse(readFileSync(fake.keyFile, "utf8")), token_uri: `http://127.0.0.1:${await closedPort()}/token` }));
  const tokens = new ServiceAccountTokens();
  await assert.rejects(tokens.token(down), (err: unknown) => err instanceof CredentialFailure && err.fault === "unreachable");
  await assert.rejects(tokens.token(`${fake.keyFile}.missing`), (err: unknown) => err instanceof CredentialFailure && err.fault === "auth" && /cannot be read/.test(err.message));
});

test("one mint for concurrent callers; files beyond the bound are evicted, least recently used first", async () => {
  const tokens = new ServiceAccountTokens({ maxFiles: 1 });
  const before = fake.mints.length;
  const all = await Promise.all([1, 2, 3, 4, 5].map(() => tokens.token(fake.keyFile)));
  assert.equal(new Set(all).size, 1);
  assert.equal(fake.mints.length, before + 1);
  // Another file evicts the first: its token is minted again.
  const copy = `${fake.keyFile}.copy.json`;
  writeFileSync(copy, readFileSync(fake.keyFile));
  await tokens.token(copy);
  await tokens.token(fake.keyFile);
  assert.equal(fake.mints.length, before + 3);
});
