// channels[].kind in gateway.yaml: `protocol:` alone names the first-party kind; `kind:`
// alone speaks its protocol; a protocol the kind does not speak, a setting it does not
// have, or a missing base_url is an error at the channel, naming the key.

import assert from "node:assert/strict";
import { test } from "node:test";
import { compileSource, ConfigError, type ConfigIssue } from "../../src/config/index.js";

const source = (channel: string) => `
groups: { default: {} }
users: { alice: { groups: [default] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
channels:
  - { name: c1, ${channel}, keys: [k], groups: [default], models: [m] }
models:
  m: { price: { input: 1 } }
`;

const compile = (channel: string) => compileSource(source(channel), { path: "/etc/gateway/gateway.yaml" });

function issues(channel: string): readonly ConfigIssue[] {
  try {
    compile(channel);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  assert.fail("the config compiled");
}

test("protocol alone names the first-party kind; kind alone speaks its protocol", () => {
  const byProtocol = compile("protocol: gemini, base_url: https://g.example").runtime.channels.get("c1")!;
  assert.equal(byProtocol.kind, "gemini");
  assert.equal(byProtocol.protocol, "gemini");
  const byKind = compile("kind: anthropic, base_url: https://a.example").runtime.channels.get("c1")!;
  assert.equal(byKind.kind, "anthropic");
  assert.equal(byKind.protocol, "anthropic");
  assert.deepEqual(byKind.settings, {});
  assert.equal(byKind.baseUrl.href, "https://a.example/");
});

test("a channel without protocol or kind, a protocol its kind does not speak, settings it does not have, no base_url", () => {
  assert.deepEqual(issues("base_url: https://a.example").map((i) => [i.path, i.message]), [["channels[0].protocol", 'missing required key "protocol"']]);
  const wrong = issues("kind: openai, protocol: anthropic, base_url: https://a.example");
  assert.deepEqual(wrong.map((i) => [i.path, i.message]), [["channels[0].protocol", "kind openai speaks openai, not anthropic"]]);
  const foreign = issues("kind: openai, region: us-east-1, project: p, base_url: https://a.example");
  assert.deepEqual(foreign.map((i) => i.message), ["region is not a setting of kind openai", "project is not a setting of kind openai"]);
  assert.deepEqual(issues("kind: gemini").map((i) => i.message), ["base_url is required for kind gemini"]);
});
