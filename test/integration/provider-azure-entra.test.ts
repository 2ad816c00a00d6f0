// Kind azure-openai with Microsoft Entra ID client credentials: the gateway mints tokens at
// a fake Entra token endpoint (which checks the tenant in its path and the form's grant,
// client, secret and scope, and issues tokens with a set lifetime) and sends them to a
// fake Azure resource that takes only current tokens (a stale one gets Azure's 401).
// Driven with the OpenAI SDK: a request served with a minted token, the token reused,
// refreshed before it expires; a refused credential out of rotation (the next key, then
// the next channel, serves; no secret reaches the client); a token endpoint that is down
// fails the channel over; config problems named without the secret.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { compileSource } from "../../src/config/index.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { startFakeAzure, type FakeAzure } from "../helpers/fake-azure.js";
import { COGNITIVE_SERVICES_SCOPE, startFakeEntra, type FakeEntra } from "../helpers/fake-entra.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, capturingSink, closedPort, config, rawRequest, type Obj } from "./support.js";

const KEY = "azure-key-SECRET-0001";
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = "1b730954-1685-4b74-9bfd-dac224a7b894";
const SECRET = "Xy8Q~client-SECRET-value-0001";
const SHORT_CLIENT = "5f1c1a5e-0000-4000-8000-00000000c0de";
const SHORT_SECRET = "Zz9Q~short-SECRET-value-0002";
const WRONG_SECRET = "Wr0ng~client-SECRET-value-9999";
const API_VERSION = "2024-10-21";
const DEPLOYMENT = "my-4o-mini";

/** Served by: the Entra channel; one whose tokens live 4 s; one whose credentials are
 * refused, with an api-key beside them; the refused credentials (priority, with the Entra
 * channel as backup; and alone); a token endpoint that is down (with the backup). */
const MODEL = "gpt-4o-mini";
const REFRESHED = "gpt-refreshed";
const MIXED = "gpt-mixed";
const REFUSED = "gpt-refused";
const REFUSED_ONLY = "gpt-refused-only";
const UNREACHABLE = "gpt-unreachable";
const ALL = [MODEL, REFRESHED, MIXED, REFUSED, REFUSED_ONLY, UNREACHABLE];

const price = { endpoint: "chat", price: { input: 0.15, output: 0.6 } };

describe("kind azure-openai with Entra ID client credentials", () => {
  let entra: FakeEntra;
  let azure: FakeAzure;
  let gw: TestGateway;
  let openai: OpenAI;
  const sink = capturingSink();

  function entraChannel(name: string, models: string[], credentials: Obj, extra: Obj = {}): Obj {
    return {
      name, kind: "azure-openai", base_url: azure.url, api_version: API_VERSION, groups: ["default"], models,
      model_map: Object.fromEntries(models.map((m) => [m, DEPLOYMENT])),
      credentials: { tenant_id: TENANT, client_id: CLIENT, client_secret: SECRET, authority_host: entra.url, ...credentials }, ...extra,
    };
  }

  before(async () => {
    entra = await startFakeEntra([
      { tenantId: TENANT, clientId: CLIENT, clientSecret: SECRET },
      { tenantId: TENANT, clientId: SHORT_CLIENT, clientSecret: SHORT_SECRET, expiresInS: 4 },
    ]);
    azure = await startFakeAzure({ keys: [KEY], acceptsToken: (t) => entra.valid(t), deployments: [DEPLOYMENT], apiVersions: [API_VERSION] });
    const down = `http://127.0.0.1:${await closedPort()}`;
    gw = await startTestGateway(config({
      server: { upstream_attempts: 3 },
      channels: [
        entraChannel("az-entra", [MODEL, REFUSED, UNREACHABLE], {}, { priority: 0 }),
        entraChannel("az-short", [REFRESHED], { client_id: SHORT_CLIENT, client_secret: SHORT_SECRET }),
        entraChannel("az-mixed", [MIXED], { client_secret: WRONG_SECRET }, { keys: [KEY] }),
        entraChannel("az-refused", [REFUSED, REFUSED_ONLY], { client_secret: WRONG_SECRET }, { priority: 20 }),
        entraChannel("az-down", [UNREACHABLE], { authority_host: down }, { priority: 20 }),
      ],
      models: Object.fromEntries(ALL.map((m) => [m, price])),
    }), { usage: sink });
    openai = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.close();
    await Promise.all([entra?.close(), azure?.close()]);
    destroyAgents();
  });

  beforeEach(async () => {
    await gw.forgetHealth();
  });

  const ask = (model: string) => openai.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }).withResponse();

  /** The usage record of a request, once the sink has it. */
  async function recordOf(requestId: string) {
    await eventually(() => sink.records.some((r) => r.id === requestId), 3000, `the record of ${requestId}`);
    return sink.records.find((r) => r.id === requestId)!;
  }

  const mintsOf = (clientId: string) => entra.mints.filter((m) => m.clientId === clientId);

  test("a request is served with a token minted by client credentials: the tenant's endpoint, the form, Bearer and no api-key", async () => {
    const from = azure.received.length;
    const tokenRequests = entra.received.length;
    const { data } = await ask(MODEL);
    assert.equal(data.choices[0].message.content, "Hello from Azure.");
    const [asked] = entra.received.slice(tokenRequests);
    assert.equal(asked.method, "POST");
    assert.equal(asked.tenant, TENANT);
    assert.equal(asked.path, `/${TENANT}/oauth2/v2.0/token`);
    assert.match(String(asked.headers["content-type"]), /^application\/x-www-form-urlencoded/);
    assert.deepEqual(Object.fromEntries(asked.form), {
      grant_type: "client_credentials", client_id: CLIENT, client_secret: SECRET, scope: COGNITIVE_SERVICES_SCOPE,
    });
    const [r] = azure.received.slice(from);
    assert.equal(r.pathname, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
    assert.equal(r.headers.authorization, `Bearer ${mintsOf(CLIENT)[0].token}`);
    assert.equal(r.headers["api-key"], undefined, "the credentials never go as api-key");
    assert.ok(!r.raw.toString("utf8").includes(SECRET));
  });

  test("the token is reused across requests, concurrent ones included: one mint", async () => {
    const from = azure.received.length;
    await Promise.all([ask(MODEL), ask(MODEL), ask(MODEL), ask(MODEL)]);
    await ask(MODEL);
    assert.equal(mintsOf(CLIENT).length, 1, "one token for the credential");
    const tokens = new Set(azure.received.slice(from).map((r) => r.headers.authorization));
    assert.deepEqual([...tokens], [`Bearer ${mintsOf(CLIENT)[0].token}`]);
  });

  test("a token is refreshed before it expires: the next is minted in the old one's last quarter, and every request is served", async () => {
    const from = azure.received.length;
    await ask(REFRESHED);
    const [first] = mintsOf(SHORT_CLIENT);
    assert.ok(first, "the first request minted a token");
    // Its refresh window (the last quarter of its 4 s): the next request starts a mint.
    await eventually(() => Date.now() >= first.issuedAt + 3100, 10_000, "the first token's refresh window");
    await ask(REFRESHED);
    await eventually(() => mintsOf(SHORT_CLIENT).length === 2, 5000, "the refreshed token");
    const second = mintsOf(SHORT_CLIENT)[1];
    assert.ok(second.issuedAt < first.expiresAt, "minted before the first token expired");
    await ask(REFRESHED);
    const sent = azure.received.slice(from).map((r) => r.headers.authorization);
    assert.equal(sent[0], `Bearer ${first.token}`);
    assert.equal(sent.at(-1), `Bearer ${second.token}`);
    assert.ok(sent.every((s) => s === `Bearer ${first.token}` || s === `Bearer ${second.token}`));
  });

  test("credentials the token endpoint refuses go out of rotation: the channel's api-key serves, and goes on serving", async () => {
    const refusals = entra.refusals.length;
    const from = azure.received.length;
    for (let i = 0; i < 3; i++) {
      const { data } = await ask(MIXED);
      assert.equal(data.choices[0].message.content, "Hello from Azure.");
    }
    assert.deepEqual(entra.refusals.slice(refusals), [{ error: "invalid_client", clientId: CLIENT }], "refused once, then out of rotation");
    const sent = azure.received.slice(from);
    assert.equal(sent.length, 3, "no model request went out without a token");
    assert.ok(sent.every((r) => r.apiKey === KEY && r.headers.authorization === undefined));
  });

  test("refused credentials fail the channel over; alone, the client gets the gateway's auth error and no secret", async () => {
    const refusals = entra.refusals.length;
    const { data, response } = await ask(REFUSED);
    assert.equal(data.choices[0].message.content, "Hello from Azure.");
    assert.ok(entra.refusals.length > refusals, "the refused credentials were tried first");
    const record = await recordOf(response.headers.get("x-gateway-request-id")!);
    assert.equal(record.channel, "az-entra");
    assert.equal(record.attempts, 2);

    const alone = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: REFUSED_ONLY, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(alone.status, 502);
    assert.equal(alone.json?.error?.code, "upstream_auth_failed");
    for (const secret of [WRONG_SECRET, SECRET]) {
      assert.ok(!alone.text.includes(secret), "no secret in the answer");
      assert.ok(!JSON.stringify(alone.headers).includes(secret), "no secret in its headers");
    }
    const metrics = await rawRequest(`${gw.url}/metrics`);
    assert.ok(!metrics.text.includes("SECRET"), "/metrics names no credential");
  });

  test("a token endpoint that does not answer fails the channel over", async () => {
    const { data, response } = await ask(UNREACHABLE);
    assert.equal(data.choices[0].message.content, "Hello from Azure.");
    const record = await recordOf(response.headers.get("x-gateway-request-id")!);
    assert.equal(record.channel, "az-entra");
    assert.equal(record.attempts, 2, "the channel whose token endpoint is down was tried first");
  });

  test("config: credentials from ${VAR} references; a missing client_secret or a bad field is named, never a secret", () => {
    const compile = (credentials: Obj, env: Record<string, string> = {}) => () => compileSource(config({
      channels: [{ name: "az", kind: "azure-openai", base_url: azure.url, groups: ["default"], models: [MODEL], credentials }],
      models: { [MODEL]: price },
    }), { path: "t.yaml", env, generation: 1 });
    const refs = { tenant_id: "${AZ_TENANT}", client_id: "${AZ_CLIENT}", client_secret: "${AZ_SECRET}" };
    const compiled = compile(refs, { AZ_TENANT: TENANT, AZ_CLIENT: CLIENT, AZ_SECRET: SECRET })();
    assert.equal(compiled.runtime.channels.get("az")?.keys.length, 1, "the credentials are the channel's one key");

    const failure = (credentials: Obj, env: Record<string, string> = {}): string => {
      try {
        compile(credentials, env)();
      } catch (err) {
        return (err as Error).message;
      }
      assert.fail("the config compiled");
    };
    const missing = failure({ ...refs, client_secret: "${AZ_SECRET:-}" }, { AZ_TENANT: TENANT, AZ_CLIENT: CLIENT });
    assert.match(missing, /credentials\.client_secret is required/);
    const badTenant = failure({ tenant_id: "a/b?x", client_id: CLIENT, client_secret: SECRET });
    assert.match(badTenant, /credentials\.tenant_id is not a tenant id/);
    assert.ok(!badTenant.includes(SECRET), "the problem does not show the secret");
    const badHost = failure({ tenant_id: TENANT, client_id: CLIENT, client_secret: SECRET, authority_host: "login.microsoftonline.com" });
    assert.match(badHost, /credentials\.authority_host "login\.microsoftonline\.com" is not an http\(s\) URL/);
    assert.ok(!badHost.includes(SECRET));
    const foreign = failure({ tenant_id: TENANT, client_id: CLIENT, client_secret: SECRET, access_key_id: "AKIA" });
    assert.match(foreign, /credentials\.access_key_id is not a credential of kind azure-openai/);
    assert.ok(!foreign.includes(SECRET));
  });
});
