// Session affinity: a session (x-gateway-session-id, prompt_cache_key or metadata.user_id)
// sticks to the channel that first served it with success; a session whose channel went
// away gets 503 instead of being moved silently; affinity_ttl 0 turns it off.

import { after, afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeOpenAI, type FakeOpenAI, type Script } from "../helpers/fake-openai.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { TOKEN, channel, config, hello, postChat, type Obj } from "./support.js";

describe("session affinity", () => {
  const fakes: Record<"a" | "b", FakeOpenAI> = {} as never;
  const scripts: Record<"a" | "b", Script> = { a: { kind: "ok" }, b: { kind: "ok" } };
  const open: TestGateway[] = [];

  before(async () => {
    for (const name of ["a", "b"] as const) fakes[name] = await startFakeOpenAI({ name, script: () => scripts[name] });
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    for (const name of ["a", "b"] as const) {
      fakes[name].received.length = 0;
      scripts[name] = { kind: "ok" };
    }
  });
  after(async () => {
    for (const f of Object.values(fakes)) await f.close();
    destroyAgents();
  });

  const yaml = (routing?: Obj, disable?: "a" | "b") => config({
    ...(routing ? { routing } : {}),
    channels: (["a", "b"] as const).map((n) => channel(n, fakes[n].url, n === disable ? { status: "disabled" } : {})),
  });
  async function gateway(routing?: Obj): Promise<TestGateway> {
    const gw = await startTestGateway(yaml(routing));
    open.push(gw);
    return gw;
  }
  const auth = { authorization: `Bearer ${TOKEN}` };
  /** Which fake served the last answer (each fake replies "<name> says: …"). */
  const servedBy = (text: string) => (JSON.parse(text).choices[0].message.content as string).split(" ")[0];

  test("a session header keeps every request on one channel; sessions spread over channels", async () => {
    const gw = await gateway();
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const r = await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "conversation-1" });
      assert.equal(r.status, 200, r.text);
      seen.add(servedBy(r.text));
    }
    assert.equal(seen.size, 1, "one session, one channel");
    const spread = new Set<string>();
    for (let i = 0; i < 24; i++) {
      spread.add(servedBy((await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": `s-${i}` })).text));
    }
    assert.equal(spread.size, 2, "new sessions land on both equal channels");
    for (const f of Object.values(fakes)) {
      for (const r of f.received) assert.equal(r.headers["x-gateway-session-id"], undefined, "the session header stays with us");
    }
  });

  test("prompt_cache_key in the body names the session too, and still reaches the upstream", async () => {
    const gw = await gateway();
    const seen = new Set<string>();
    for (let i = 0; i < 10; i++) {
      seen.add(servedBy((await postChat(gw.url, { ...hello, prompt_cache_key: "pck-7" }, auth)).text));
    }
    assert.equal(seen.size, 1);
    const last = [...fakes.a.received, ...fakes.b.received].at(-1)!;
    assert.equal(last.body.prompt_cache_key, "pck-7");
  });

  test("a session whose channel was disabled gets 503 affinity_channel_unavailable; a new session is served", async () => {
    const gw = await gateway();
    const first = await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "sticky" });
    const bound = servedBy(first.text) as "a" | "b";
    gw.swapConfig(yaml(undefined, bound));
    const r = await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "sticky" });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.error.code, "affinity_channel_unavailable");
    assert.match(r.json.error.message, /new session/);
    const fresh = await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "sticky-2" });
    assert.equal(fresh.status, 200);
    assert.notEqual(servedBy(fresh.text), bound);
  });

  test("a session binds only after a success, and a transient failure fails over without moving it", async () => {
    const gw = await gateway();
    scripts.a = { kind: "error", status: 400 };
    scripts.b = { kind: "error", status: 400 };
    assert.equal((await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "late" })).status, 400);
    scripts.a = { kind: "ok" };
    scripts.b = { kind: "ok" };
    const bound = servedBy((await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "late" })).text) as "a" | "b";
    const other = bound === "a" ? "b" : "a";
    scripts[bound] = { kind: "error", status: 503 };
    const during = await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "late" });
    assert.equal(during.status, 200);
    assert.equal(servedBy(during.text), other, "failed over to the other channel");
    scripts[bound] = { kind: "ok" };
    const after = await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "late" });
    assert.equal(servedBy(after.text), bound, "the session kept its channel");
  });

  test("affinity_ttl 0 turns affinity off", async () => {
    const gw = await gateway({ affinity_ttl: 0 });
    const seen = new Set<string>();
    for (let i = 0; i < 24; i++) seen.add(servedBy((await postChat(gw.url, hello, { ...auth, "x-gateway-session-id": "x" })).text));
    assert.equal(seen.size, 2);
  });
});
