// The gateway.yaml examples in the README stay true: each compiles, without warnings, with
// the environment variables it reads set (the default config's own is checked by
// `npm run check`).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compileSource } from "../../src/config/index.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
/** Fenced YAML blocks that are whole configs (they declare tokens and channels or groups), not fragments. */
const configs = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).filter((y) => /^(channels|groups):/m.test(y) && /^tokens:/m.test(y));

test("the README has its minimal config", () => {
  assert.ok(configs.length >= 1, "no whole gateway.yaml example found in the README");
});

for (const [i, yaml] of configs.entries()) {
  test(`README config example ${i + 1} compiles without warnings`, () => {
    const env = Object.fromEntries([...yaml.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => [m[1], `sk-placeholder-${m[1].toLowerCase()}-0123456789`]));
    const { runtime, warnings } = compileSource(yaml, { path: "README.md", env });
    assert.deepEqual(warnings, []);
    assert.ok(runtime.tokensByHash.size > 0 && runtime.channels.size > 0 && runtime.models.size > 0);
  });
}
