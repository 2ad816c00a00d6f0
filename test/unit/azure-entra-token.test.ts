// Kind azure-openai's Entra ID token mint against the fake Entra token endpoint (real
// HTTP): a token and its lifetime; how each failure counts (a refusal is the credential's
// fault: "auth"; no answer, a throttle, a server error or an unusable answer is
// "unreachable"), every message naming the tenant and client and never the secret.

import { after, before, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { CredentialFailure } from "../../src/providers/kind.js";
import { entraCredentialOf, entraKeyString, type EntraCredential } from "../../src/providers/azure-openai/entra-credential.js";
import { mintEntraToken } from "../../src/providers/azure-openai/entra-token.js";
import { startFakeEntra, type FakeEntra } from "../helpers/fake-entra.js";
import { closedPort } from "../integration/support.js";

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = "1b730954-1685-4b74-9bfd-dac224a7b894";
const SECRET = "Xy8Q~client-SECRET-value-0001";

let fake: FakeEntra;
let credential: EntraCredential;
before(async () => {
  fake = await startFakeEntra([{ tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET, expiresInS: 3599 }]);
  credential = { authorityHost: fake.url, tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET };
});
after(async () => { await fake?.close(); });
beforeEach(() => { fake.script = undefined; });

/** Asserts a mint fails with `fault`, its message matching `message` and holding no secret. */
async function failsWith(cred: EntraCredential, fault: "auth" | "unreachable", message: RegExp, timeoutMs?: number): Promise<void> {
  await assert.rejects(mintEntraToken(cred, timeoutMs), (err: unknown) => {
    assert.ok(err instanceof CredentialFailure, String(err));
    assert.equal(err.fault, fault, err.message);
    assert.match(err.message, message);
    assert.ok(!err.message.includes(cred.clientSecret), "the message holds no secret");
    assert.match(err.message, new RegExp(`client ${cred.clientId} of tenant ${cred.tenantId}`));
    return true;
  });
}

test("a token and its lifetime, from the client-credentials grant", async () => {
  const minted = await mintEntraToken(credential);
  assert.equal(minted.value, fake.mints.at(-1)?.token);
  assert.equal(minted.lifetimeMs, 3_599_000);
});

test("the key string round-trips; other strings are not credentials", () => {
  assert.deepEqual(entraCredentialOf(entraKeyString(credential)), credential);
  assert.equal(entraCredentialOf("0123456789abcdef0123456789abcdef"), undefined);
  assert.equal(entraCredentialOf("bearer:eyJ0"), undefined);
  assert.equal(entraCredentialOf('entra:["a","b"]'), undefined);
});

test("refusals are the credential's fault, with Entra's code and AADSTS number", async () => {
  await failsWith({ ...credential, clientSecret: "wrong-SECRET" }, "auth", /refused .*: 401 invalid_client \(AADSTS7000215\)$/);
  await failsWith({ ...credential, clientId: "00000000-0000-4000-8000-000000000000" }, "auth", /: 400 unauthorized_client \(AADSTS700016\)$/);
  await failsWith({ ...credential, tenantId: "contoso.onmicrosoft.com" }, "auth", /: 400 invalid_request \(AADSTS90002\)$/);
  fake.script = () => ({ status: 403, body: { error: "access_denied" } });
  await failsWith(credential, "auth", /: 403 access_denied$/);
});

test("no answer in time, a connection refused, a throttle, a server error: unreachable", async () => {
  fake.script = () => "hang";
  await failsWith(credential, "unreachable", /did not answer: no answer in time/, 300);
  fake.script = undefined;
  await failsWith({ ...credential, authorityHost: `http://127.0.0.1:${await closedPort()}` }, "unreachable", /did not answer: ECONNREFUSED/);
  for (const status of [429, 500, 503]) {
    fake.script = () => ({ status, body: { error: "temporarily_unavailable" } });
    await failsWith(credential, "unreachable", new RegExp(`answered ${status}$`));
  }
});

test("a 200 without a usable token is unreachable, not the credential's fault", async () => {
  for (const body of [
    { token_type: "Bearer", expires_in: 3599 },
    { token_type: "Bearer", expires_in: 0, access_token: "t" },
    { token_type: "pop", expires_in: 3599, access_token: "t" },
    ["not", "an", "object"],
  ]) {
    fake.script = () => ({ status: 200, body });
    await failsWith(credential, "unreachable", /without a usable access token/);
  }
  // expires_in as a string (v1 endpoints write it so) is read.
  fake.script = () => ({ status: 200, body: { token_type: "Bearer", expires_in: "3600", access_token: "t-string" } });
  assert.deepEqual(await mintEntraToken(credential), { value: "t-string", lifetimeMs: 3_600_000 });
});
