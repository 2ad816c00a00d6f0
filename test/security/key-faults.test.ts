// Key faults come from the provider alone (issue 18, item 1). Providers quote unknown field
// names in their 400 messages: a client whose JSON carries a field named "Your credit
// balance is too low" (Anthropic: "<field>: Extra inputs are not permitted") or
// "API_KEY_INVALID" (Gemini: "Unknown name \"API_KEY_INVALID\": Cannot find field.") must
// not take any key out of rotation, on the paid routes or the free count-tokens ones, nor
// may an OpenAI-Organization header the keys do not belong to. The fakes answer as the
// providers do. Keys that really are out of credit or invalid (said in structured fields;
// for Anthropic's credit, a key the gateway's own probe also finds out of credit) are
// taken out, and the next request goes to the next key.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { compileSource } from "../../src/config/index.js";
import { KeyProbes } from "../../src/routing/key-probes.js";
import { keyFingerprint } from "../../src/routing/key-health.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { apiKeyOf, isKeyProbe, startFakeAnthropic, type FakeAnthropic } from "../helpers/fake-anthropic.js";
import { startFakeGemini, type FakeGemini } from "../helpers/fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { bearerKey, type BaseReceived, type KeyFaultScript } from "../helpers/fake-server.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { exited, runGateway, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { TOKEN, config, rawRequest, type Obj, type RawResponse } from "../integration/support.js";

const run = randomBytes(3).toString("hex");
const newKey = (label: string) => `sk-${label}-${run}-SECRET-${randomBytes(6).toString("hex")}`;

const CLAUDE = "claude-sonnet-4-5";
const GEMINI = "gemini-2.5-flash";
/** The field names of the attack: each the words a provider's key-fault answer holds. */
const ANTHROPIC_BAIT = ["Your credit balance is too low", "This organization has been disabled"];
const GEMINI_BAIT = "API_KEY_INVALID";
const OTHER_PROJECTS_FILE = "files/of-another-project";

const faults = new Map<string, KeyFaultScript>();
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let openai: FakeOpenAI;

const json = { "content-type": "application/json" };

function messages(base: string, extra: Obj = {}, path = "/v1/messages"): Promise<RawResponse> {
  const count = path.endsWith("count_tokens");
  return rawRequest(`${base}${path}`, {
    method: "POST", headers: { ...json, "x-api-key": TOKEN, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: CLAUDE, ...(count ? {} : { max_tokens: 8 }), messages: [{ role: "user", content: "hi" }], ...extra }),
  });
}

function generate(base: string, extra: Obj = {}, action = "generateContent"): Promise<RawResponse> {
  return rawRequest(`${base}/v1beta/models/${GEMINI}:${action}`, {
    method: "POST", headers: { ...json, "x-goog-api-key": TOKEN },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }], ...extra }),
  });
}

function chat(base: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(`${base}/v1/chat/completions`, {
    method: "POST", headers: { ...json, authorization: `Bearer ${TOKEN}`, ...headers },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
  });
}

const keyOf = (r: BaseReceived): string =>
  (r as BaseReceived & { key?: string }).key ?? (r.headers["x-api-key"] !== undefined ? apiKeyOf(r) : bearerKey(r.headers));

/** The keys a fake was asked with by clients' requests since `from` (the gateway's probes apart). */
const clientKeys = (fake: { received: BaseReceived[] }, from: number) => fake.received.slice(from).filter((r) => !isKeyProbe(r)).map(keyOf);
/** The keys the gateway probed since `from`. */
const probedKeys = (fake: { received: BaseReceived[] }, from: number) => fake.received.slice(from).filter(isKeyProbe).map(keyOf);

function channelOf(name: string, protocol: "anthropic" | "gemini" | "openai", keys: string[], extra: Obj = {}): Obj {
  const fake = { anthropic, gemini, openai }[protocol];
  const models = { anthropic: [CLAUDE], gemini: [GEMINI], openai: ["gpt-4o-mini"] }[protocol];
  return { name, protocol, base_url: fake.url, keys, groups: ["default"], models, ...extra };
}

/** gateway_channel_key_up of one key, as /metrics says it: `reason value`. */
async function keyUp(base: string, channel: string, key: string): Promise<string> {
  const text = (await rawRequest(`${base}/metrics`)).text;
  assert.ok(!text.includes(`-${run}-SECRET-`), "/metrics never holds a key");
  const m = new RegExp(`gateway_channel_key_up\\{channel="${channel}",key="${keyFingerprint(key)}",reason="(\\w+)"\\} (\\d)`).exec(text);
  assert.ok(m, `no key_up series for ${channel}: ${text.split("\n").filter((l) => l.includes("key_up")).join("\n")}`);
  return `${m[1]} ${m[2]}`;
}

/** `gateway channels` as an operator runs it (in this process): the KEY STATE column of each key. */
async function channelsCli(file: string, base: string, keys: string[]): Promise<string[]> {
  let out = "";
  const code = await main(["channels", "--config", file, "--url", `${base}/metrics`], { out: (t) => void (out += t), err: (t) => void (out += t) });
  assert.equal(code, 0, out);
  assert.ok(!out.includes(`-${run}-SECRET-`));
  return keys.map((k) => out.split("\n").find((l) => l.includes(keyFingerprint(k)))?.split(/\s{2,}/)[4] ?? "missing");
}

before(async () => {
  anthropic = await startFakeAnthropic({ keyFaults: faults, rejectUnknownFields: true });
  // Gemini answers a file of another project with a bare 403 PERMISSION_DENIED (no ErrorInfo reason).
  gemini = await startFakeGemini({
    keyFaults: faults, rejectUnknownFields: true,
    script: (r) => r.raw.includes(OTHER_PROJECTS_FILE)
      ? { kind: "error", status: 403, message: `You do not have permission to access the File ${OTHER_PROJECTS_FILE} or it may not exist.` }
      : { kind: "ok" },
  });
  openai = await startFakeOpenAI({ keyFaults: faults, organization: "org-operator" });
});

after(async () => {
  await Promise.all([anthropic?.close(), gemini?.close(), openai?.close()]);
  destroyAgents();
});

describe("a field named like a key fault takes no key out (a real gateway process, and after its restart)", () => {
  let dir: string;
  let gw: { child: Child; base: string } | undefined;
  const claudeKeys = [newKey("claude-1"), newKey("claude-2")];
  const geminiKeys = [newKey("gemini-1"), newKey("gemini-2")];
  const yaml = (port: number) => config({
    server: { listen: `127.0.0.1:${port}`, drain_timeout: "2s" },
    channels: [channelOf("claude", "anthropic", claudeKeys), channelOf("gemini", "gemini", geminiKeys)],
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-keyfaults-"));
  });
  after(async () => {
    if (gw) {
      gw.child.proc.kill("SIGKILL");
      await gw.child.exit;
    }
    await rm(dir, { recursive: true, force: true });
  });

  test("Anthropic: messages and count_tokens whose JSON names the credit or disabled-organization text", async () => {
    gw = await serveGateway({ file: join(dir, "gateway.yaml"), cwd: dir, yaml, readyMs: 20_000 });
    const from = anthropic.received.length;
    for (const [i, bait] of ANTHROPIC_BAIT.entries()) {
      const r = await messages(gw.base, { [bait]: true });
      // The client's normal answer: the provider's own 400, as it came.
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json?.error?.type, "invalid_request_error");
      assert.equal(r.json?.error?.message, `${bait}: Extra inputs are not permitted`);
      assert.deepEqual(clientKeys(anthropic, from).slice(i), [claudeKeys[i]], "not retried on another key");
    }
    const counted = await messages(gw.base, { [ANTHROPIC_BAIT[0]]: true }, "/v1/messages/count_tokens");
    assert.equal(counted.status, 400, counted.text);
    assert.match(counted.text, /Extra inputs are not permitted/);
    // Each key was probed once (the gateway's own one-token request), and answered.
    assert.deepEqual(probedKeys(anthropic, from).sort(), [...claudeKeys].sort());
    const metrics = (await rawRequest(`${gw.base}/metrics`)).text;
    assert.match(metrics, /gateway_key_probes_total\{channel="claude",outcome="healthy"\} 2/);

    // Every key still serves: the next requests are answered, on the keys the bait named.
    const next = anthropic.received.length;
    for (let i = 0; i < 4; i++) assert.equal((await messages(gw.base)).status, 200);
    assert.deepEqual(new Set(clientKeys(anthropic, next)), new Set(claudeKeys), "both keys in rotation");
    for (const k of claudeKeys) assert.equal(await keyUp(gw.base, "claude", k), "none 1");
  });

  test("Gemini: generateContent and countTokens whose JSON has a field named API_KEY_INVALID", async () => {
    assert.ok(gw, "the gateway of the test before");
    const from = gemini.received.length;
    for (const action of ["generateContent", "countTokens", "generateContent"]) {
      const r = await generate(gw.base, { [GEMINI_BAIT]: 1 }, action);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json?.error?.status, "INVALID_ARGUMENT");
      assert.match(r.json?.error?.message, /Unknown name "API_KEY_INVALID"/);
    }
    assert.equal(clientKeys(gemini, from).length, 3, "each request asked once: no retry on another key");
    const next = gemini.received.length;
    for (let i = 0; i < 4; i++) assert.equal((await generate(gw.base)).status, 200);
    assert.deepEqual(new Set(clientKeys(gemini, next)), new Set(geminiKeys), "both keys in rotation");
    for (const k of geminiKeys) assert.equal(await keyUp(gw.base, "gemini", k), "none 1");
  });

  test("`gateway channels` shows every key up, and after a restart every key still serves", async () => {
    assert.ok(gw, "the gateway of the tests before");
    const cli = runGateway(["channels", "--config", join(dir, "gateway.yaml")], dir);
    const { code } = await exited(cli, 20_000);
    assert.equal(code, 0, cli.stderr + cli.stdout);
    for (const k of [...claudeKeys, ...geminiKeys]) {
      assert.match(cli.stdout, new RegExp(`${keyFingerprint(k)}\\s+up\\s+-`), cli.stdout);
    }
    gw.child.proc.kill("SIGTERM");
    await exited(gw.child, 10_000);
    gw = await serveGateway({ file: join(dir, "gateway.yaml"), cwd: dir, yaml, readyMs: 20_000 });
    const a = anthropic.received.length;
    const g = gemini.received.length;
    for (let i = 0; i < 2; i++) {
      assert.equal((await messages(gw.base)).status, 200);
      assert.equal((await generate(gw.base)).status, 200);
    }
    assert.deepEqual(new Set(clientKeys(anthropic, a)), new Set(claudeKeys));
    assert.deepEqual(new Set(clientKeys(gemini, g)), new Set(geminiKeys));
  });
});

describe("key faults in process", () => {
  const open: TestGateway[] = [];
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-keyfaults-cli-"));
  });
  after(async () => {
    for (const gw of open) await gw.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function gateway(channels: Obj[]): Promise<{ gw: TestGateway; file: string }> {
    const yaml = config({ channels });
    const gw = await startTestGateway(yaml);
    open.push(gw);
    const file = join(dir, `${open.length}.yaml`);
    await writeFile(file, yaml);
    return { gw, file };
  }

  test("many requests with the bait at once: one probe for the key, nothing billed, the key stays", async () => {
    const key = newKey("burst");
    const { gw, file } = await gateway([channelOf("burst", "anthropic", [key])]);
    const from = anthropic.received.length;
    const answers = await Promise.all(Array.from({ length: 8 }, () => messages(gw.url, { [ANTHROPIC_BAIT[0]]: "x" })));
    for (const r of answers) assert.equal(r.status, 400, r.text);
    assert.deepEqual(probedKeys(anthropic, from), [key], "one probe in flight per key, not one per request");
    assert.equal(gw.ledger.spentByUser("alice"), 0n, "neither the refusals nor the probe billed anyone");
    assert.deepEqual(await channelsCli(file, gw.url, [key]), ["up"]);
    const r = await messages(gw.url);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(clientKeys(anthropic, from).at(-1), key, "served by the key the bait named");
  });

  test("an OpenAI-Organization header the keys do not belong to (401 mismatched_organization) takes no key out", async () => {
    const keys = [newKey("org-1"), newKey("org-2")];
    const { gw, file } = await gateway([channelOf("org", "openai", keys)]);
    const from = openai.received.length;
    const r = await chat(gw.url, { "openai-organization": "org-someone-else" });
    // The request's own answer (or, once such headers are no longer forwarded, a normal one): never a key out.
    assert.ok(r.status === 200 || r.json?.error?.code === "mismatched_organization", r.text);
    assert.equal(clientKeys(openai, from).length, 1, "not retried on another key or channel");
    assert.deepEqual(await channelsCli(file, gw.url, keys), ["up", "up"]);
    const next = openai.received.length;
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw.url)).status, 200);
    assert.deepEqual(new Set(clientKeys(openai, next)), new Set(keys), "both keys in rotation");
  });

  // (A Files API file of the operator's project is refused by the gateway itself, 404: tenants.test.ts.)
  test("Gemini: a 403 on a file the request names (no ErrorInfo blaming the key) is the request's answer and takes no key out", async () => {
    const keys = [newKey("file-1"), newKey("file-2")];
    const { gw, file } = await gateway([channelOf("files", "gemini", keys)]);
    const from = gemini.received.length;
    const r = await generate(gw.url, { contents: [{ role: "user", parts: [{ fileData: { mimeType: "text/plain", fileUri: `gs://another-projects-bucket/${OTHER_PROJECTS_FILE}` } }] }] });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json?.error?.status, "PERMISSION_DENIED");
    assert.deepEqual(clientKeys(gemini, from), [keys[0]], "not retried on another key");
    assert.deepEqual(await channelsCli(file, gw.url, keys), ["up", "up"]);
    const next = gemini.received.length;
    for (let i = 0; i < 2; i++) assert.equal((await generate(gw.url)).status, 200);
    assert.deepEqual(new Set(clientKeys(gemini, next)), new Set(keys));
  });

  test("Anthropic: a key really out of credit is confirmed by the probe, taken out, and the request goes to the next key", async () => {
    const [broke, paid] = [newKey("broke"), newKey("paid")];
    faults.set(broke, "no_credit");
    const { gw, file } = await gateway([channelOf("credit", "anthropic", [broke, paid])]);
    const from = anthropic.received.length;
    const r = await messages(gw.url);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(clientKeys(anthropic, from), [broke, paid]);
    assert.deepEqual(probedKeys(anthropic, from), [broke], "the gateway's own request saw the same fault");
    assert.equal(await keyUp(gw.url, "credit", broke), "quota 0");
    assert.deepEqual(await channelsCli(file, gw.url, [broke, paid]), ["out", "up"]);
    const next = anthropic.received.length;
    for (let i = 0; i < 2; i++) assert.equal((await messages(gw.url, {}, i === 0 ? "/v1/messages" : "/v1/messages/count_tokens")).status, 200);
    assert.deepEqual(clientKeys(anthropic, next), [paid, paid], "the next requests go to the next key");
    assert.ok(!r.text.includes("credit balance"));
  });

  for (const [protocol, fault] of [["gemini", "invalid_key"], ["openai", "invalid_key"], ["openai", "no_credit"], ["gemini", "no_credit"]] as const) {
    test(`${protocol}: a key answered ${fault} in structured fields is taken out, and the request goes to the next key`, async () => {
      const [bad, good] = [newKey(`${protocol}-${fault}-bad`), newKey(`${protocol}-${fault}-good`)];
      faults.set(bad, fault);
      const name = `${protocol}-${fault}`.replace("_", "-");
      const { gw, file } = await gateway([channelOf(name, protocol, [bad, good])]);
      const fake = protocol === "gemini" ? gemini : openai;
      const ask = () => (protocol === "gemini" ? generate(gw.url) : chat(gw.url));
      const from = fake.received.length;
      assert.equal((await ask()).status, 200);
      assert.deepEqual(clientKeys(fake, from), [bad, good]);
      assert.equal(await keyUp(gw.url, name, bad), `${fault === "no_credit" ? "quota" : "auth"} 0`);
      assert.deepEqual(await channelsCli(file, gw.url, [bad, good]), ["out", "up"]);
      const next = fake.received.length;
      assert.equal((await ask()).status, 200);
      assert.deepEqual(clientKeys(fake, next), [good]);
    });
  }

  test("gemini: countTokens on a key that really is invalid takes it out too", async () => {
    const [bad, good] = [newKey("count-bad"), newKey("count-good")];
    faults.set(bad, "invalid_key");
    const { gw } = await gateway([channelOf("gemini-count", "gemini", [bad, good])]);
    const from = gemini.received.length;
    assert.equal((await generate(gw.url, {}, "countTokens")).status, 200);
    assert.deepEqual(clientKeys(gemini, from), [bad, good]);
    assert.equal(await keyUp(gw.url, "gemini-count", bad), "auth 0");
  });

  test("a probe is bounded: an upstream that never answers leaves the key in within the probe's timeout, and is not asked again within the interval", async () => {
    const stalled = await startFakeAnthropic({ script: () => ({ kind: "hang" }) });
    try {
      const key = newKey("stalled");
      const yaml = config({ channels: [{ name: "stalled", protocol: "anthropic", base_url: stalled.url, keys: [key], groups: ["default"], models: [CLAUDE] }] });
      const channel = compileSource(yaml, { path: "t.yaml", env: {}, generation: 1 }).runtime.channels.get("stalled")!;
      const probes = new KeyProbes({ timeoutMs: 300, intervalMs: 60_000 });
      const suspect = { channel, index: 0, fingerprint: keyFingerprint(key), upstreamModel: CLAUDE, fault: "quota" as const };
      const started = Date.now();
      const [first, second] = await Promise.all([probes.confirm(suspect), probes.confirm(suspect)]);
      assert.equal(first, undefined, "nothing shown: the key stays");
      assert.equal(second, undefined);
      assert.ok(Date.now() - started < 3000, `bounded by the probe's timeout (took ${Date.now() - started} ms)`);
      assert.equal(await probes.confirm(suspect), undefined);
      await eventually(() => stalled.received.length === 1, 2000, "the one probe to arrive");
      assert.equal(stalled.received.length, 1, "one probe for three suspicions");
    } finally {
      await stalled.close();
    }
  });
});
