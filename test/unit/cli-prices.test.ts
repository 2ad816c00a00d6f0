// `gateway prices import FILE` driven through main(): the diff text against a gateway.yaml,
// --write editing the file in place (comments, layout and untouched models byte for byte)
// into a config the loader compiles to the expected prices, and every refusal: a bad
// command line, an unknown format, JSON that is not, an amount not exact, an ambiguous
// name, and a config that does not pass check.

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/format.js";
import { compileSource } from "../../src/config/index.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/prices/${name}`, import.meta.url));
const LITELLM = fixture("litellm-sample.json");
const MODELS_DEV = fixture("models-dev-sample.json");
const dir = mkdtempSync(join(tmpdir(), "gateway-prices-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t) };
  const code = await main(args, io);
  return { code, out, err };
}

const head = `# The team's gateway: prices follow the providers' lists.
groups: { default: {} }
users: { alice: { groups: [default] } }
tokens:
  - { name: t1, key: sk-one, user: alice, group: default }
channels:
  - name: openai
    protocol: openai
    base_url: https://api.openai.com
    keys: [\${OPENAI_API_KEY:-}]   # rotated
    groups: [default]
    models: [gpt-4o, gpt-4o-mini, gpt-5, whisper]
    model_map: { gpt-5: gpt-5-2025-08-07, whisper: groq/whisper-large-v3 }
  - name: anthropic
    protocol: anthropic
    base_url: https://api.anthropic.com
    keys: [k]
    groups: [default]
    models: [claude-sonnet-4-5]
`;

const models = `
# The price list.
models:
  gpt-4o:
    endpoint: chat              # the everyday model
    price:
      input: 2.5
      output: 10                # thinking is output
      cache_read_ratio: 0.5     # half price

  gpt-4o-mini:
    price: { input: 0.15, output: 0.6, cache_read_ratio: 0.5 }

  gpt-5:
    price: { input: 1, output: 8, per_request: 0.01 }   # an old guess

  claude-sonnet-4-5:
    price: { input: 3, output: 15, cache_read_ratio: 0.1, cache_write_ratio: 1.25 }

  whisper:
    endpoint: transcription
    price: { per_second: 0.0001 }

  house-model:
    price: { input: 1 }
`;

const config = head + models;

function configFile(name: string, text = config): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("gateway prices import: the difference", () => {
  test("per model, field: old → new, added and removed; exit 0; the file untouched", async () => {
    const path = configFile("diff.yaml");
    const { code, out, err } = await run("prices", "import", LITELLM, "--config", path);
    assert.equal(err, "");
    assert.equal(code, 0);
    assert.equal(out, `gpt-4o: from litellm "gpt-4o", openai
  service_tiers.priority: added 1.7
gpt-5: from litellm "gpt-5-2025-08-07", openai
  input: 1 → 1.25
  output: 8 → 10
  cache_read_ratio: added 0.1
  service_tiers.flex: added 0.5
  service_tiers.priority: added 2
  per_request: removed (was 0.01)
claude-sonnet-4-5: from litellm "claude-sonnet-4-5", anthropic
  cache_write_1h_ratio: added 2
  tool_calls.web_search: added 10
  tiers[above 200000].input: added 6
  tiers[above 200000].output: added 22.5
whisper: from litellm "groq/whisper-large-v3", groq
  per_second: 0.0001 → 0.00003083
unchanged: gpt-4o-mini
not in ${LITELLM}: house-model
notes:
  gpt-4o-mini: service tier "priority" left out: its prices are not one exact multiplier (6 places) of the base prices
4 models to change, 0 to add
run with --write to apply to ${path}
`);
    assert.equal(readFileSync(path, "utf8"), config);
  });

  test("--models limits the comparison and adds the named models gateway.yaml lacks", async () => {
    const path = configFile("models.yaml");
    const { code, out } = await run("prices", "import", LITELLM, "--config", path, "--models", "gpt-4o-mini,gpt-4o-mini-realtime-preview");
    assert.equal(code, 0);
    assert.equal(out, `gpt-4o-mini-realtime-preview (new, endpoint realtime): from litellm "gpt-4o-mini-realtime-preview", openai
  input: added 0.6
  output: added 2.4
  cache_read_ratio: added 0.5
  audio_input: added 10
  audio_cache_read: added 0.3
  audio_output: added 20
unchanged: gpt-4o-mini
notes:
  gpt-4o-mini: service tier "priority" left out: its prices are not one exact multiplier (6 places) of the base prices
0 models to change, 1 to add
run with --write to apply to ${path}
`);
  });

  test("--all adds every priced model with an endpoint the config lacks, and says why the others are not", async () => {
    const path = configFile("all.yaml");
    const { code, out } = await run("prices", "import", LITELLM, "--config", path, "--all");
    assert.equal(code, 0);
    const added = [...out.matchAll(/^(\S+) \(new, endpoint (\w+)\):/gm)].map((m) => `${m[1]} ${m[2]}`);
    assert.deepEqual(added, [
      "claude-haiku-4-5 chat", "claude-opus-4-1 chat", "gemini-2.5-flash-lite chat", "gpt-4.1 chat", "gpt-4o-audio-preview chat",
      "gpt-4o-mini-realtime-preview realtime", "gpt-4o-mini-tts speech", "gpt-4o-realtime-preview realtime",
      "gpt-4o-search-preview chat", "gpt-4o-transcribe transcription", "gpt-image-1.5 image", "dall-e-2 image", "gpt-image-1 image",
    ]);
    // gpt-5-2025-08-07 and groq/whisper-large-v3 are what gpt-5 and whisper map to: not added again.
    assert.doesNotMatch(out, /^(gpt-5-2025-08-07|whisper-large-v3) \(new/m);
    assert.match(out, /^  gpt-3\.5-turbo-instruct: mode completion has no gateway endpoint; not added$/m);
    assert.match(out, /^  dall-e-3: the list gives it no price; not added$/m);
    assert.match(out, /^4 models to change, 13 to add$/m);
    // Every shape the sample gives passes the schema and compiles.
    assert.equal((await run("prices", "import", LITELLM, "--config", path, "--all", "--write")).code, 0);
    const { runtime } = compileSource(readFileSync(path, "utf8"), { path, env: {} });
    assert.equal(runtime.models.size, 6 + 13);
    assert.equal(runtime.models.get("gpt-4o-transcribe")!.price.audioInputPer1M, 2_500_000_000n);
    assert.equal(runtime.models.get("gpt-image-1.5")!.price.imageOutputPer1M, 32_000_000_000n);
  });

  test("models.dev: a name several providers list is settled by the channels' protocol", async () => {
    const path = configFile("md.yaml", `${head}
models:
  gpt-5: { price: { input: 1.25, output: 10, cache_read_ratio: 0.1, service_tiers: { flex: 0.5 } } }
  claude-sonnet-4-5: { price: { input: 3, output: 15 } }
`);
    const { code, out } = await run("prices", "import", MODELS_DEV, "--config", path);
    assert.equal(code, 0);
    // service_tiers is none of models.dev's keys: kept, not removed.
    assert.equal(out, `claude-sonnet-4-5: from models.dev "claude-sonnet-4-5", anthropic
  cache_read_ratio: added 0.1
  cache_write_ratio: added 1.25
unchanged: gpt-5
1 model to change, 0 to add
run with --write to apply to ${path}
`);
  });
});

describe("gateway prices import --write", () => {
  test("edits only the changed prices, keeps comments and layout, and the result compiles to the list's prices", async () => {
    const path = configFile("write.yaml");
    const { code, out, err } = await run("prices", "import", LITELLM, "--config", path, "--write");
    assert.equal(err, "");
    assert.equal(code, 0);
    assert.match(out, /^wrote .*write\.yaml: 4 changed, 0 added$/m);
    const text = readFileSync(path, "utf8");
    assert.equal(text, head + `
# The price list.
models:
  gpt-4o:
    endpoint: chat              # the everyday model
    price:
      input: 2.5
      output: 10                # thinking is output
      cache_read_ratio: 0.5     # half price
      service_tiers: { priority: 1.7 }

  gpt-4o-mini:
    price: { input: 0.15, output: 0.6, cache_read_ratio: 0.5 }

  gpt-5:
    price: { input: 1.25, output: 10, cache_read_ratio: 0.1, service_tiers: { flex: 0.5, priority: 2 } }   # an old guess

  claude-sonnet-4-5:
    price: { input: 3, output: 15, cache_read_ratio: 0.1, cache_write_ratio: 1.25, cache_write_1h_ratio: 2, tool_calls: { web_search: 10 }, tiers: [{ above_input_tokens: 200000, input: 6, output: 22.5 }] }

  whisper:
    endpoint: transcription
    price: { per_second: 0.00003083 }

  house-model:
    price: { input: 1 }
`);
    const { runtime } = compileSource(text, { path, env: {} });
    const sonnet = runtime.models.get("claude-sonnet-4-5")!.price;
    assert.equal(sonnet.cacheWrite1hRatioPpm, 2_000_000n);
    assert.deepEqual(sonnet.toolCallsPer1k, { web_search: 10_000_000_000n });
    assert.equal(sonnet.tiers?.[0].aboveInputTokens, 200_000);
    assert.equal(sonnet.tiers?.[0].price.inputPer1M, 6_000_000_000n);
    assert.equal(sonnet.tiers?.[0].price.outputPer1M, 22_500_000_000n);
    assert.equal(sonnet.tiers?.[0].price.cacheReadRatioPpm, 100_000n);
    assert.deepEqual({ ...runtime.models.get("gpt-5")!.price.serviceTiersPpm }, { flex: 500_000n, priority: 2_000_000n });
    assert.equal(runtime.models.get("gpt-5")!.price.perRequest, undefined);
    assert.equal(runtime.models.get("whisper")!.price.perSecond, 30_830n);
    // Written beside the file and renamed over it: nothing is left behind.
    assert.deepEqual(readdirSync(dir).filter((f) => f.includes("write.yaml") && f !== "write.yaml"), []);
    // A second import finds nothing to change.
    const again = await run("prices", "import", LITELLM, "--config", path, "--write");
    assert.equal(again.code, 0);
    assert.match(again.out, /unchanged: gpt-4o, gpt-4o-mini, gpt-5, claude-sonnet-4-5, whisper\n/);
    assert.match(again.out, /nothing to write\n$/);
    assert.equal(readFileSync(path, "utf8"), text);
  });

  test("added models go at the end of models, spaced like the others, and compile", async () => {
    const path = configFile("add.yaml");
    const { code } = await run("prices", "import", LITELLM, "--config", path, "--write", "--models", "gpt-4o-mini-realtime-preview,gpt-image-1,gpt-4o-audio-preview");
    assert.equal(code, 0);
    const text = readFileSync(path, "utf8");
    assert.equal(text, config + `
  gpt-4o-mini-realtime-preview:
    endpoint: realtime
    max_output_tokens: 4096
    price: { input: 0.6, output: 2.4, cache_read_ratio: 0.5, audio_input: 10, audio_cache_read: 0.3, audio_output: 20 }

  gpt-image-1:
    endpoint: image
    price: { per_image: 0.167, variants: [{ when: { size: "1024x1024", quality: high }, per_image: 0.167 }] }

  gpt-4o-audio-preview:
    endpoint: chat
    max_output_tokens: 16384
    price: { input: 2.5, output: 10, audio_input: 40, audio_output: 80 }
`);
    const { runtime } = compileSource(text, { path, env: {} });
    const realtime = runtime.models.get("gpt-4o-mini-realtime-preview")!;
    assert.equal(realtime.endpoint, "realtime");
    assert.equal(realtime.maxOutputTokens, 4096);
    assert.equal(realtime.price.audioCacheReadPer1M, 300_000_000n);
    assert.equal(realtime.price.cacheReadRatioPpm, 500_000n);
    const image = runtime.models.get("gpt-image-1")!.price;
    assert.equal(image.perImage, 167_000_000n);
    assert.deepEqual(image.variants?.map((v) => [{ ...v.when }, v.price.perImage]), [[{ size: "1024x1024", quality: "high" }, 167_000_000n]]);
  });

  test("a block price gets new keys at its indent and loses removed lines, their comments with them", async () => {
    const small = `groups: { default: {} }
users: { alice: { groups: [default] } }
tokens: [{ name: t1, key: sk-one, user: alice, group: default }]
channels:
  - { name: o, protocol: openai, base_url: "https://api.openai.com", keys: [k], groups: [default], models: [gpt-5], model_map: { gpt-5: gpt-5-2025-08-07 } }
models:
  gpt-5:
    price:
      input: 1          # guessed
      per_request: 0.01 # guessed too
      output: 8
`;
    const path = configFile("block.yaml", small);
    const { code, err } = await run("prices", "import", LITELLM, "--config", path, "--write");
    assert.equal(err, "");
    assert.equal(code, 0);
    assert.equal(readFileSync(path, "utf8"), small.replace(`      input: 1          # guessed
      per_request: 0.01 # guessed too
      output: 8
`, `      input: 1.25          # guessed
      output: 10
      cache_read_ratio: 0.1
      service_tiers: { flex: 0.5, priority: 2 }
`));
  });

  test("a block tier list becomes flow text in place; a removed block value goes with its lines", async () => {
    const before = `groups: { default: {} }
users: { alice: { groups: [default] } }
tokens: [{ name: t1, key: sk-one, user: alice, group: default }]
channels:
  - { name: a, protocol: anthropic, base_url: "https://api.anthropic.com", keys: [k], groups: [default], models: [claude-sonnet-4-5] }
models:
  claude-sonnet-4-5:
    price:
      input: 3
      # long context
      tiers:
        - above_input_tokens: 200000   # the 1M beta
          input: 5
      output: 15
      service_tiers:
        priority: 1.5
`;
    const path = configFile("tiers.yaml", before);
    const { code, err } = await run("prices", "import", LITELLM, "--config", path, "--write");
    assert.equal(err, "");
    assert.equal(code, 0);
    assert.equal(readFileSync(path, "utf8"), before.replace(/      tiers:[\s\S]*$/, `      tiers: [{ above_input_tokens: 200000, input: 6, output: 22.5 }]
      output: 15
      cache_read_ratio: 0.1
      cache_write_ratio: 1.25
      cache_write_1h_ratio: 2
      tool_calls: { web_search: 10 }
`));
    const { runtime } = compileSource(readFileSync(path, "utf8"), { path, env: {} });
    assert.equal(runtime.models.get("claude-sonnet-4-5")!.price.tiers?.[0].price.cacheWrite1hRatioPpm, 2_000_000n);
  });

  test("refuses to write when gateway.yaml does not pass check, and leaves it alone", async () => {
    const broken = config.replace("keys: [k]", "keys: [${PRICES_TEST_UNSET_KEY}]");
    const path = configFile("broken.yaml", broken);
    const { code, err } = await run("prices", "import", LITELLM, "--config", path, "--write");
    assert.equal(code, 1);
    assert.match(err, /PRICES_TEST_UNSET_KEY/);
    assert.match(err, /does not pass gateway check before the import; fix it first \(nothing written\)/);
    assert.equal(readFileSync(path, "utf8"), broken);
  });
});

describe("gateway prices import: refusals", () => {
  test("a bad command line is a usage error (exit 2)", async () => {
    assert.equal((await run("prices")).code, 2);
    assert.match((await run("prices", "export", LITELLM)).err, /unknown action 'export': expected 'import'/);
    assert.match((await run("prices", "import")).err, /needs the price list FILE/);
    assert.match((await run("prices", "import", LITELLM, "--format", "csv")).err, /--format 'csv': expected one of litellm, models.dev/);
    assert.match((await run("prices", "import", LITELLM, "--all", "--models", "a")).err, /--all and --models exclude each other/);
    assert.match((await run("prices", "import", LITELLM, "extra")).err, /unexpected argument 'extra'/);
  });

  test("a file of no known format, or not JSON, is refused naming the file", async () => {
    const path = configFile("c.yaml");
    const unknown = join(dir, "unknown.json");
    writeFileSync(unknown, JSON.stringify({ "gpt-4o": { price: { input: 2.5 } } }));
    const a = await run("prices", "import", unknown, "--config", path);
    assert.equal(a.code, 1);
    assert.match(a.err, new RegExp(`^${unknown}: cannot tell its format: .*name it with --format\\n$`));
    const broken = join(dir, "broken.json");
    writeFileSync(broken, '{ "gpt-4o": { "input_cost_per_token": 2.5e-06, } }');
    const b = await run("prices", "import", broken, "--config", path);
    assert.equal(b.code, 1);
    assert.match(b.err, new RegExp(`^${broken}: not JSON: `));
    assert.equal(a.out + b.out, "");
  });

  test("an amount not exact at 9 places: exit 1 naming the file, the entry and the key; --write writes nothing", async () => {
    const path = configFile("inexact.yaml");
    const list = join(dir, "inexact.json");
    writeFileSync(list, JSON.stringify({ "gpt-4o": { input_cost_per_token: 2.5000000001e-06, output_cost_per_token: 1e-05, litellm_provider: "openai", mode: "chat" } }));
    const shown = await run("prices", "import", list, "--config", path);
    assert.equal(shown.code, 1);
    assert.equal(shown.err, `${list}: gpt-4o: entry "gpt-4o" (openai): input_cost_per_token 0.0000025000000001 is 2.5000000001 per 1M tokens: more than 9 decimal places, not exact\n`);
    const written = await run("prices", "import", list, "--config", path, "--write");
    assert.equal(written.code, 1);
    assert.match(written.err, /nothing written \(1 model cannot be imported as asked\)/);
    assert.equal(readFileSync(path, "utf8"), config);
  });

  test("a name several providers list at different prices needs --provider", async () => {
    const path = configFile("ambiguous.yaml", `${head}
models:
  gpt-5: { price: { input: 1 } }
`.replace("models: [claude-sonnet-4-5]", "models: [claude-sonnet-4-5, gpt-5]").replace("models: [gpt-4o, gpt-4o-mini, gpt-5, whisper]", "models: [gpt-4o]"));
    const a = await run("prices", "import", MODELS_DEV, "--config", path);
    assert.equal(a.code, 1);
    assert.match(a.err, /gpt-5: several providers list "gpt-5" at different prices \(openai, github-copilot\): name one with --provider/);
    const b = await run("prices", "import", MODELS_DEV, "--config", path, "--provider", "openai");
    assert.equal(b.code, 0);
    assert.match(b.out, /^gpt-5: from models.dev "gpt-5", openai\n  input: 1 → 1.25\n  output: added 10\n  cache_read_ratio: added 0.1\n/);
  });

  test("a model whose kind has no endpoint is not added", async () => {
    const path = configFile("instruct.yaml");
    const { code, err } = await run("prices", "import", LITELLM, "--config", path, "--models", "gpt-3.5-turbo-instruct,no-such-model");
    assert.equal(code, 1);
    assert.match(err, /gpt-3\.5-turbo-instruct: mode completion has no gateway endpoint/);
    assert.match(err, /no-such-model: not in the list/);
  });
});
