// Realtime sessions bill what they use and stop when the money, the account or the time
// allowed is gone, whatever the client does: a session cut before its response.done or that
// only transcribes is billed from what it used (an estimate marked as one only where no
// usage came); each response is admitted against the balance and the live config; a frame
// has a size bound; a stalled upstream stops the gateway reading the client; and each
// response's charge is its own entry, committed before the client sees its response.done,
// so a gateway killed mid-session (kill -9) loses none of what the client was given.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { startFakeRealtime, transcriptionFakeUsage, type FakeRealtime, type FakeRealtimeOptions } from "../helpers/fake-realtime.js";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { alive, exited, runGateway, serveGateway, type Child } from "../helpers/spawn-gateway.js";
import { openSqliteStore } from "../../src/state/sqlite.js";
import { createMemoryStore } from "../../src/state/memory.js";
import type { Store, UsageEntry } from "../../src/state/store.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import type { State } from "../../src/state/interfaces.js";
import { openPostgresUsageLog } from "../../src/state/postgres-log.js";
import { openRedisSharedState } from "../../src/state/redis.js";
import { createTestDatabase, type TestDatabase } from "../helpers/postgres.js";
import { REDIS_URL, deleteKeys, testKeyPrefix, testRedisClient } from "../helpers/redis.js";
import { CHANNEL_KEY, TOKEN, channel, config, token, type Obj } from "../integration/support.js";

const MODEL = "gpt-realtime";
const NANO = 1_000_000_000;

interface World {
  fake: FakeRealtime;
  gw: TestGateway;
  state?: State;
  yaml: (parts?: { users?: Obj; server?: Obj; tokens?: Obj[] }) => string;
}

let worlds: World[] = [];
afterEach(async () => {
  for (const w of worlds) {
    await w.gw.close();
    await w.fake.close();
    await w.state?.close();
  }
  worlds = [];
  destroyAgents();
});

/** A gateway in front of a fake realtime upstream; prices 4 / 16 per 1M, group multiplier 0.7. */
async function world(
  fakeOpts: Omit<FakeRealtimeOptions, "keys">, parts: { users?: Obj; server?: Obj; maxOutput?: number; state?: State; store?: Store } = {},
): Promise<World> {
  const fake = await startFakeRealtime({ keys: [CHANNEL_KEY], ...fakeOpts });
  const yaml = (over: { users?: Obj; server?: Obj; tokens?: Obj[] } = {}) => config({
    server: over.server ?? parts.server,
    users: over.users ?? parts.users,
    tokens: over.tokens,
    channels: [channel("rt", fake.url, { models: [MODEL] })],
    models: { [MODEL]: { endpoint: "realtime", price: { input: 4, output: 16 }, ...parts.maxOutput ? { max_output_tokens: parts.maxOutput } : {} } },
  });
  const gw = await startTestGateway(yaml(), { state: parts.state, store: parts.store });
  const w = { fake, gw, yaml, state: parts.state };
  worlds.push(w);
  return w;
}

/** A realtime client that keeps every event it receives and how its socket closed. */
class Client {
  readonly events: Record<string, unknown>[] = [];
  close: { code: number; reason: string } | undefined;
  readonly ws: WebSocket;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data) => this.events.push(JSON.parse(data.toString()) as Record<string, unknown>));
    ws.on("close", (code, reason) => { this.close = { code, reason: reason.toString() }; });
    ws.on("error", () => {});
  }

  static open(gw: TestGateway): Promise<Client> {
    return Client.attach(new WebSocket(`${gw.url.replace("http", "ws")}/v1/realtime?model=${MODEL}`, { headers: { authorization: `Bearer ${TOKEN}` } }));
  }

  static async attach(ws: WebSocket): Promise<Client> {
    await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });
    return new Client(ws);
  }

  send(event: object): void {
    this.ws.send(JSON.stringify(event));
  }

  count(type: string): number {
    return this.events.filter((e) => e.type === type).length;
  }

  /** Waits until `n` events of `type` (or an error event, or the close) have come. */
  async until(type: string, n = 1): Promise<void> {
    await eventually(() => this.count(type) >= n || this.count("error") > 0 || this.close !== undefined, 5000, `${n} × ${type}`);
  }

  error(): { code: string } | undefined {
    return this.events.find((e) => e.type === "error")?.error as { code: string } | undefined;
  }

  async closed(): Promise<{ code: number; reason: string }> {
    await eventually(() => this.close !== undefined, 5000, "the session to close");
    return this.close!;
  }

  async leave(): Promise<void> {
    if (this.close) return;
    this.ws.close();
    await this.closed();
  }
}

/** The newest session, once over: its own entry (status 101, priced per session only) and
 * the entries of its responses and transcriptions (`<id>-r<n>`, `<id>-t<n>`), oldest first. */
async function sessionCharges(gw: TestGateway) {
  await eventually(() => gw.store.logs({ status: 101, limit: 1 }).length === 1, 8000, "the session's usage entry");
  const session = gw.store.logs({ status: 101, limit: 1 })[0];
  const entries = gw.store.logs({ limit: 1000 }).filter((e) => e.requestId.startsWith(`${session.requestId}-`)).reverse();
  assert.equal(session.costNano, 0n, "the session's own entry charges nothing its parts do");
  return { session, entries, ids: entries.map((e) => e.requestId.slice(session.requestId.length)), costNano: entries.reduce((n, e) => n + e.costNano, 0n) };
}

/** Sends `frame` (what starts a response) and waits for each answer until the gateway ends
 * the session (at most 20 rounds); `done`: the event that ends one. Returns the error event. */
async function runUntilCut(c: Client, frame: string, done = "response.done") {
  for (let i = 1; i <= 20 && !c.close && !c.error(); i++) {
    c.send({ type: frame });
    await c.until(done, i);
  }
  assert.equal((await c.closed()).code, 1008, "closed as a policy refusal");
  return c.error();
}

describe("realtime: what a session used is billed", () => {
  test("a session whose upstream ends on response.output_audio.done (no response.done) is billed an estimate, marked", async () => {
    const { gw } = await world({ response: { kind: "audio", cut: "close" } });
    const c = await Client.open(gw);
    c.send({ type: "response.create" });
    await c.closed();
    assert.ok(c.count("response.output_audio.done") === 1 && c.count("response.done") === 0);
    const { entries, ids } = await sessionCharges(gw);
    assert.deepEqual(ids, ["-r1"], "the cut response is its own entry");
    const entry = entries[0];
    assert.ok(entry.costNano > 0n, `billed ${entry.costNano}`);
    assert.equal(entry.estimated, true);
    assert.ok(entry.usage.output >= 20, `10 × 100 ms of assistant audio is 20 tokens; billed ${entry.usage.output}`);
  });

  test("a client leaving on response.output_audio.done: the gateway cancels the response and bills its response.done usage", async () => {
    const { gw, fake } = await world({ response: { kind: "audio", cut: "hang" } });
    const c = await Client.open(gw);
    c.send({ type: "response.create" });
    await c.until("response.output_audio.done");
    await c.leave();
    const { entries, ids } = await sessionCharges(gw);
    assert.deepEqual(ids, ["-r1"]);
    const entry = entries[0];
    assert.ok(fake.events.some((e) => e.type === "response.cancel"));
    // (30 × 4 + 10 × 4 + 20 × 16) / 1M × 0.7: the response.done usage, not a guess
    assert.equal(entry.costNano, 336_000n);
    assert.equal(entry.estimated, false);
  });

  test("a transcription-only session is billed from the transcription's usage", async () => {
    const { gw } = await world({});
    const c = await Client.open(gw);
    c.send({ type: "input_audio_buffer.append", audio: Buffer.alloc(4800).toString("base64") });
    c.send({ type: "input_audio_buffer.commit" });
    await c.until("conversation.item.input_audio_transcription.completed");
    await c.leave();
    const { entries, ids } = await sessionCharges(gw);
    assert.deepEqual(ids, ["-t1"]);
    const entry = entries[0];
    assert.deepEqual([entry.usage.input, entry.usage.output], [transcriptionFakeUsage.input_tokens, transcriptionFakeUsage.output_tokens]);
    assert.equal(entry.costNano, 672_000n); // (120 × 4 + 30 × 16) / 1M × 0.7
    assert.equal(entry.estimated, false);
  });
});

/** A memory store whose commits fail (a full disk) once `failing` is set. */
function failingStore(): Store & { failing: boolean } {
  const inner = createMemoryStore();
  const control = { failing: false };
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === "failing") return control.failing;
      if (prop === "record") {
        return (entry: UsageEntry) => control.failing ? Promise.reject(new Error("disk full")) : target.record(entry);
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
    set(_target, prop, value) {
      if (prop !== "failing") return false;
      control.failing = value as boolean;
      return true;
    },
  }) as Store & { failing: boolean };
}

describe("realtime: a charge is committed before its event is relayed", () => {
  test("a response.done whose charge cannot be committed is withheld; the session ends with a 503 error event", async () => {
    const store = failingStore();
    const { gw } = await world({}, { store });
    const c = await Client.open(gw);
    c.send({ type: "response.create" });
    await c.until("response.done");
    assert.equal(c.count("response.done"), 1);
    store.failing = true;
    c.send({ type: "response.create" });
    await c.until("response.done", 2);
    assert.equal(c.error()?.code, "state_unavailable", JSON.stringify(c.error()));
    assert.equal(c.count("response.done"), 1, "the second response.done is not relayed");
    assert.equal((await c.closed()).code, 1013);
  });
});

describe("realtime: each response is admitted", () => {
  // Each response uses 1000 in + 1000 out: 0.014; its reservation is at most 0.0168.
  const usage = { input_tokens: 1000, output_tokens: 1000, total_tokens: 2000 };
  const credit = 0.05;

  test("a user with little credit is cut off with an error event once the balance is used", async () => {
    const { gw, fake } = await world({ response: { usage } }, { users: { alice: { credit, groups: ["default"] } }, maxOutput: 1000 });
    const c = await Client.open(gw);
    const error = await runUntilCut(c, "response.create");
    assert.ok(["pre_deduction_failed", "insufficient_quota"].includes(error?.code ?? ""), JSON.stringify(error));
    assert.equal(fake.responses, 3);
    const { entries, ids } = await sessionCharges(gw);
    assert.deepEqual(ids, ["-r1", "-r2", "-r3"], "each response is its own entry");
    for (const e of entries) assert.equal(e.costNano, 14_000_000n);
    assert.ok(gw.ledger.spentByUser("alice") <= BigInt(credit * NANO));
    await eventually(() => gw.ledger.reservedByUser("alice") === 0n, 3000, "every hold given back");
  });

  test("server-VAD responses (no response.create) are admitted too", async () => {
    const { gw, fake } = await world({ vad: true, response: { usage } }, { users: { alice: { credit, groups: ["default"] } }, maxOutput: 1000 });
    const c = await Client.open(gw);
    const error = await runUntilCut(c, "input_audio_buffer.commit");
    assert.ok(error, "the session is ended with an error event");
    assert.ok(fake.responses <= 4, `${fake.responses} responses`);
    const { costNano } = await sessionCharges(gw);
    // Spend passes the credit by at most one response's reservation.
    assert.ok(costNano <= BigInt(credit * NANO) + 16_800_000n, `spent ${costNano}`);
    assert.equal(gw.ledger.spentByUser("alice"), costNano);
  });

  test("a transcription-only session (no response to admit) is cut off once its transcriptions use the balance", async () => {
    const { gw } = await world({}, { users: { alice: { credit: 0.002, groups: ["default"] } } });
    const c = await Client.open(gw);
    const done = "conversation.item.input_audio_transcription.completed";
    const error = await runUntilCut(c, "input_audio_buffer.commit", done);
    assert.equal(error?.code, "insufficient_quota");
    // 0.000672 each: the third passes 0.002 (it was transcribed before it could be refused).
    assert.equal(c.count(done), 3);
    const { ids, costNano } = await sessionCharges(gw);
    assert.deepEqual(ids, ["-t1", "-t2", "-t3"]);
    assert.equal(costNano, 3n * 672_000n);
  });

  test("disabling the user (config reload) ends the session at its next response.create", async () => {
    const { gw, fake, yaml } = await world({});
    const c = await Client.open(gw);
    c.send({ type: "response.create" });
    await c.until("response.done");
    gw.swapConfig(yaml({ users: { alice: { credit: 100, groups: ["default"], status: "disabled" } } }));
    c.send({ type: "response.create" });
    assert.equal((await c.closed()).code, 1008);
    assert.equal(c.error()?.code, "user_disabled");
    assert.equal(fake.events.filter((e) => e.type === "response.create").length, 1);
    const { ids, costNano } = await sessionCharges(gw);
    assert.deepEqual(ids, ["-r1"]);
    assert.equal(costNano, 336_000n); // the one response it had: (40 × 4 + 20 × 16) / 1M × 0.7
  });

  test("a disabled token ends the session too", async () => {
    const { gw, fake, yaml } = await world({});
    const c = await Client.open(gw);
    gw.swapConfig(yaml({ tokens: [token("alice-main", TOKEN, { status: "disabled" })] }));
    c.send({ type: "response.create" });
    assert.equal((await c.closed()).code, 1008);
    assert.equal(c.error()?.code, "token_disabled");
    assert.equal(fake.responses, 0);
  });

  test("a session ends at server.realtime_max_session with an error event", async () => {
    const { gw } = await world({}, { server: { realtime_max_session: "300ms" } });
    const c = await Client.open(gw);
    assert.equal((await c.closed()).code, 1008);
    assert.equal(c.error()?.code, "realtime_session_too_long");
  });
});

describe("realtime: memory is bounded by the relay", () => {
  test("a frame over 16 MiB ends the session (1009) instead of being held", async () => {
    const { gw, fake } = await world({});
    const c = await Client.open(gw);
    c.send({ type: "input_audio_buffer.append", audio: "A".repeat(17 * 1024 * 1024) });
    assert.equal((await c.closed()).code, 1009);
    assert.equal(fake.events.length, 0);
  });

  test("a client pushing at a stalled upstream is paused: the gateway stops reading it", async () => {
    const { gw } = await world({ stalled: true });
    const c = await Client.open(gw);
    const frame = JSON.stringify({ type: "input_audio_buffer.append", audio: "A".repeat(1024 * 1024) });
    const frames = 160;
    // Two frames in flight at a time; the next goes once one has left the client's socket.
    let sent = 0;
    let flushed = 0;
    const pump = () => {
      if (sent >= frames) return;
      sent++;
      c.ws.send(frame, (err) => {
        if (err) return;
        flushed += frame.length;
        pump();
      });
    };
    pump();
    pump();
    // Wait until the client's frames stop leaving: the gateway no longer reads it. Without
    // backpressure it reads all 160 MiB (and holds them).
    await stopsGrowing(() => flushed, frames * frame.length, "the client's frames to stop leaving");
    // What left the client sits in socket buffers and one relay queue (HIGH_WATER).
    assert.ok(flushed < 40 * 1024 * 1024, `the gateway took ${(flushed / 1048576).toFixed(1)} MiB of ${frames}`);
    c.ws.terminate();
  });

  test("an upstream pushing at a client that does not read is paused: the gateway stops reading it", async () => {
    const total = 160 * 1024 * 1024;
    const { gw, fake } = await world({ flood: total });
    const c = await Client.open(gw);
    c.send({ type: "response.create" });
    c.ws.pause(); // the client reads nothing more
    await stopsGrowing(() => fake.flushed, total, "the upstream's frames to stop leaving");
    assert.ok(fake.flushed < 40 * 1024 * 1024, `the gateway took ${(fake.flushed / 1048576).toFixed(1)} MiB of 160 from the upstream`);
    c.ws.terminate();
  });
});

/** Waits until `progress()` stops growing (unchanged over 25 polls) or reaches `total`. */
async function stopsGrowing(progress: () => number, total: number, what: string): Promise<void> {
  let last = -1;
  let still = 0;
  await eventually(() => {
    const now = progress();
    still = now === last ? still + 1 : 0;
    last = now;
    return still >= 25 || now >= total;
  }, 20_000, what);
}

describe("realtime: each response is admitted, on Redis + PostgreSQL", () => {
  const prefix = testKeyPrefix("realtime");
  let db: TestDatabase;
  before(async () => { db = await createTestDatabase("realtime"); });
  after(async () => {
    await db?.drop();
    const admin = testRedisClient();
    await deleteKeys(admin, prefix);
    await admin.quit();
  });

  test("a user with little credit is cut off once the shared balance is used", async () => {
    const state = await openRedisSharedState(REDIS_URL, await openPostgresUsageLog(db.url), { keyPrefix: prefix, upstreamTimeoutMs: 3000 });
    const usage = { input_tokens: 1000, output_tokens: 1000, total_tokens: 2000 };
    const { gw, fake } = await world({ response: { usage } }, { users: { alice: { credit: 0.05, groups: ["default"] } }, maxOutput: 1000, state });
    const c = await Client.open(gw);
    const error = await runUntilCut(c, "response.create");
    assert.ok(["pre_deduction_failed", "insufficient_quota"].includes(error?.code ?? ""), JSON.stringify(error));
    assert.equal(fake.responses, 3);
    await eventually(async () => (await state.usageLog.logs({ status: 101, limit: 1 })).length === 1, 8000, "the session's usage entry");
    const entries = await state.usageLog.logs({ limit: 100 });
    assert.deepEqual(entries.map((e) => e.costNano).sort(), [0n, 14_000_000n, 14_000_000n, 14_000_000n]);
    assert.equal(await state.accounts.spentByUser("alice"), 42_000_000n);
    await eventually(async () => (await state.accounts.reservedByUser("alice")) === 0n, 3000, "every hold given back");
  });
});

describe("realtime: each response's charge survives kill -9", () => {
  let dir: string;
  const children: Child[] = [];
  let fake: FakeRealtime | undefined;
  let reader: Store | undefined;
  after(async () => {
    reader?.close();
    for (const c of children) if (alive(c)) c.proc.kill("SIGKILL");
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("a gateway killed mid-session keeps the charge of every response the client saw, exactly", async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-rt-crash-"));
    const dbPath = join(dir, "g.db");
    fake = await startFakeRealtime({ keys: [CHANNEL_KEY] });
    const url = fake.url;
    const yaml = (port: number) => config({
      server: { listen: `127.0.0.1:${port}`, drain_timeout: "1s" },
      store: `sqlite:${dbPath}`,
      channels: [channel("rt", url, { models: [MODEL] })],
      models: { [MODEL]: { endpoint: "realtime", price: { input: 4, output: 16 } } },
    });
    const serve = async () => {
      const served = await serveGateway({ file: join(dir, "gateway.yaml"), cwd: dir, yaml, logLevel: "warn", readyMs: 15_000 });
      children.push(served.child);
      return served;
    };
    const first = await serve();
    const ws = new WebSocket(`${first.base.replace("http", "ws")}/v1/realtime?model=${MODEL}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const sessionId = new Promise<string>((resolve) => ws.once("upgrade", (res) => resolve(String(res.headers["x-gateway-request-id"]))));
    const c = await Client.attach(ws);
    const id = await sessionId;
    for (let i = 1; i <= 2; i++) {
      c.send({ type: "response.create" });
      await c.until("response.done", i);
    }
    assert.equal(c.count("response.done"), 2);
    assert.equal(c.error(), undefined);

    // Mid-session: the client has both responses and the session is still open.
    first.child.proc.kill("SIGKILL");
    assert.equal((await exited(first.child, 5000)).signal, "SIGKILL");
    await c.closed();

    // Restarted on the same store, the two responses are charged, once each:
    // (30 × 4 + 10 × 4 + 20 × 16) / 1M × 0.7 = 336,000 nano.
    const second = await serve();
    reader = openSqliteStore(dbPath, { mustExist: true });
    const store = reader;
    const ids = [`${id}-r1`, `${id}-r2`];
    await eventually(() => ids.every((r) => store.logs({ requestId: r }).length === 1), 5000, "both responses' entries");
    const entries = store.logs({ limit: 100 });
    for (const r of ids) {
      const e = store.logs({ requestId: r })[0];
      assert.equal(e.costNano, 336_000n, `cost of ${r}`);
      assert.equal(e.estimated, false);
      assert.deepEqual([e.token, e.user, e.model, e.channel], ["alice-main", "alice", MODEL, "rt"]);
    }
    assert.equal(entries.reduce((s, e) => s + e.costNano, 0n), 672_000n, "nothing else is charged");
    assert.equal(store.spentByUser("alice"), 672_000n);
    assert.equal(store.spentByToken("alice-main"), 672_000n);
    const usageCli = runGateway(["usage", "--json", "--by", "user", "--config", join(dir, "gateway.yaml")], dir, "warn");
    assert.equal((await exited(usageCli, 20_000)).code, 0, usageCli.stderr);
    assert.equal(JSON.parse(usageCli.stdout.trim()).cost, 0.000672);

    second.child.proc.kill("SIGTERM");
    assert.equal((await exited(second.child, 10_000)).code, 0, second.child.stderr);
  });
});
