// The generated operator docs stay true to their sources: docs/configuration.md,
// docs/errors.md, docs/conversion.md, docs/clients.md and the fixtures README's table of
// clients match what `npm run docs` would write, every recorded client has a version, every schema key has a description,
// every error code has advice, and the defaults the reference shows are the compiler's.

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

const schema = JSON.parse(readFileSync(gatewaySchemaPath, "utf8")) as SchemaNode;

test("docs/configuration.md, errors.md, conversion.md, clients.md and the fixtures README are up to date with their sources", () => {
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
  for (const expected of ["server.listen", "limits.request_rate.per", "groups.<group>.multiplier", "tokens[].key_sha256", "channels[].model_map", "models.<model>.price.cache_read_ratio", "x-*"]) {
    assert.ok(paths.includes(expected), `missing ${expected}`);
  }
  assert.equal(new Set(paths).size, paths.length, "key paths are unique");
  const reference = generatedDocs()[0].text;
  for (const path of paths) assert.ok(reference.includes(`### \`${path}\``) || reference.includes(`## \`${path}\``), `no section for ${path}`);
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
