// Kind azure-openai end to end, against a fake Azure resource that refuses anything but
// Azure's own URLs, api-version and `api-key` header (with Azure's real error bodies):
// deployment URLs under an api-version (model_map names the deployment), the v1 API
// without one (and for the Responses API always), the OpenAI SDK plain and streamed
// (Azure's choiceless first chunk tolerated), an Anthropic SDK client converted, an Entra
// token key, key faults (a refused or forbidden key out, a rate-limited one kept), the
// operator's deployment and region headers never relayed, and the config's checks.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { compileSource } from "../../src/config/index.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { azureUsage, startFakeAzure, type AzureKeyFault, type FakeAzure } from "../helpers/fake-azure.js";
import { entryOf, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { TOKEN, config, rawRequest, type Obj } from "./support.js";

const KEY = "azure-key-SECRET-0001";
const KEY2 = "azure-key-SECRET-0002";
const ENTRA = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.entra-token";
const API_VERSION = "2024-10-21";
const DEPLOYMENT = "my-4o-mini";
const EMBED_DEPLOYMENT = "my-embed";

const models = {
  "gpt-4o-mini": { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
  "codex-mini": { endpoint: "responses", price: { input: 1.5, output: 6 } },
  "text-embedding-3-small": { endpoint: "embeddings", price: { input: 0.02 } },
};

describe("kind azure-openai", () => {
  const faults = new Map<string, AzureKeyFault>();
  let fake: FakeAzure;
  const open: TestGateway[] = [];

  before(async () => {
    fake = await startFakeAzure({ keys: [KEY, KEY2], tokens: [ENTRA], deployments: [DEPLOYMENT, EMBED_DEPLOYMENT], apiVersions: [API_VERSION], keyFaults: faults });
  });
  after(async () => {
    for (const gw of open) await gw.close();
    await fake.close();
    destroyAgents();
  });

  function azureChannel(extra: Obj = {}): Obj {
    return {
      name: "azure", kind: "azure-openai", base_url: fake.url, keys: [KEY], groups: ["default"],
      models: Object.keys(models), model_map: { "gpt-4o-mini": DEPLOYMENT, "codex-mini": DEPLOYMENT, "text-embedding-3-small": EMBED_DEPLOYMENT }, ...extra,
    };
  }

  async function gateway(channel: Obj): Promise<TestGateway> {
    const gw = await startTestGateway(config({ channels: [channel], models }));
    open.push(gw);
    return gw;
  }

  const openai = (gw: TestGateway) => new OpenAI({ apiKey: TOKEN, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  test("api_version: chat goes to the deployment URL with api-version and api-key, as the OpenAI SDK asked", async () => {
    const gw = await gateway(azureChannel({ api_version: API_VERSION }));
    const from = fake.received.length;
    const { data, response } = await openai(gw).chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }).withResponse();
    assert.equal(data.choices[0].message.content, "Hello from Azure.");
    assert.equal(data.usage?.prompt_tokens, azureUsage.prompt_tokens);
    const [r] = fake.received.slice(from);
    assert.equal(r.pathname, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
    assert.equal(r.apiVersion, API_VERSION);
    assert.equal(r.apiKey, KEY);
    assert.equal(r.headers.authorization, undefined, "the key goes as api-key only");
    // The operator's deployment, region and serving session stay with the gateway; the request id is relayed.
    assert.equal(response.headers.get("x-ms-deployment-name"), null);
    assert.equal(response.headers.get("x-ms-region"), null);
    assert.equal(response.headers.get("azureml-model-session"), null);
    assert.match(response.headers.get("apim-request-id") ?? "", /^0b8e3c2a-/);
    const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.equal(e.status, 200);
    assert.equal(e.upstreamModel, DEPLOYMENT);
    assert.deepEqual([e.usage.input, e.usage.output], [azureUsage.prompt_tokens, azureUsage.completion_tokens]);
    assert.ok(e.costNano > 0n);
  });

  test("api_version: a streamed chat through the OpenAI SDK, Azure's choiceless first chunk and all, billed from its usage", async () => {
    const gw = await gateway(azureChannel({ api_version: API_VERSION }));
    const from = fake.received.length;
    const { data: stream, response } = await openai(gw).chat.completions.create({
      model: "gpt-4o-mini", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }],
    }).withResponse();
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, "Hello from Azure.");
    assert.equal(usage?.completion_tokens, azureUsage.completion_tokens);
    const [r] = fake.received.slice(from);
    assert.equal(r.pathname, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
    assert.equal(r.apiVersion, API_VERSION);
    assert.equal(r.body.stream, true);
    const e = await entryOf(gw.store, response.headers.get("x-gateway-request-id")!);
    assert.deepEqual([e.usage.input, e.usage.output, e.estimated], [azureUsage.prompt_tokens, azureUsage.completion_tokens, false]);
  });

  test("api_version: embeddings go to their deployment URL; the Responses API to the v1 API, the deployment as the model", async () => {
    const gw = await gateway(azureChannel({ api_version: API_VERSION }));
    const client = openai(gw);
    const from = fake.received.length;
    const emb = await client.embeddings.create({ model: "text-embedding-3-small", input: "alpha", encoding_format: "float" });
    assert.deepEqual(emb.data[0].embedding, [0.25, -0.5]);
    const resp = await client.responses.create({ model: "codex-mini", input: "hi" });
    assert.equal(resp.output_text, "Hello from Azure.");
    const [e, r] = fake.received.slice(from);
    assert.deepEqual([e.pathname, e.apiVersion, e.apiKey], [`/openai/deployments/${EMBED_DEPLOYMENT}/embeddings`, API_VERSION, KEY]);
    assert.deepEqual([r.pathname, r.apiVersion, r.body.model, r.apiKey], ["/openai/v1/responses", null, DEPLOYMENT, KEY]);
  });

  test("without api_version: the v1 API, the deployment in the body; a base_url copied with /openai/v1 is not doubled", async () => {
    const gw = await gateway(azureChannel({ base_url: `${fake.url}/openai/v1/` }));
    const from = fake.received.length;
    const r1 = await openai(gw).chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    assert.equal(r1.choices[0].message.content, "Hello from Azure.");
    const [r] = fake.received.slice(from);
    assert.deepEqual([r.pathname, r.apiVersion, r.body.model, r.apiKey], ["/openai/v1/chat/completions", null, DEPLOYMENT, KEY]);
  });

  test("an Anthropic SDK client, converted: its messages become chat completions on the deployment, plain and streamed", async () => {
    const gw = await gateway(azureChannel({ api_version: API_VERSION }));
    const anthropic = new Anthropic({ apiKey: TOKEN, baseURL: gw.url, maxRetries: 0 });
    const from = fake.received.length;
    const msg = await anthropic.messages.create({ model: "gpt-4o-mini", max_tokens: 64, system: "Be brief.", messages: [{ role: "user", content: "hi" }] });
    assert.deepEqual(msg.content.map((b) => b.type === "text" ? b.text : b.type), ["Hello from Azure."]);
    assert.deepEqual([msg.usage.input_tokens, msg.usage.output_tokens], [azureUsage.prompt_tokens, azureUsage.completion_tokens]);
    const stream = anthropic.messages.stream({ model: "gpt-4o-mini", max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
    const final = await stream.finalMessage();
    assert.deepEqual(final.content.map((b) => b.type === "text" ? b.text : b.type), ["Hello from Azure."]);
    const [plain, streamed] = fake.received.slice(from);
    for (const r of [plain, streamed]) {
      assert.equal(r.pathname, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
      assert.deepEqual([r.apiVersion, r.apiKey], [API_VERSION, KEY]);
    }
    assert.deepEqual(plain.body.messages, [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }]);
    assert.equal(streamed.body.stream, true);
  });

  test("a key written bearer:<token> goes as an Entra ID bearer token, not as api-key", async () => {
    const gw = await gateway(azureChannel({ api_version: API_VERSION, keys: [`bearer:${ENTRA}`] }));
    const from = fake.received.length;
    const r1 = await openai(gw).chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    assert.equal(r1.choices[0].message.content, "Hello from Azure.");
    const [r] = fake.received.slice(from);
    assert.equal(r.headers.authorization, `Bearer ${ENTRA}`);
    assert.equal(r.headers["api-key"], undefined);
  });

  for (const fault of ["invalid_key", "forbidden"] as const) {
    test(`a ${fault === "invalid_key" ? "refused (401)" : "forbidden (403)"} key is taken out: the request is served on the next key, which serves the rest`, async () => {
      faults.clear();
      faults.set(KEY, fault);
      try {
        const gw = await gateway(azureChannel({ api_version: API_VERSION, keys: [KEY, KEY2] }));
        const from = fake.received.length;
        for (let i = 0; i < 4; i++) {
          const r = await openai(gw).chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
          assert.equal(r.choices[0].message.content, "Hello from Azure.");
        }
        const keys = fake.received.slice(from).map((r) => r.apiKey);
        // The faulty key was asked at most once, and never after its refusal.
        assert.ok(keys.filter((k) => k === KEY).length <= 1, `keys asked: ${keys.join(", ")}`);
        assert.equal(keys.filter((k) => k === KEY2).length, 4);
        const m = await rawRequest(`${gw.url}/metrics`);
        assert.ok(!m.text.includes("SECRET"), "/metrics never names a key");
      } finally {
        faults.clear();
      }
    });
  }

  test("Azure's 429 (a deployment's rate limit) leaves the key in rotation", async () => {
    faults.clear();
    faults.set(KEY, "rate_limited");
    try {
      const gw = await gateway(azureChannel({ api_version: API_VERSION }));
      const from = fake.received.length;
      const first = await rawRequest(`${gw.url}/v1/chat/completions`, {
        method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
      });
      assert.equal(first.status, 429);
      faults.clear();
      // Its only key stays in: the next request is served with it.
      const r = await openai(gw).chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
      assert.equal(r.choices[0].message.content, "Hello from Azure.");
      assert.ok(fake.received.slice(from).every((x) => x.apiKey === KEY));
    } finally {
      faults.clear();
    }
  });

  test("config: base_url is required, api_version is its one setting", () => {
    const compile = (channel: Obj) => () => compileSource(config({ channels: [channel], models }), { path: "t.yaml", env: {}, generation: 1 });
    const { base_url: _unused, ...noBase } = azureChannel();
    assert.throws(compile(noBase), /base_url is required for kind azure-openai/);
    assert.throws(compile(azureChannel({ region: "eastus" })), /region is not a setting of kind azure-openai/);
    assert.throws(compile(azureChannel({ api_version: "2024-10-21&x=1" })), /is not an api-version/);
    assert.doesNotThrow(compile(azureChannel({ api_version: API_VERSION })));
  });
});
