// The real clients, end to end: every request Claude Code, Codex CLI, Gemini CLI, opencode,
// Qwen Code, the OpenAI Agents SDK and the Vercel AI SDK were recorded sending
// (test/fixtures/clients/, see its README) is replayed as recorded, each turn of its tool
// loop, through the gateway to a model on each channel protocol (openai chat-completions,
// anthropic, gemini, and an openai channel priced `endpoint: responses`) and on a channel of
// each provider kind (Claude on Bedrock and on Vertex AI, Gemini on Vertex AI, Azure OpenAI,
// DeepSeek; through test fronts that speak the kind's wire, with the same answers); the
// answer must be a 200 that the client's own SDK parser reads back into the tool call or the
// text the upstream gave. Then the AI SDK itself runs its multi-step tool loop against the
// gateway, per provider flavour and channel. Every pair must pass: a re-recording that brings
// a field the gateway cannot take fails here.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { AI_SDK_FLAVOURS, aiSdkModel, runToolLoop } from "../helpers/ai-sdk-clients.js";
import {
  flipped, functionToolNames, isStream, loadFixtures, loadProbes, loadTokenCounts, protocolOf, readAnswer, recordedCall, replay,
  type ClientProtocol, type Fixture,
} from "../helpers/client-replay.js";
import { UPSTREAM, replayedFlipped, routeOf, tokenCountRouteOf } from "../helpers/client-routes.js";
import { ANTHROPIC_FAKE_COUNT } from "../helpers/fake-anthropic.js";
import type { BaseReceived } from "../helpers/fake-server.js";
import { TARGETS, TARGET_MODEL, startReplayWorld, type ReplayWorld, type Target } from "../helpers/replay-world.js";
import { TOKEN, rawRequest } from "./support.js";

const FINAL = "The file says: The answer is 42. — «ok» 👋";

/** What the recorded file held; each client's tool result carries it. */
const FILE_TEXT = "The answer is 42.";

/** The stop / finish reason each protocol reports for a tool call and for a final answer. */
const FINISH: Record<ClientProtocol, { call: string; text: string }> = {
  messages: { call: "tool_use", text: "end_turn" },
  chat: { call: "tool_calls", text: "stop" },
  responses: { call: "completed", text: "completed" },
  generate: { call: "STOP", text: "STOP" },
};

const fixtures = loadFixtures();

describe("client recordings replayed through every channel protocol", () => {
  let w: ReplayWorld;
  before(async () => { w = await startReplayWorld(); });
  after(async () => { await w?.close(); });

  test("the recordings are all there", () => {
    const clients = new Set(fixtures.map((f) => f.client));
    for (const c of ["claude", "claude-gpt", "claude-tool-search", "claude-count-tokens", "codex", "gemini", "qwen", "opencode", "ai-sdk", "agents-sdk"]) assert.ok(clients.has(c), `fixtures of ${c}`);
    for (const f of fixtures) assert.equal(f.answered.status, 200, `${f.name} was answered 200 when recorded`);
  });

  // The CLIs were recorded streaming only; each turn is replayed as JSON too (the plan
  // docs/clients.md publishes: test/helpers/client-routes.ts).
  const replays = fixtures.flatMap((f) => (replayedFlipped(f.client) ? [f, flipped(f)] : [f]));
  for (const f of replays) {
    const proto = protocolOf(f)!;
    for (const target of TARGETS) {
      test(`${f.name} → ${target} (${routeOf(proto, target)})`, () => replayOne(w, f, proto, target));
    }
  }

  // Claude Code counts a big file's tokens before reading it into the conversation.
  for (const f of loadTokenCounts()) {
    for (const target of TARGETS) {
      const how = tokenCountRouteOf(target);
      test(`${f.name} → ${target} (${how})`, async () => {
        const before = w.count(target);
        const r = await replay(w.gw.url, f, TARGET_MODEL[target], TOKEN);
        assert.equal(r.status, 200, r.text.slice(0, 400));
        assert.ok(Number.isInteger(r.json?.input_tokens) && r.json.input_tokens > 0, r.text.slice(0, 200));
        const asked = how !== "local estimate";
        assert.equal(w.count(target), before + (asked ? 1 : 0), "only a Claude channel (anthropic, bedrock, vertex) is asked");
        if (asked) {
          assert.equal(w.last(target).path.split("?")[0], "/v1/messages/count_tokens");
          assert.equal(r.json.input_tokens, ANTHROPIC_FAKE_COUNT, "the upstream's count, not an estimate");
        }
      });
    }
  }

  // Codex offers its sub-agent tools in a `namespace`; a call of one must come back with
  // that namespace, or Codex cannot route it.
  for (const f of replays.filter((x) => x.name.startsWith("codex/01-"))) {
    for (const target of TARGETS.filter((t) => t !== "responses")) {
      test(`${f.name} → ${target}: a call of a namespaced tool names its namespace`, async () => {
        w.answer = () => ({ call: { name: "close_agent", args: { target: "agent-1" } } });
        const answer = await readAnswer("responses", isStream(f), await replay(w.gw.url, f, TARGET_MODEL[target], TOKEN));
        assert.deepEqual(answer.calls, [{ name: "close_agent", args: { target: "agent-1" }, namespace: "multi_agent_v1" }]);
      });
    }
  }

  test("Claude Code's HEAD / probe gets an answer, not a server error", async () => {
    const probes = loadProbes();
    assert.ok(probes.length > 0);
    for (const p of probes) {
      const r = await rawRequest(`${w.gw.url}${p.path}`, { method: p.method });
      assert.ok(r.status < 500, `${p.name}: ${r.status}`);
    }
  });
});

async function replayOne(w: ReplayWorld, f: Fixture, proto: ClientProtocol, target: Target): Promise<void> {
  const call = recordedCall(f);
  w.answer = () => (call ? { call } : { text: FINAL });
  const before = w.count(target);
  const r = await replay(w.gw.url, f, TARGET_MODEL[target], TOKEN);
  const answer = await readAnswer(proto, isStream(f), r);
  assert.equal(w.count(target), before + 1, `the ${target} upstream answered`);
  const sent = w.last(target);
  // Every function tool the client offered reaches the model, under its own name.
  assert.deepEqual(functionToolNames(UPSTREAM[target], sent.body).sort(), functionToolNames(proto, f.body).sort(), "the tools offered upstream");
  if (routeOf(proto, target) === "pass-through") {
    // Pass-through: the client's body goes upstream as it came, but for the model name, the
    // output limit reserved for where the client set none, and a responses `store` left out,
    // which goes as false (the models here do not allow storing).
    const limited = withOutputLimit(proto, proto === "generate" ? f.body : { ...f.body, model: TARGET_MODEL[target] });
    const expected = proto === "responses" && f.body.store === undefined ? { ...limited, store: false } : limited;
    assert.deepEqual(sent.body, expected, "the body passed through untouched");
  }
  // Claude-style cache hints on chat messages (opencode, Qwen Code) become Anthropic cache
  // breakpoints toward Claude (Anthropic, Bedrock, Vertex), at most the four the API takes,
  // and go nowhere else on a converted route.
  if (proto === "chat" && routeOf(proto, target) === "converted" && JSON.stringify(f.body).includes('"cache_control"')) {
    const hints = (sent.raw.toString("utf8").match(/"cache_control"/g) ?? []).length;
    if (UPSTREAM[target] === "messages") assert.ok(hints >= 1 && hints <= 4, `cache breakpoints toward ${target}: ${hints}`);
    else assert.equal(hints, 0, `no cache_control toward ${target}`);
  }
  // The tool result the client sent back (the file's text) reaches the model.
  if (JSON.stringify(f.body).includes(FILE_TEXT)) assert.ok(sent.raw.toString("utf8").includes(FILE_TEXT), "the tool result reached the upstream");
  if (call) {
    assert.deepEqual(answer.calls, [call], "the client reads back the tool call the upstream made");
    assert.equal(answer.finish, FINISH[proto].call);
  } else {
    assert.equal(answer.text, FINAL);
    assert.deepEqual(answer.calls, []);
    assert.equal(answer.finish, FINISH[proto].text);
  }
}

/** Whether an upstream request already carries a tool result, in any protocol. */
function hasToolResult(r: BaseReceived): boolean {
  return /"role":"tool"|"type":"tool_result"|"functionResponse"|"type":"function_call_output"/.test(r.raw.toString("utf8"));
}

describe("the AI SDK's tool loop against the gateway", () => {
  let w: ReplayWorld;
  before(async () => {
    // The SDK warns that it does not know the gateway's model names; that is expected here.
    (globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
    w = await startReplayWorld();
  });
  after(async () => { await w?.close(); });

  for (const flavour of AI_SDK_FLAVOURS) {
    for (const target of TARGETS) {
      for (const stream of [false, true]) {
        test(`${flavour} ${stream ? "streamText" : "generateText"} → ${target}`, async () => {
          w.answer = (r) => (hasToolResult(r) ? { text: FINAL } : { call: { name: "read_file", args: { path: "notes.txt" } } });
          const before = w.count(target);
          const read: string[] = [];
          const result = await runToolLoop(aiSdkModel(flavour, w.gw.url, TOKEN, TARGET_MODEL[target]), {
            stream, readFile: (p) => { read.push(p); return "The answer is 42."; },
          });
          assert.deepEqual(read, ["notes.txt"], "the SDK ran the tool once");
          assert.deepEqual(result.toolCalls, [{ toolName: "read_file", input: { path: "notes.txt" } }]);
          assert.equal(result.text, FINAL);
          assert.equal(result.steps, 2);
          assert.equal(result.finishReason, "stop");
          assert.equal(w.count(target) - before, 2, `both steps reached the ${target} upstream`);
        });
      }
    }
  }
});

/** The models' max_output_tokens (the default): the limit a pass-through adds when a body sets none. */
const RESERVED_LIMIT = 4096;

/** `body` with the output limit field its protocol's pass-through adds when it has none. */
function withOutputLimit(proto: ClientProtocol, body: Record<string, unknown>): Record<string, unknown> {
  switch (proto) {
    case "chat": return body.max_completion_tokens ?? body.max_tokens ? body : { ...body, max_completion_tokens: RESERVED_LIMIT };
    case "responses": return body.max_output_tokens ? body : { ...body, max_output_tokens: RESERVED_LIMIT };
    case "generate": {
      const config = (body.generationConfig ?? {}) as Record<string, unknown>;
      return config.maxOutputTokens ? body : { ...body, generationConfig: { ...config, maxOutputTokens: RESERVED_LIMIT } };
    }
    default: return body; // messages: max_tokens is required
  }
}
