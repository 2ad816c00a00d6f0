// Every class of config error names the key path and the line it sits on, and all of
// them are reported together.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSource, ConfigError, type ConfigIssue } from "../../src/config/index.js";

// Line numbers of this base config are fixed; the tests edit lines by number.
const base = [
  "groups:", //                                      1
  "  default: { multiplier: 0.7 }", //               2
  "users:", //                                       3
  "  alice: { credit: 10, groups: [default] }", //   4
  "tokens:", //                                      5
  "  - name: alice-laptop", //                       6
  "    key: sk-alice", //                            7
  "    user: alice", //                              8
  "    group: default", //                           9
  "channels:", //                                    10
  "  - name: openai-main", //                        11
  "    protocol: openai", //                         12
  "    base_url: https://api.openai.com", //         13
  "    keys: [sk-up]", //                            14
  "    groups: [default]", //                        15
  "    models: [gpt-4o-mini]", //                    16
  "models:", //                                      17
  "  gpt-4o-mini:", //                               18
  "    price: { input: 0.15, output: 0.6 }", //      19
];

type Edit = [line: number, text: string | null];

/** The base config with lines replaced (text), removed (null), or lines appended (line 0). */
function config(...edits: Edit[]): string {
  const lines: (string | null)[] = [...base];
  const appended: string[] = [];
  for (const [line, text] of edits) {
    if (line === 0) appended.push(text ?? "");
    else lines[line - 1] = text;
  }
  return [...lines.filter((l): l is string => l !== null), ...appended].join("\n") + "\n";
}

function issuesOf(text: string, env: NodeJS.ProcessEnv = {}): ConfigIssue[] {
  try {
    compileSource(text, { path: "gateway.yaml", env });
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    assert.equal(error.message, error.issues.map((i) => `${i.file}:${i.line}:${i.column}: ${i.path ? i.path + ": " : ""}${i.message}`).join("\n"));
    return [...error.issues];
  }
  assert.fail("expected the config to be rejected");
}

/** Asserts exactly one issue, at `path` on `line`, whose message matches `pattern`. */
function expectOne(text: string, path: string, line: number, pattern: RegExp, env?: NodeJS.ProcessEnv): ConfigIssue {
  const issues = issuesOf(text, env);
  assert.equal(issues.length, 1, `expected one issue, got:\n${issues.map((i) => JSON.stringify(i)).join("\n")}`);
  const [issue] = issues;
  assert.equal(issue.path, path);
  assert.equal(issue.line, line);
  assert.match(issue.message, pattern);
  assert.equal(issue.file, "gateway.yaml");
  return issue;
}

test("the base config is valid", () => {
  assert.doesNotThrow(() => compileSource(config(), { path: "gateway.yaml", env: {} }));
});

test("YAML syntax error: file:line:col of the fault", () => {
  const issues = issuesOf(config([8, "    user: alice: x"]));
  assert.equal(issues[0].line, 8);
  assert.equal(issues[0].path, "tokens[0].user.alice");
  assert.match(issues[0].message, /nested mappings/i);
  const duplicate = issuesOf(config([9, "    group: default\n    user: bob"]));
  assert.equal(duplicate[0].line, 10);
  assert.equal(duplicate[0].path, "tokens[0].user");
  assert.match(duplicate[0].message, /unique/);
});

test("unknown key: named, at its own line, with a suggestion", () => {
  const issue = expectOne(config([9, "    group: default\n    colour: blue"]), "tokens[0].colour", 10, /unknown key "colour"/);
  assert.equal(issue.column, 5);
  expectOne(config([12, "    protocl: openai"]), "channels[0].protocl", 12, /unknown key "protocl" \(did you mean "protocol"\?\)/);
  expectOne(config([0, "srever:"], [0, "  listen: 127.0.0.1:80"]), "srever", 20, /unknown key "srever"/);
});

test("wrong type", () => {
  expectOne(config([4, "  alice: { credit: ten, groups: [default] }"]), "users.alice.credit", 4, /must be a number, not "ten"/);
  expectOne(config([15, "    groups: default"]), "channels[0].groups", 15, /must be a list/);
});

test("missing required key: reported at the entry that lacks it", () => {
  expectOne(config([12, null]), "channels[0].protocol", 11, /missing required key "protocol"/);
  expectOne(config([7, null]), "tokens[0]", 6, /exactly one of key or key_sha256/);
});

test("bad enum value lists the allowed ones", () => {
  expectOne(config([12, "    protocol: opnai"]), "channels[0].protocol", 12, /one of openai, anthropic, gemini, not "opnai"/);
  expectOne(config([19, "    endpoint: chatt"], [0, "    price: { input: 1 }"]), "models.gpt-4o-mini.endpoint", 19, /endpoint kind \(chat, responses/);
});

test("unknown token user", () => {
  expectOne(config([8, "    user: bob"]), "tokens[0].user", 8, /unknown user "bob"/);
});

test("unknown group, from a token, a user and a channel", () => {
  expectOne(config([9, "    group: vip"]), "tokens[0].group", 9, /unknown group "vip"/);
  expectOne(config([4, "  alice: { credit: 10, groups: [default, vip] }"]), "users.alice.groups[1]", 4, /unknown group "vip"/);
  expectOne(config([15, "    groups: [default, vip]"]), "channels[0].groups[1]", 15, /unknown group "vip"/);
});

test("channel model not in the price list", () => {
  expectOne(config([16, "    models: [gpt-4o-mini, gpt-5]"]), "channels[0].models[1]", 16, /"gpt-5" is not in the price list/);
  expectOne(config([16, "    models: [gpt-4o-mini]\n    model_map: { gpt-5: gpt-5-2025 }"]), "channels[0].model_map.gpt-5", 17, /not one of this channel's models/);
});

test("duplicate token and channel names", () => {
  const secondToken = "  - { name: alice-laptop, key: sk-other, user: alice, group: default }";
  expectOne(config([9, "    group: default\n" + secondToken]), "tokens[1].name", 10, /duplicate token name "alice-laptop" \(also tokens\[0\]\)/);
  const secondChannel = "  - { name: openai-main, protocol: openai, base_url: https://x.example, groups: [default], models: [gpt-4o-mini] }";
  expectOne(config([16, "    models: [gpt-4o-mini]\n" + secondChannel]), "channels[1].name", 17, /duplicate channel name "openai-main"/);
});

test("duplicate token keys, without printing the key", () => {
  const second = "  - { name: alice-phone, key: sk-alice, user: alice, group: default }";
  const issue = expectOne(config([9, "    group: default\n" + second]), "tokens[1].key", 10, /same key as tokens\[0\]/);
  assert.doesNotMatch(issue.message, /sk-alice/);
  const hashed = "  - { name: alice-phone, key_sha256: 9A1F0C9E3D4C0C3B13A2F4CCBA7E1A8E36A9B4C5D2E6F708192A3B4C5D6E7F80, user: alice, group: default }";
  const sameHash = config([7, "    key_sha256: 9a1f0c9e3d4c0c3b13a2f4ccba7e1a8e36a9b4c5d2e6f708192a3b4c5d6e7f80"], [9, "    group: default\n" + hashed]);
  expectOne(sameHash, "tokens[1].key_sha256", 10, /same key as tokens\[0\]/);
  expectOne(config([7, "    key_sha256: abc123"]), "tokens[0].key_sha256", 7, /64 hex digits/);
});

test("bad duration and bad size", () => {
  expectOne(config([0, "server:"], [0, "  upstream_timeout: 5 minutes"]), "server.upstream_timeout", 21, /must be a duration such as "250ms", "30s"/);
  expectOne(config([0, "limits:"], [0, "  request_rate: { max: 60, per: 0s }"]), "limits.request_rate.per", 21, /longer than 0/);
  expectOne(config([0, "server:"], [0, "  max_body: 32MeB"]), "server.max_body", 21, /must be a size such as/);
});

test("bad date", () => {
  expectOne(config([9, "    group: default\n    expires: 2027-13-45"]), "tokens[0].expires", 10, /invalid date "2027-13-45"/);
  expectOne(config([9, "    group: default\n    expires: next year"]), "tokens[0].expires", 10, /ISO 8601/);
});

test("bad CIDR and bad address in allow_ips", () => {
  expectOne(config([9, "    group: default\n    allow_ips: [10.0.0.0/8, 10.0.0.0/33]"]), "tokens[0].allow_ips[1]", 10, /prefix length must be 0 to 32/);
  expectOne(config([9, "    group: default\n    allow_ips: [300.1.1.1]"]), "tokens[0].allow_ips[0]", 10, /invalid address "300.1.1.1"/);
});

test("bad listen address and bad base_url", () => {
  expectOne(config([0, "server:"], [0, "  listen: localhost"]), "server.listen", 21, /host:port/);
  expectOne(config([0, "server:"], [0, "  listen: ::1:8080"]), "server.listen", 21, /\[::1\]:8080/);
  expectOne(config([13, "    base_url: ftp://api.openai.com"]), "channels[0].base_url", 13, /http:\/\/ or https:\/\//);
});

test("bad store, money with too many decimals, missing request schema", () => {
  expectOne(config([0, "store: postgres://db"]), "store", 20, /sqlite:<path>/);
  expectOne(config([19, "    price: { input: 0.0000000001, output: 0.6 }"]), "models.gpt-4o-mini.price.input", 19, /more than 9 decimal places/);
  expectOne(config([19, "    request_schema: no-such-family"], [0, "    price: { per_second: 0.07 }"]), "models.gpt-4o-mini.request_schema", 19, /no-such-family/);
});

test("missing environment variable names the variable, the key and the line", () => {
  const issue = expectOne(config([7, "    key: ${ALICE_KEY}"]), "tokens[0].key", 7, /environment variable ALICE_KEY is not set/);
  assert.equal(issue.column, 10);
  // Inside a flow list and a quoted string too.
  const issues = issuesOf(config([14, '    keys: [${UP_KEY}, "x-${UP_KEY2}"]']));
  assert.deepEqual(issues.map((i) => [i.path, i.line, i.column]), [["channels[0].keys[0]", 14, 12], ["channels[0].keys[1]", 14, 23]]);
  assert.match(issues[1].message, /UP_KEY2/);
});

test("an empty file is rejected", () => {
  const [issue] = issuesOf("# nothing here\n");
  assert.match(issue.message, /no settings/);
});

test("several errors are reported at once, in line order", () => {
  const issues = issuesOf(
    config([8, "    user: bob"], [9, "    group: default\n    colour: blue"], [12, "    protocol: opnai"], [16, "    models: [gpt-5]"], [7, "    key: ${NOPE}"]),
  );
  assert.deepEqual(
    issues.map((i) => [i.line, i.path]),
    [
      [7, "tokens[0].key"],
      [8, "tokens[0].user"],
      [10, "tokens[0].colour"],
      [13, "channels[0].protocol"],
      [17, "channels[0].models[0]"],
    ],
  );
});
