// `gateway check --prices`: each model's effective price table as compiled, with exact
// figures for a small config that has a tier, a variant, a service tier, fallbacks, a
// channel priced × a multiplier and one (disabled: its group still shows) with its own
// price; --json; unknown models.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCheck } from "../../src/cli/check.js";
import type { CliIo } from "../../src/cli/format.js";

const dir = mkdtempSync(join(tmpdir(), "gateway-check-prices-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const file = join(dir, "gateway.yaml");
writeFileSync(file, `
groups: { default: { multiplier: 0.5 }, vip: { multiplier: 1.2 } }
users: { alice: { groups: [default] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
channels:
  - { name: c1, protocol: openai, base_url: "https://api.openai.com", keys: [k], groups: [default], models: [m, img], cost: { multiplier: 0.9 } }
  - { name: c2, protocol: openai, base_url: "https://api.openai.com", keys: [k], groups: [vip], models: [m], status: disabled, cost: { prices: { m: { input: 1.5, output: 6 } } } }
models:
  m:
    price:
      input: 2
      output: 8
      cache_read_ratio: 0.25
      audio_input: 16
      service_tiers: { flex: 0.5 }
      tiers: [{ above_input_tokens: 1000, input: 4 }]
  img:
    endpoint: image
    price:
      per_image: 0.04
      variants: [{ when: { size: 1024x1792, quality: hd }, per_image: 0.12 }]
`);

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t) };
  const code = await runCheck(args, io);
  return { code, out, err };
}

// By hand: group default charges × 0.5 and vip × 1.2; channel c1 costs the list × 0.9; c2
// its own price × 1. cache_read = input × 0.25 (2 → 0.5; the tier's 4 → 1); cached audio
// = audio_input 16 × 0.25 = 4; 1-hour writes fall back to 5-minute writes (= input, no
// ratio), image input to input, audio and image output to output; reasoning is output by rule.
const expected = [
  "ok: " + file + " (2 channels, 2 models, 1 tokens)",
  "",
  "m: prices per unit named (tokens per 1M); charged = price × the group's multiplier",
  "service tiers: flex × 0.5 (× the price when the answer, or else the request, names the tier)",
  "groups: default × 0.5, vip × 1.2",
  "channels: c1 (list price × 0.9), c2 (its own price × 1, disabled, below)",
  "",
  "price",
  "  COMPONENT         PER        PRICE  FROM                    default ×0.5  vip ×1.2  cost c1",
  "  input             1M tokens      2  own                                1       2.4      1.8",
  "  cache_read        1M tokens    0.5  input × 0.25                    0.25       0.6     0.45",
  "  cache_write       1M tokens      2  = input                            1       2.4      1.8",
  "  cache_write_1h    1M tokens      2  fallback → cache_write             1       2.4      1.8",
  "  audio_input       1M tokens     16  own                                8      19.2     14.4",
  "  audio_cache_read  1M tokens      4  audio_input × 0.25                 2       4.8      3.6",
  "  image_input       1M tokens      2  fallback → input                   1       2.4      1.8",
  "  output            1M tokens      8  own                                4       9.6      7.2",
  "  reasoning         1M tokens      8  = output                           4       9.6      7.2",
  "  audio_output      1M tokens      8  fallback → output                  4       9.6      7.2",
  "  image_output      1M tokens      8  fallback → output                  4       9.6      7.2",
  "",
  "above 1000 input tokens (the whole request); every other component as the price",
  "  COMPONENT       PER        PRICE  FROM                    default ×0.5  vip ×1.2  cost c1",
  "  input           1M tokens      4  own                                2       4.8      3.6",
  "  cache_read      1M tokens      1  input × 0.25                     0.5       1.2      0.9",
  "  cache_write     1M tokens      4  = input                            2       4.8      3.6",
  "  cache_write_1h  1M tokens      4  fallback → cache_write             2       4.8      3.6",
  "  image_input     1M tokens      4  fallback → input                   2       4.8      3.6",
  "",
  "channel c2: its own price × 1, what it costs the operator",
  "price",
  "  COMPONENT         PER        PRICE  FROM                    cost c2",
  "  input             1M tokens    1.5  own                         1.5",
  "  cache_read        1M tokens    1.5  = input                     1.5",
  "  cache_write       1M tokens    1.5  = input                     1.5",
  "  cache_write_1h    1M tokens    1.5  fallback → cache_write      1.5",
  "  audio_input       1M tokens    1.5  fallback → input            1.5",
  "  audio_cache_read  1M tokens    1.5  fallback → input            1.5",
  "  image_input       1M tokens    1.5  fallback → input            1.5",
  "  output            1M tokens      6  own                           6",
  "  reasoning         1M tokens      6  = output                      6",
  "  audio_output      1M tokens      6  fallback → output             6",
  "  image_output      1M tokens      6  fallback → output             6",
  "",
  "img: prices per unit named (tokens per 1M); charged = price × the group's multiplier",
  "groups: default × 0.5",
  "channels: c1 (list price × 0.9)",
  "",
  "price",
  "  COMPONENT  PER    PRICE  FROM  default ×0.5  cost c1",
  "  per_image  image   0.04  own           0.02    0.036",
  "",
  "variant when size=1024x1792, quality=hd; every other component as the price",
  "  COMPONENT  PER    PRICE  FROM  default ×0.5  cost c1",
  "  per_image  image   0.12  own           0.06    0.108",
].join("\n") + "\n";

test("--prices MODEL…: every component with its price, where it comes from, each tier, variant and service tier, the groups' charges and the channels' costs", async () => {
  const { code, out, err } = await run(["--config", file, "--prices", "m", "img"]);
  assert.equal(err, "");
  assert.equal(code, 0);
  assert.equal(out, expected);
});

test("--prices alone prints every model, in the config's order", async () => {
  const { code, out } = await run(["--config", file, "--prices"]);
  assert.equal(code, 0);
  assert.equal(out, expected);
});

test("--prices --json: one line per model, exact decimals; the ok line goes to stderr", async () => {
  const { code, out, err } = await run(["--config", file, "--prices", "m", "--json"]);
  assert.equal(code, 0);
  assert.match(err, /^ok: /);
  const lines = out.trimEnd().split("\n");
  assert.equal(lines.length, 1);
  const table = JSON.parse(lines[0]);
  assert.deepEqual(table.serviceTiers, { flex: 0.5 });
  assert.deepEqual(table.groups, { default: 0.5, vip: 1.2 });
  const [base, tier] = table.sections;
  assert.deepEqual(base.rows.find((r: { component: string }) => r.component === "cache_read"), {
    component: "cache_read", per: "1M tokens", price: 0.5, from: "input × 0.25", fallback: false, charged: { default: 0.25, vip: 0.6 }, cost: { c1: 0.45 },
  });
  assert.deepEqual(base.rows.find((r: { component: string }) => r.component === "audio_output"), {
    component: "audio_output", per: "1M tokens", price: 8, from: "output", fallback: true, charged: { default: 4, vip: 9.6 }, cost: { c1: 7.2 },
  });
  assert.equal(tier.kind, "tier");
  assert.equal(tier.aboveInputTokens, 1000);
  assert.deepEqual(tier.rows.map((r: { component: string }) => r.component), ["input", "cache_read", "cache_write", "cache_write_1h", "image_input"]);
  assert.deepEqual(table.channels.map((c: { channel: string; basis: string }) => [c.channel, c.basis]), [["c1", "multiplier"], ["c2", "own"]]);
  assert.equal(table.channels[1].sections[0].rows[0].cost.c2, 1.5);
  // Written as exact decimals, not through a float.
  assert.match(lines[0], /"charged":\{"default":0\.25,"vip":0\.6\},"cost":\{"c1":0\.45\}/);
});

test("an unknown model exits 1 naming it, after the usual check", async () => {
  const { code, out, err } = await run(["--config", file, "--prices", "m", "nope"]);
  assert.equal(code, 1);
  assert.match(out, /^ok: /);
  assert.equal(err, `gateway check: no model 'nope' in ${file}\n`);
});

test("a model named without --prices is a stray argument (exit 2); --json needs --prices", async () => {
  const stray = await run(["--config", file, "m"]);
  assert.equal(stray.code, 2);
  assert.match(stray.err, /unexpected argument 'm' for 'check'/);
  const json = await run(["--config", file, "--json"]);
  assert.equal(json.code, 2);
  assert.match(json.err, /--json goes with --prices/);
});
