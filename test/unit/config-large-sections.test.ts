// The fast reader of the tokens list and users map: whatever it reads equals what the
// YAML parser reads (and it reads nothing the parser rejects); sections outside its subset
// are left to the parser; the Runtime is the same either way.

import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseDocument } from "yaml";
import { compileSource } from "../../src/config/index.js";
import { readLargeSections } from "../../src/config/large-sections.js";

/** The tokens the fast reader took from `text`, if it took them. */
const readTokens = (text: string): unknown => readLargeSections(text)?.values.get("tokens");
import { minimalConfig } from "../helpers/minimal-config.js";

/** What the general parser makes of `text`'s `key`, or undefined when it finds errors. */
function parsed(text: string, key = "tokens"): unknown {
  const doc = parseDocument(text, { uniqueKeys: true, merge: true, prettyErrors: false });
  if (doc.errors.length) return undefined;
  return (doc.toJS({ maxAliasCount: 1000 }) as Record<string, unknown>)[key];
}

const head = "groups:\n  default: {}\n";
const tail = "users:\n  alice: { groups: [default] }\n";

test("reads plain, quoted and flow values as the YAML parser does", () => {
  const text = head + [
    "tokens:",
    "  - name: a   # a comment",
    "    key_sha256: \"0123\"",
    "    user: 'it''s'",
    "    group: default",
    "    quota: 1.50",
    "    models: [gpt-4o, \"claude-*\", 'x y']",
    "    allow_ips: [ 10.0.0.0/8 ,198.51.100.7 ]",
    "    expires: 2027-01-01T00:00:00Z",
    "# between entries",
    "",
    "  -   name: b#c",
    "      status: disabled",
    "      quota: 12",
    "      other: [true, null, ~, 1e3, -0.5, +7, False]",
    "      empty: []",
    "      words: a plain value with spaces",
  ].join("\n") + "\n" + tail;
  const sections = readLargeSections(text);
  assert.ok(sections);
  assert.deepEqual(sections.values.get("tokens"), parsed(text));
  assert.deepEqual(sections.values.get("users"), parsed(text, "users"));
  assert.equal(sections.rest, head + "tokens:\nusers:\n");
  assert.deepEqual([...sections.keyOffsets], [["tokens", head.length], ["users", head.length + "tokens:\n".length]]);
});

test("a list at the key's own indentation is read too", () => {
  const text = head + "tokens:\n- name: a\n  user: alice\n- name: b\n  user: alice\n" + tail;
  const tokens = readTokens(text);
  assert.ok(tokens);
  assert.deepEqual(tokens, parsed(text));
});

test("leaves the file to the YAML parser outside its subset", () => {
  const entries = [
    "  - name: &anchor a",
    "  - name: *anchor",
    "  - name: !tag a",
    "  - name: \"a\\tb\"",
    "  - name: |\n      block",
    "  - name: a\n      continued",
    "  - name: a\n    models:\n      - gpt-4o",
    "  - name: a\n    <<: { user: alice }",
    "  - name: a\n    name: b",
    "  - name: a\n    models: [a, b,]",
    "  - name: a\n    models: [a: b]",
    "  - name: a\n    models: [a, [b]]",
    "  - name: a\n    models: [a,\n      b]",
    "  - name: a: b",
    "  - name: 0x1F",
    "  - name: .inf",
    "  - name: -a",
    "  -\n    name: a",
    "  - {name: a}\n    user: alice",
    "  - {name: a, }",
    "  - {__proto__: a}",
    "  - name: a\n    __proto__: b",
    "  - name: a\n\tuser: alice",
    "  - name: a\r\n    user: alice",
    "  - name: a\n   user: alice",
  ];
  for (const entry of entries) {
    const text = `${head}tokens:\n${entry}\n${tail}`;
    assert.equal(readTokens(text), undefined, JSON.stringify(entry));
  }
  assert.equal(readTokens(`${head}tokens: []\n${tail}`), undefined);
  assert.equal(readTokens(`${head}tokens:\n${tail}`), undefined);
  assert.equal(readLargeSections(`---\n${head}tokens:\n  - name: a\n${tail}`), undefined);
  assert.equal(readTokens(`${head}tokens:\n  - name: a\ntokens:\n  - name: b\n`), undefined);
  const users = [
    "  alice: { groups: [default], }",
    "  alice:\n    credit: 1\n  alice:\n    credit: 2",
    "  alice:\n",
    "  alice: {}",
    "  123: { credit: 1 }",
    "  true: { credit: 1 }",
    "  \"alice\": { credit: 1 }",
    "  alice: &a { credit: 1 }",
    "  alice:\n    credit: 1\n      more: 2",
    "  alice:\n    credit: 1\n   more: 2",
    "  alice: { credit: 1 }\n    more: 2",
    "  alice:\n    groups:\n      - default",
    "  __proto__: { credit: 1 }",
  ];
  for (const body of users) {
    const text = `${head}users:\n${body}\n`;
    assert.equal(readLargeSections(text)?.values.get("users"), undefined, JSON.stringify(body));
  }
});

/** Scalars that look like other things: numbers, booleans, nulls, comments, indicators. */
const scalarText = fc.oneof(
  fc.constantFrom(
    "a", "alice", "null", "Null", "~", "true", "FALSE", "yes", "1", "+1", "-1", "007", "1.5", "1.", ".5", "1e3", "1E-3",
    "0x1F", "0o17", ".inf", "-.inf", ".nan", "2027-01-01", "2027-01-01T00:00:00Z", "10.0.0.0/8", "2001:db8::1",
    "claude-*", "gpt-?", "a b", "a #b", "a#b", "a: b", "a:b", "-a", "?a", ":a", "@a", "`a", "%a", "a,b", "a]b", "a}b",
    "it's", "say \"hi\"", "back\\slash", "", " lead", "trail ", "${VAR}", "é", "a\\nb",
    "a\u00a0", "\u00a0a", "a\u00a0#b", "a\u2028", "a\u0085b", "a\u3000", "a\u00a0: b",
  ),
  fc.string({ maxLength: 6 }),
);

/** One value written the ways a person might: plain, single or double quoted. */
const written = fc.tuple(scalarText, fc.constantFrom("plain", "single", "double")).map(([text, style]) =>
  style === "plain" ? text : style === "single" ? `'${text.replace(/'/g, "''")}'` : `"${text}"`);

const value = fc.oneof(
  written,
  fc.array(written, { maxLength: 4 }).map((items) => `[${items.join(", ")}]`),
  written.map((w) => `${w}  # note`),
);

const entry = fc.uniqueArray(fc.constantFrom("name", "user", "group", "key_sha256", "models", "quota", "x"), { minLength: 1, maxLength: 4 })
  .chain((keys) => fc.tuple(fc.constant(keys), fc.array(value, { minLength: keys.length, maxLength: keys.length })))
  .map(([keys, values]) => keys.map((key, i) => `${i === 0 ? "  - " : "    "}${key}: ${values[i]}`).join("\n"));

test("whatever it reads, the YAML parser reads the same; it reads nothing the parser rejects", () => {
  let taken = 0;
  fc.assert(
    fc.property(fc.array(entry, { minLength: 1, maxLength: 4 }), (entries) => {
      const text = `${head}tokens:\n${entries.join("\n")}\n${tail}`;
      const tokens = readTokens(text);
      if (tokens === undefined) return;
      taken++;
      const expected = parsed(text);
      assert.notEqual(expected, undefined, `the parser rejects:\n${text}`);
      assert.deepEqual(tokens, expected, text);
    }),
    { numRuns: 3000 },
  );
  // The property says something only if the reader takes a fair share of the files.
  assert.ok(taken > 300, `the fast reader took ${taken} of 3000 files`);
});

const blockTokens = [
    "tokens:",
    "  - name: t1",
    "    key: ${T1_KEY}",
    "    user: alice",
    "    group: default",
    "    allow_ips: [203.0.113.0/24]",
    "    models: [gpt-4o-mini, \"gpt-*\"]",
    "    quota: 2.5",
    "    expires: 2030-01-01T00:00:00Z",
    "  - name: t2",
    "    key: sk-t2",
    "    user: alice",
    "    group: default",
    "    allow_ips: [203.0.113.0/24]",
    "    status: disabled",
].join("\n");
/** The minimal config with two tokens written as block mappings, which the fast reader takes. */
const base = minimalConfig.replace(/^tokens:\n(?: .*\n|\n)*/m, `${blockTokens}\n`);

/** `{ k: v, … }` entries, with the same scalars and lists as the block entries. */
const flowPairs = fc.uniqueArray(fc.constantFrom("name", "user", "credit", "groups", "x"), { minLength: 0, maxLength: 3 })
  .chain((keys) => fc.tuple(fc.constant(keys), fc.array(fc.oneof(written, fc.array(written, { maxLength: 3 }).map((i) => `[${i.join(", ")}]`)), { minLength: keys.length, maxLength: keys.length })))
  .map(([keys, values]) => `{ ${keys.map((key, i) => `${key}: ${values[i]}`).join(", ")} }`);

const userName = fc.constantFrom("alice", "bob.x", "c-1", "d@e", "_u", "123", "true", "null", "1e3", "a b", "x:y", "0x1F", "é", "-a");

const userEntry = fc.tuple(userName, fc.boolean(), flowPairs, fc.array(value, { minLength: 1, maxLength: 2 }))
  .map(([name, flow, pairs, values]) => flow
    ? `  ${name}: ${pairs}`
    : `  ${name}:\n${values.map((v, i) => `    ${["credit", "groups"][i]}: ${v}`).join("\n")}`);

test("flow entries and users: whatever it reads, the YAML parser reads the same", () => {
  let taken = 0;
  fc.assert(
    fc.property(fc.array(flowPairs, { minLength: 1, maxLength: 3 }), fc.array(userEntry, { minLength: 1, maxLength: 4 }), (tokens, users) => {
      // Each section is compared with the parser's reading of that section alone.
      const alone = {
        tokens: `tokens:\n${tokens.map((t) => `  - ${t}`).join("\n")}\n`,
        users: `users:\n${users.join("\n")}\n`,
      };
      const sections = readLargeSections(head + alone.tokens + alone.users);
      for (const key of ["tokens", "users"] as const) {
        const read = sections?.values.get(key);
        if (read === undefined) continue;
        taken++;
        const expected = parsed(alone[key], key);
        assert.notEqual(expected, undefined, `the parser rejects:\n${alone[key]}`);
        assert.deepEqual(read, expected, alone[key]);
      }
    }),
    { numRuns: 3000 },
  );
  assert.ok(taken > 600, `the fast reader took ${taken} of 6000 sections`);
});

test("the Runtime is the same whether the fast reader or the parser read the tokens", () => {
  assert.notEqual(base, minimalConfig);
  assert.ok(readTokens(base), "the fast reader takes this file");
  const env = { T1_KEY: "sk-t1" };
  const fast = compileSource(base, { path: "fast.yaml", env });
  // CR line ends keep the same values but send the file to the parser.
  const slow = compileSource(base.replace(/\n/g, "\r\n"), { path: "fast.yaml", env });
  assert.deepEqual(fast.warnings, slow.warnings);
  const plain = (runtime: typeof fast.runtime) => [...runtime.tokensByHash.values()]
    .map(({ allowIp, allowModel, ...rest }) => ({
      ...rest,
      ip: allowIp && [allowIp("203.0.113.9"), allowIp("198.51.100.1"), allowIp("::ffff:203.0.113.9")],
      model: allowModel && [allowModel("gpt-4o-mini"), allowModel("gpt-4o"), allowModel("claude-3")],
    }));
  assert.deepEqual(plain(fast.runtime), plain(slow.runtime));
  assert.equal(fast.runtime.tokensByHash.size, 2);
  // Two tokens with the same allowlist share one matcher.
  const [t1, t2] = [...fast.runtime.tokensByHash.values()];
  assert.equal(t1.allowIp, t2.allowIp);
  const { tokensByHash: _a, sourceHash: _b, ...fastRest } = fast.runtime;
  const { tokensByHash: _c, sourceHash: _d, ...slowRest } = slow.runtime;
  assert.deepEqual(fastRest, slowRest);
});

test("a problem in a fast-read list is still reported at its line and column", () => {
  const text = base.replace("    key: sk-t2\n", "    key: sk-t2\n    colour: blue\n");
  assert.notEqual(text, base);
  assert.ok(readTokens(text));
  assert.throws(() => compileSource(text, { path: "bad.yaml", env: { T1_KEY: "sk-t1" } }), (error: Error & { issues?: { line: number; column: number; path: string }[] }) => {
    const issue = error.issues?.find((i) => /colour/.test(i.path));
    assert.ok(issue, error.message);
    const line = text.split("\n").findIndex((l) => l.includes("colour")) + 1;
    assert.deepEqual([issue.line, issue.column], [line, 5]);
    return true;
  });
});

test("problems in a fast-read file are located exactly as the parser locates them", () => {
  const file = [
    "groups:",
    "  default: { multiplier: 0.7 }",
    "users:",
    "  alice: { credit: 10, groups: [default] }",
    "  bob:",
    "    credit: 5",
    "    groups: [default]",
    "tokens:",
    "  - name: t1",
    "    key: sk-1",
    "    user: alice",
    "    group: default",
    "  - { name: t2, key: sk-2, user: bob, group: default }",
    "  - name: t3",
    "    key_sha256: " + "ab".repeat(32),
    "    user: bob",
    "    group: default",
    "    allow_ips: [10.0.0.0/8]",
    "channels:",
    "  - name: c1",
    "    protocol: openai",
    "    base_url: https://api.openai.com",
    "    keys: [k]",
    "    groups: [default]",
    "    models: [m]",
    "models:",
    "  m: { price: { input: 1 } }",
  ].join("\n") + "\n";
  const edits: [string, string][] = [
    ["    user: alice\n", "    user: carol\n"],
    ["    group: default\n  - {", "    group: vip\n    colour: blue\n  - {"],
    ["user: bob, group: default }", "user: bob, group: default, colour: red }"],
    ["name: t2", "name: t1"],
    ["key: sk-2", "key: sk-1"],
    ["key_sha256: ab", "key_sha256: zz"],
    ["[10.0.0.0/8]", "[10.0.0.0/8, 10.0.0.0/33]"],
    ["    allow_ips: [10.0.0.0/8]\n", "    allow_ips: [10.0.0.0/8]\n    expires: next year\n    quota: 0.0000000001\n"],
    ["    credit: 5\n", "    credit: 5\n    colour: blue\n"],
    ["groups: [default] }", "groups: [vip] }"],
    ["  bob:\n", "  b:ob:\n"],
    ["  - name: t3\n", "  - name: t3\n    user: bob\n"],
    ["    key: sk-1\n", ""],
    ["    protocol: openai\n", "    protocol: openai\n    colour: blue\n"],
    ["models: [m]", "models: [m, n]"],
    ["  m: { price: { input: 1 } }", "  m: { price: { input: -1 } }\ncolour: blue"],
    ["    user: alice\n", "    user: carol\n    group: vip\n"],
  ];
  const issuesOf = (text: string): unknown => {
    try {
      compileSource(text, { path: "g.yaml", env: {} });
    } catch (error) {
      return (error as Error & { issues?: unknown }).issues ?? (error as Error).message;
    }
    return "compiled";
  };
  for (const [from, to] of edits) {
    assert.ok(file.includes(from), from);
    const text = file.replace(from, to);
    const fast = issuesOf(text);
    assert.notEqual(fast, "compiled", to);
    assert.deepEqual(fast, issuesOf(text.replace(/\n/g, "\r\n")), to);
  }
});
