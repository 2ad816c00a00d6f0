// The whole gateway.yaml examples in docs/providers.md stay true: each compiles, without
// warnings, with the environment variables it reads set, and gives each channel a key.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compileSource } from "../../src/config/index.js";

const doc = readFileSync(new URL("../../docs/providers.md", import.meta.url), "utf8");
/** Fenced YAML blocks that are whole configs (they declare tokens), not fragments. */
const configs = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).filter((y) => /^tokens:/m.test(y) && /^channels:/m.test(y));

test("docs/providers.md has a whole config example", () => {
  assert.ok(configs.length >= 1, "no whole gateway.yaml example found in docs/providers.md");
});

for (const [i, yaml] of configs.entries()) {
  test(`docs/providers.md config example ${i + 1} compiles without warnings, every channel with a key`, () => {
    // Placeholders shaped like the values they stand for (no underscores: a tenant id has none).
    const env = Object.fromEntries([...yaml.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => [m[1], `placeholder-${m[1].toLowerCase().replaceAll("_", "-")}-0123456789`]));
    const { runtime, warnings } = compileSource(yaml, { path: "docs/providers.md", env });
    assert.deepEqual(warnings, []);
    assert.ok(runtime.channels.size > 0);
    for (const channel of runtime.channels.values()) assert.ok(channel.keys.length > 0, `channel ${channel.name} has no key`);
  });
}
