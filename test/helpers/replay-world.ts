// One gateway in front of one fake upstream per channel protocol, for replaying client
// recordings: an `openai` chat-completions channel, an `anthropic` channel, a `gemini`
// channel, and an `openai` channel whose model is priced `endpoint: responses` (a fake
// Responses API). Every fake answers what `answer` says for the request it got: a tool call
// or text, streamed when asked, in its own wire format.

import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic.js";
import { startFakeGemini, type FakeGemini } from "./fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.js";
import { startFakeResponses, type FakeResponses } from "./fake-responses.js";
import type { BaseReceived } from "./fake-server.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import type { ToolCall } from "./client-replay.js";
import type { Target } from "./client-routes.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import { CHANNEL_KEY, TOKEN, capturingSink, channel, config, token } from "../integration/support.js";

export { TARGETS, type Target } from "./client-routes.js";

/** The gateway model served by each target's channel. The chat models are open to
 * /v1/responses clients too (`endpoint: [chat, responses]`). */
export const TARGET_MODEL: Record<Target, string> = {
  openai: "fx-gpt-chat",
  anthropic: "fx-claude",
  gemini: "fx-gemini",
  responses: "fx-gpt-responses",
};

/** What an upstream answers: a call of a tool, or text. */
export type UpstreamAnswer = { readonly call: ToolCall } | { readonly text: string };

export interface ReplayWorld {
  readonly gw: TestGateway;
  readonly openai: FakeOpenAI;
  readonly anthropic: FakeAnthropic;
  readonly gemini: FakeGemini;
  readonly responses: FakeResponses;
  /** Chooses every fake's answer from the request it received. */
  answer: (r: BaseReceived) => UpstreamAnswer;
  /** How many requests the fake behind `t` has received. */
  count(t: Target): number;
  /** The last request the fake behind `t` received. */
  last(t: Target): BaseReceived;
  close(): Promise<void>;
}

export async function startReplayWorld(): Promise<ReplayWorld> {
  const state = { answer: (_: BaseReceived): UpstreamAnswer => ({ text: "ok" }) };
  const openai = await startFakeOpenAI({
    name: "oa", keys: [CHANNEL_KEY], script: (r) => {
      const a = state.answer(r);
      return "call" in a ? { kind: "tool_call", name: a.call.name, args: JSON.stringify(a.call.args) } : { kind: "ok", text: a.text };
    },
  });
  const anthropic = await startFakeAnthropic({
    name: "an", keys: [CHANNEL_KEY], thinkingSamplingRules: true, script: (r) => {
      const a = state.answer(r);
      return "call" in a ? { kind: "tool_use", name: a.call.name, input: a.call.args } : { kind: "ok", text: a.text };
    },
  });
  const gemini = await startFakeGemini({
    name: "gm", keys: [CHANNEL_KEY], script: (r) => {
      const a = state.answer(r);
      return "call" in a ? { kind: "function_call", name: a.call.name, args: a.call.args } : { kind: "ok", text: a.text };
    },
  });
  const responses = await startFakeResponses({
    keys: [CHANNEL_KEY], script: (r) => {
      const a = state.answer(r);
      return "call" in a ? { kind: "ok", calls: [{ name: a.call.name, args: JSON.stringify(a.call.args) }] } : { kind: "ok", text: a.text };
    },
  });
  const price = { input: 1, output: 2 };
  const gw = await startTestGateway(config({
    tokens: [token("alice-main", TOKEN)],
    channels: [
      channel("oa", openai.url, { protocol: "openai", models: [TARGET_MODEL.openai] }),
      channel("an", anthropic.url, { protocol: "anthropic", models: [TARGET_MODEL.anthropic] }),
      channel("gm", gemini.url, { protocol: "gemini", models: [TARGET_MODEL.gemini] }),
      channel("rs", responses.url, { protocol: "openai", models: [TARGET_MODEL.responses] }),
    ],
    models: {
      [TARGET_MODEL.openai]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL.anthropic]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL.gemini]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL.responses]: { endpoint: "responses", price },
    },
  }), { usage: capturingSink() });
  const fakes = { openai, anthropic, gemini, responses };
  return {
    gw, ...fakes,
    get answer() { return state.answer; },
    set answer(f) { state.answer = f; },
    count: (t) => fakes[t].received.length,
    last: (t) => {
      const got: readonly BaseReceived[] = fakes[t].received;
      if (got.length === 0) throw new Error(`the ${t} fake received no request`);
      return got[got.length - 1];
    },
    async close() {
      await gw.close();
      await Promise.all(Object.values(fakes).map((f) => f.close()));
      destroyAgents();
    },
  };
}
