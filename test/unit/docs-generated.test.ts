// The generated operator docs stay true to their sources: docs/configuration.md,
// docs/pricing.md, docs/errors.md, docs/conversion.md, docs/clients.md and the fixtures
// README's table of clients match what `npm run docs` would write, every recorded client has a version, every schema key has a description,
// every error code has advice, the defaults the reference shows are the compiler's, a
// price's keys are documented once, and pricing.md's worked examples add up to the totals
// computed here by hand.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DEFAULTS, gatewaySchemaPath } from "../../src/config/index.js";
import { errorAdvice } from "../../src/errors/advice.js";
import { errors } from "../../src/errors/catalogue.js";
import { generatedDocs, staleDocs } from "../../scripts/gen-docs.js";
import { adviceGaps } from "../../scripts/docs/error-reference.js";
import { exercised, manifestGaps, renderClientMatrix } from "../../scripts/docs/client-matrix.js";
import { CLIENT_FIXTURES_DIR, readAllFixtures } from "../helpers/client-fixture-files.js";
import { prose } from "../../scripts/docs/config-reference.js";
import { schemaKeys, undocumentedKeys, type SchemaNode } from "../../scripts/docs/schema-tree.js";
import { workedTotals } from "../../scripts/docs/pricing.js";

const schema = JSON.parse(readFileSync(gatewaySchemaPath, "utf8")) as SchemaNode;

test("docs/configuration.md, pricing.md, errors.md, conversion.md, clients.md and the fixtures README are up to date with their sources", () => {
  const stale = staleDocs();
  assert.deepEqual(stale, [], `${stale.join(" and ")} out of date: run npm run docs`);
});

test("a changed or missing generated file is reported as stale", () => {
  const root = mkdtempSync(join(tmpdir(), "gateway-docs-"));
  try {
    const [first, ...rest] = generatedDocs();
    mkdirSync(dirname(join(root, first.path)), { recursive: true });
    writeFileSync(join(root, first.path), first.text.replace("# gateway.yaml reference", "# edited by hand"));
    assert.deepEqual(staleDocs(root), [first.path, ...rest.map((d) => d.path)]);
    for (const doc of [first, ...rest]) {
      mkdirSync(dirname(join(root, doc.path)), { recursive: true });
      writeFileSync(join(root, doc.path), doc.text);
    }
    assert.deepEqual(staleDocs(root), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("generating twice gives the same bytes", () => {
  assert.deepEqual(generatedDocs(), generatedDocs());
});

test("every key of the gateway.yaml schema has a description", () => {
  assert.deepEqual(undocumentedKeys(schema), [], "describe these keys in schemas/gateway.schema.json");
});

test("the undocumented-key check finds a key without a description", () => {
  const broken: SchemaNode = { properties: { a: { description: "ok", properties: { b: { type: "string" } } } } };
  assert.deepEqual(undocumentedKeys(broken), ["#/properties/a/properties/b"]);
});

test("the reference lists every key, nested maps and lists included, each with its section", () => {
  const paths = schemaKeys(schema).map((k) => k.path);
  for (const expected of ["server.listen", "limits.request_rate.per", "groups.<group>.multiplier", "tokens[].key_sha256", "channels[].model_map", "models.<model>.price", "price.cache_read_ratio", "price.tiers[].above_input_tokens", "price.variants[].when", "x-*"]) {
    assert.ok(paths.includes(expected), `missing ${expected}`);
  }
  assert.equal(new Set(paths).size, paths.length, "key paths are unique");
  const reference = generatedDocs()[0].text;
  for (const path of paths) assert.ok(reference.includes(`### \`${path}\``) || reference.includes(`## \`${path}\``), `no section for ${path}`);
});

test("a price's keys are documented once, in the Price section; keys that hold a price link there", () => {
  const keys = schemaKeys(schema);
  const paths = keys.map((k) => k.path);
  assert.deepEqual(paths.filter((p) => p.startsWith("models.<model>.price.") || p.startsWith("channels[].cost.prices.")), [], "no price key repeated under the keys that hold a price");
  const reference = generatedDocs()[0].text;
  assert.match(reference, /^## Price$/m);
  assert.match(reference, /\| \[`models\.<model>\.price`\]\(#modelsmodelprice\) \| \[price\]\(#price\) \|/);
  assert.match(reference, /\| \[`channels\[\]\.cost\.prices`\]\(#channelscostprices\) \| mapping of name to a \[price\]\(#price\) \|/);
  // A tier or variant documents what it adds, and every other key of its entries is a
  // price key (documented once, linked from it).
  const def = schema.$defs!.price;
  for (const list of ["tiers", "variants"]) {
    const key = keys.find((k) => k.path === `price.${list}`)!;
    const item = def.properties![list].items!.properties!;
    const own = Object.keys(item).filter((name) => paths.includes(`price.${list}[].${name}`));
    assert.deepEqual(own, [list === "tiers" ? "above_input_tokens" : "when"]);
    assert.deepEqual([...own, ...key.repeats!].sort(), Object.keys(item).sort(), `every key of a ${list} entry is documented`);
    for (const name of key.repeats!) assert.ok(paths.includes(`price.${name}`), `price.${name} is documented`);
  }
});

test("pricing.md's worked examples add up to the totals computed by hand", () => {
  // Per 1M tokens unless named; × the service tier where one applies.
  assert.deepEqual(workedTotals(), {
    // (4000 × 1.25 + 8000 × 0.125 + 800 × 10 + 1600 × 10) / 1M = 0.03, × flex 0.5
    "OpenAI: gpt-5 with cached input, reasoning and service_tier flex": "0.015",
    // (200 × 4 + 1000 × 0.4 + 3000 × 32 + 2000 × 0.4 + 300 × 16 + 1200 × 64) / 1M
    "OpenAI realtime: gpt-realtime with audio in and out, and cached audio": "0.1796",
    // (2000 × 3 + 50000 × 0.3 + 10000 × 3.75 + 20000 × 6 + 1200 × 15) / 1M
    "Anthropic: Claude Sonnet 4.5 with 5-minute and 1-hour cache writes": "0.1965",
    // 220,000 input > 200K: (180000 × 6 + 40000 × 0.6 + 3000 × 22.5) / 1M
    "Anthropic: Claude Sonnet 4.5 above 200K input tokens": "1.1715",
    // 250,000 input > 200K: (150000 × 2.5 + 100000 × 0.25 + 2000 × 15 + 3000 × 15) / 1M
    "Gemini: 2.5 Pro above 200K input tokens": "0.475",
    // (2400 × 0.3 + 9600 × 1 + 800 × 2.5 + 500 × 2.5) / 1M
    "Gemini: 2.5 Flash with audio input": "0.01357",
    // (50 × 5 + 194 × 10 + 4160 × 40) / 1M
    "Images: gpt-image-1, priced by tokens": "0.16859",
    // one image at the 1792x1024 hd variant
    "Images: dall-e-3, a price per image by size and quality": "0.12",
    // 8 s × 0.5 (the 1792x1024 variant)
    "Video: sora-2-pro, per second by size": "4",
    // (120 × 0.6 + 1800 × 12) / 1M
    "Speech: gpt-4o-mini-tts, priced by tokens": "0.021672",
    // 2400 / 1000 × 0.015
    "Speech: tts-1, per 1k characters": "0.036",
    // (100 × 2.5 + 1400 × 6 + 600 × 10) / 1M
    "Transcription: gpt-4o-transcribe, priced by tokens": "0.01465",
    // 95 s × 0.0001
    "Transcription: whisper-1, per second of audio": "0.0095",
  });
});

test("schema text is escaped for markdown outside code spans", () => {
  assert.equal(prose('"sqlite:<path>" or `<kept>`'), '"sqlite:&lt;path&gt;" or `<kept>`');
});

test("every catalogued error has advice, and no advice is left for a removed code", () => {
  assert.deepEqual(adviceGaps(errorAdvice), { missing: [], stale: [] }, "add advice to src/errors/advice.ts");
  const text = generatedDocs()[1].text;
  for (const spec of Object.values(errors)) assert.ok(text.includes(`### ${spec.code}\n`), `no section for ${spec.code}`);
});

test("the defaults the reference shows are the ones the compiler applies", () => {
  const byPath = new Map(schemaKeys(schema).map((k) => [k.path, k.node.default]));
  const pathOf: Record<string, string> = {
    listen: "server.listen",
    trustProxy: "server.trust_proxy",
    maxBody: "server.max_body",
    upstreamTimeout: "server.upstream_timeout",
    upstreamAttempts: "server.upstream_attempts",
    drainTimeout: "server.drain_timeout",
    headerTimeout: "server.header_timeout",
    bodyTimeout: "server.body_timeout",
    streamIdleTimeout: "server.stream_idle_timeout",
    maxBodyMemory: "server.max_body_memory",
    workers: "server.workers",
    store: "store",
    metricsPath: "metrics.path",
    maxOutputTokens: "models.<model>.max_output_tokens",
    affinityTtl: "routing.affinity_ttl",
  };
  for (const [name, path] of Object.entries(pathOf)) {
    assert.ok(name in DEFAULTS, `DEFAULTS.${name} is gone; update this map`);
    assert.deepEqual(byPath.get(path), (DEFAULTS as Record<string, unknown>)[name], `default of ${path} vs DEFAULTS.${name}`);
  }
});

test("every recorded client directory has its version in clients.json, and no entry is left for a removed one", () => {
  assert.deepEqual(manifestGaps(), { unlisted: [], stale: [] }, "add the client to test/fixtures/clients/clients.json");
});

test("docs/clients.md picks up a new recording directory and reads what it exercises from the bodies", () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-clients-"));
  try {
    cpSync(CLIENT_FIXTURES_DIR, dir, { recursive: true });
    mkdirSync(join(dir, "new-agent"));
    const turn = {
      client: "new-agent", seq: 1, what: "chat-json-tool-result", method: "POST", path: "/v1/chat/completions", query: {}, headers: {},
      body: {
        model: "m", reasoning_effort: "low", web_search_options: {},
        tools: [{ type: "function", function: { name: "read_file", parameters: {} } }],
        messages: [
          { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }, { type: "image_url", image_url: { url: "data:image/png;base64,AA==" } }] },
          { role: "tool", tool_call_id: "c1", content: "The answer is 42." },
        ],
      },
      answered: { status: 200, contentType: "application/json", body: { choices: [{ message: { role: "assistant", content: "done" } }] } },
    };
    writeFileSync(join(dir, "new-agent", "01-chat-json-tool-result.json"), JSON.stringify(turn));
    assert.deepEqual(manifestGaps(dir), { unlisted: ["new-agent"], stale: [] });
    const doc = renderClientMatrix(dir);
    assert.notEqual(doc, renderClientMatrix(), "the new directory changes the matrix");
    assert.match(doc, /\| new-agent \(`new-agent\/`\) \| not in clients\.json \|/);
    assert.match(doc, /\| new-agent \(`new-agent\/`\) \| chat \| pass-through, 2 replays \| converted, 2 replays \| converted, 2 replays \| converted, 2 replays \|/);
    assert.deepEqual(exercised(readAllFixtures(dir).filter((f) => f.client === "new-agent")), {
      text: true, stream: false, json: true, tools: true, toolResults: true,
      reasoning: ["reasoning_effort"], images: ["image_url"], caching: ["cache_control"], hostedTools: ["web_search_options"], other: [],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the matrix shows what the recorded clients are known to send", () => {
  const byClient = (c: string) => exercised(readAllFixtures().filter((f) => f.client === c));
  assert.deepEqual(byClient("codex").hostedTools, ["web_search"]);
  assert.ok(byClient("codex").caching.includes("prompt_cache_key"));
  assert.ok(byClient("claude").caching.includes("cache_control"));
  assert.ok(byClient("claude").reasoning.includes("thinking"));
  assert.ok(byClient("gemini").reasoning.includes("thinkingConfig"));
  // A turn answered with a tool call only is not a text answer, streamed or not, in any
  // protocol; one with text beside the call is.
  const turn = (name: string) => exercised(readAllFixtures().filter((f) => f.name === name));
  for (const name of ["codex/01-responses-stream-tool-call.json", "gemini/01-generate-stream-tool-call.json", "ai-sdk/01-responses-json-tool-call.json", "ai-sdk/05-chat-json-tool-call.json", "ai-sdk/07-chat-stream-tool-call.json", "ai-sdk/13-generate-json-tool-call.json"]) {
    assert.equal(turn(name).text, false, name);
  }
  assert.equal(turn("claude/02-messages-stream-tool-call.json").text, true, "Claude Code was answered \"Let me read it.\" beside the call");
});
