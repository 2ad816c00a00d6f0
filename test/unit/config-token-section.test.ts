// The fast reader of the tokens list: whatever it reads equals what the YAML parser reads
// (and it reads nothing the parser rejects); files outside its subset go to the parser;
// the Runtime is the same either way.

import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseDocument } from "yaml";
import { compileSource } from "../../src/config/index.js";
import { readTokenSection } from "../../src/config/token-section.js";
import { minimalConfig } from "../helpers/minimal-config.js";

/** What the general parser makes of `text`: its tokens, or undefined when it finds errors. */
function parsed(text: string): unknown[] | undefined {
  const doc = parseDocument(text, { uniqueKeys: true, merge: true, prettyErrors: false });
  if (doc.errors.length) return undefined;
  return (doc.toJS({ maxAliasCount: 1000 }) as { tokens: unknown[] }).tokens;
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
  const section = readTokenSection(text);
  assert.ok(section);
  assert.deepEqual(section.tokens, parsed(text));
  assert.equal(section.rest, head + "tokens:\n" + tail);
  assert.equal(section.keyOffset, head.length);
});

test("a list at the key's own indentation is read too", () => {
  const text = head + "tokens:\n- name: a\n  user: alice\n- name: b\n  user: alice\n" + tail;
  const section = readTokenSection(text);
  assert.ok(section);
  assert.deepEqual(section.tokens, parsed(text));
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
    "  - {name: a}",
    "  -\n    name: a",
    "  - name: a\n\tuser: alice",
    "  - name: a\r\n    user: alice",
    "  - name: a\n   user: alice",
  ];
  for (const entry of entries) {
    const text = `${head}tokens:\n${entry}\n${tail}`;
    assert.equal(readTokenSection(text), undefined, JSON.stringify(entry));
  }
  assert.equal(readTokenSection(`${head}tokens: []\n${tail}`), undefined);
  assert.equal(readTokenSection(`${head}tokens:\n${tail}`), undefined);
  assert.equal(readTokenSection(`---\n${head}tokens:\n  - name: a\n${tail}`), undefined);
  assert.equal(readTokenSection(`${head}tokens:\n  - name: a\ntokens:\n  - name: b\n`), undefined);
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
      const section = readTokenSection(text);
      if (section === undefined) return;
      taken++;
      const expected = parsed(text);
      assert.notEqual(expected, undefined, `the parser rejects:\n${text}`);
      assert.deepEqual(section.tokens, expected, text);
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

test("the Runtime is the same whether the fast reader or the parser read the tokens", () => {
  assert.notEqual(base, minimalConfig);
  assert.ok(readTokenSection(base), "the fast reader takes this file");
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
  assert.ok(readTokenSection(text));
  assert.throws(() => compileSource(text, { path: "bad.yaml", env: { T1_KEY: "sk-t1" } }), (error: Error & { issues?: { line: number; column: number; path: string }[] }) => {
    const issue = error.issues?.find((i) => /colour/.test(i.path));
    assert.ok(issue, error.message);
    const line = text.split("\n").findIndex((l) => l.includes("colour")) + 1;
    assert.deepEqual([issue.line, issue.column], [line, 5]);
    return true;
  });
});
