// Settle before acknowledging: a billed answer's last bytes (a JSON body's end, a stream's
// terminal event) reach the client only after its usage-log entry and spend are committed;
// a charge that cannot be committed withholds them; answers that cost nothing do not wait;
// and gateway_reservations_held counts the pre-deductions in flight.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { eventually, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { createMemoryStore } from "../../src/state/memory.js";
import type { LogFilter, SpendDimension, Store, UsageEntry, UsageSubject } from "../../src/state/store.js";
import type { TrafficRange } from "../../src/state/traffic.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { fakeUsage } from "../helpers/fake-openai.js";
import { TOKEN, channel, completionAnswer, config, hello, rawRequest, startRawUpstream } from "./support.js";

/** A memory store whose commits wait until the test opens the gate (or fail on cue). */
class GatedStore implements Store {
  readonly #inner = createMemoryStore();
  readonly #waiting: (() => void)[] = [];
  #open = false;
  readonly recorded: UsageEntry[] = [];
  /** The next record() fails as a full disk would. */
  failNext = false;

  record(entry: UsageEntry): Promise<void> {
    this.recorded.push(entry);
    const committed = this.#inner.record(entry);
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error("disk full"));
    }
    return this.#open ? committed : new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Lets every commit finish, now and from now on. */
  open(): void {
    this.#open = true;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  spentByToken(token: string) { return this.#inner.spentByToken(token); }
  spentByUser(user: string) { return this.#inner.spentByUser(user); }
  usageBuckets(s: UsageSubject, since: number, bucketMs: number) { return this.#inner.usageBuckets(s, since, bucketMs); }
  traffic(range: TrafficRange, bucketMs: number) { return this.#inner.traffic(range, bucketMs); }
  keyHealth(range: TrafficRange) { return this.#inner.keyHealth(range); }
  flush() { this.#inner.flush(); }
  refund(requestId: string, at: number) { return this.#inner.refund(requestId, at); }
  logs(filter: LogFilter) { return this.#inner.logs(filter); }
  spend(by: SpendDimension, range: { since?: number; until?: number }) { return this.#inner.spend(by, range); }
  close() { this.#inner.close(); }
}

/** Sends a chat request and reports what arrived, as it arrives. */
function watch(url: string, body: object) {
  const state = { status: 0, bytes: "", ended: false, error: undefined as Error | undefined, requestId: "" };
  const done = new Promise<void>((resolve) => {
    const req = http.request(`${url}/v1/chat/completions`, {
      method: "POST", agent: false, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    }, (res) => {
      state.status = res.statusCode ?? 0;
      state.requestId = String(res.headers["x-gateway-request-id"]);
      res.on("data", (c: Buffer) => { state.bytes += c.toString("utf8"); });
      res.on("end", () => { state.ended = true; resolve(); });
      res.on("error", (err) => { state.error = err; resolve(); });
    });
    req.on("error", (err) => { state.error = err; resolve(); });
    req.end(JSON.stringify(body));
  });
  return { state, done };
}

describe("settle before acknowledging", () => {
  let fake: FakeOpenAI;
  let script: Script = { kind: "ok" };
  const open: TestGateway[] = [];

  before(async () => {
    fake = await startFakeOpenAI({ name: "one", script: () => script });
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    script = { kind: "ok" };
  });
  after(async () => {
    await fake?.close();
    destroyAgents();
  });

  async function gateway(store: Store): Promise<TestGateway> {
    const gw = await startTestGateway(config({ channels: [channel("main", fake.url)] }), { store });
    open.push(gw);
    return gw;
  }

  for (const stream of [false, true]) {
    test(`${stream ? "a stream's terminal event" : "a JSON answer"} is released only once its charge is committed`, async () => {
      const store = new GatedStore();
      const gw = await gateway(store);
      const { state, done } = watch(gw.url, { ...hello, stream });
      await eventually(() => store.recorded.length === 1, 3000, "the charge to be recorded");
      const entry = store.recorded[0];
      assert.ok(entry.costNano > 0n, "a billed answer");
      // The commit has not finished: the client must not have the end of its answer.
      assert.equal(state.ended, false, `the answer ended before its charge was committed: ${state.bytes}`);
      assert.ok(!state.bytes.includes("[DONE]"), "the terminal event went out before the commit");
      if (!stream) assert.equal(state.bytes, "", "no byte of a held JSON answer before the commit");
      store.open();
      await done;
      assert.equal(state.status, 200);
      assert.equal(state.requestId, entry.requestId);
      if (stream) assert.match(state.bytes, /data: \[DONE\]\n\n$/);
      else assert.equal(JSON.parse(state.bytes).usage.completion_tokens, 5);
    });
  }

  test("a charge that cannot be committed withholds the answer: nothing is served unbilled", async () => {
    const store = new GatedStore();
    store.open();
    const gw = await gateway(store);
    store.failNext = true;
    const refused = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(hello),
    });
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.json.error.code, "state_unavailable");
    assert.match(refused.json.error.message, /usage log/);
    assert.ok(!refused.text.includes("choices"), "the answer itself never reached the client");
    store.failNext = true;
    const { state, done } = watch(gw.url, { ...hello, stream: true });
    await done;
    assert.ok(!state.bytes.includes("[DONE]"), `a stream whose charge failed must not end as complete: ${state.bytes}`);
    // the next request is served normally
    const ok = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(hello),
    });
    assert.equal(ok.status, 200, ok.text);
  });

  test("answers that cost nothing do not wait for a commit", async () => {
    const store = new GatedStore(); // never opened
    const gw = await gateway(store);
    script = { kind: "error", status: 400, message: "bad request upstream" };
    const refused = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(hello),
    });
    assert.equal(refused.status, 400);
    const unknown = await rawRequest(`${gw.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ ...hello, model: "no-such-model" }),
    });
    assert.equal(unknown.status, 404);
    assert.equal(store.recorded.length, 2, "both are in the usage log, at no cost");
    assert.ok(store.recorded.every((e) => e.costNano === 0n));
  });

  test("gateway_reservations_held counts pre-deductions in flight, and is 0 when idle", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const slowUpstream = await startRawUpstream((body, res) => void gate.then(() => completionAnswer(res, body.model, "slow", fakeUsage)));
    try {
      const gw = await startTestGateway(config({ channels: [channel("slow", slowUpstream.url)] }));
      open.push(gw);
      const held = async () => {
        const text = (await rawRequest(`${gw.url}/metrics`)).text;
        return Number(/^gateway_reservations_held (\S+)$/m.exec(text)?.[1]);
      };
      assert.equal(await held(), 0);
      const slow = watch(gw.url, hello);
      const slowToo = watch(gw.url, hello);
      await eventually(async () => (await held()) === 2, 3000, "two reservations held");
      release();
      await Promise.all([slow.done, slowToo.done]);
      assert.equal(slow.state.status, 200);
      assert.equal(slowToo.state.status, 200);
      assert.equal(await held(), 0);
    } finally {
      await slowUpstream.close();
    }
  });
});
