// One gateway in front of one fake upstream per channel the replay targets: an `openai`
// chat-completions channel, an `anthropic` channel, a `gemini` channel, an `openai` channel
// whose model is priced `endpoint: responses` (a fake Responses API), and one channel of each
// provider kind (Claude on Bedrock and on Vertex AI, Gemini on Vertex AI, Azure OpenAI,
// DeepSeek), each reaching its own first-party fake through a front that speaks the kind's
// wire (test/helpers/kind-fronts.ts, fake-vertex.ts). Every fake answers what `answer` says
// for the request it got: a tool call or text, streamed when asked, in its own wire format;
// what a kind target's fake records is the request in the first-party API's form, as the
// front read it back from the kind's wire.

import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic.js";
import { startFakeGemini, type FakeGemini } from "./fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.js";
import { startFakeResponses, type FakeResponses } from "./fake-responses.js";
import { startFakeVertex } from "./fake-vertex.js";
import type { BaseReceived } from "./fake-server.js";
import { startAzureFront, startBedrockFront, startDeepSeekFront } from "./kind-fronts.js";
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
  bedrock: "fx-claude-bedrock",
  "vertex-claude": "fx-claude-vertex",
  "vertex-gemini": "fx-gemini-vertex",
  "azure-openai": "fx-gpt-azure",
  deepseek: "fx-deepseek",
};

/** The kinds' credentials, as the fronts check them. */
const BEDROCK_KEY = { accessKeyId: "AKIAREPLAYKEY0000001", secretAccessKey: "replay/secret+AbCdEfGhIjKlMnOpQrStUvWxYz01" };
const AZURE_KEY = "azure-replay-key-0001";
const AZURE_API_VERSION = "2024-10-21";
const DEEPSEEK_KEY = "sk-deepseek-replay-0001";
const VERTEX_PROJECT = "fx-project";

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
  /** The last request the fake behind `t` received (for a kind, in the first-party form). */
  last(t: Target): BaseReceived;
  close(): Promise<void>;
}

export async function startReplayWorld(): Promise<ReplayWorld> {
  const state = { answer: (_: BaseReceived): UpstreamAnswer => ({ text: "ok" }) };
  // One maker per first-party API: the first-party targets and the kinds' fakes answer alike.
  const openaiFake = (name: string) => startFakeOpenAI({
    name, keys: [CHANNEL_KEY], script: (r) => {
      const a = state.answer(r);
      return "call" in a ? { kind: "tool_call", name: a.call.name, args: JSON.stringify(a.call.args) } : { kind: "ok", text: a.text };
    },
  });
  const anthropicFake = (name: string) => startFakeAnthropic({
    name, keys: [CHANNEL_KEY], thinkingSamplingRules: true, script: (r) => {
      const a = state.answer(r);
      return "call" in a ? { kind: "tool_use", name: a.call.name, input: a.call.args } : { kind: "ok", text: a.text };
    },
  });
  const geminiFake = (name: string) => startFakeGemini({
    name, keys: [CHANNEL_KEY], script: (r) => {
      const a = state.answer(r);
      return "call" in a ? { kind: "function_call", name: a.call.name, args: a.call.args } : { kind: "ok", text: a.text };
    },
  });
  const [openai, anthropic, gemini, bedrockClaude, vertexClaude, vertexGemini, azureGpt, deepseekGpt] = await Promise.all([
    openaiFake("oa"), anthropicFake("an"), geminiFake("gm"), anthropicFake("an-bedrock"), anthropicFake("an-vertex"), geminiFake("gm-vertex"),
    openaiFake("oa-azure"), openaiFake("oa-deepseek"),
  ]);
  const responses = await startFakeResponses({
    keys: [CHANNEL_KEY], script: (r) => {
      const a = state.answer(r);
      return "call" in a ? { kind: "ok", calls: [{ name: a.call.name, args: JSON.stringify(a.call.args) }] } : { kind: "ok", text: a.text };
    },
  });
  const [bedrockFront, vertex, azureFront, deepseekFront] = await Promise.all([
    startBedrockFront({ accessKey: BEDROCK_KEY, anthropicUrl: bedrockClaude.url, anthropicKey: CHANNEL_KEY }),
    startFakeVertex({
      project: VERTEX_PROJECT, locations: ["us-east5", "global"],
      anthropicUrl: vertexClaude.url, anthropicKey: CHANNEL_KEY, geminiUrl: vertexGemini.url, geminiKey: CHANNEL_KEY,
    }),
    startAzureFront({ key: AZURE_KEY, apiVersion: AZURE_API_VERSION, openaiUrl: azureGpt.url, openaiKey: CHANNEL_KEY }),
    startDeepSeekFront({ key: DEEPSEEK_KEY, openaiUrl: deepseekGpt.url, openaiKey: CHANNEL_KEY }),
  ]);
  const price = { input: 1, output: 2 };
  const kind = (name: string, target: Target, extra: Record<string, unknown>) => ({ name, groups: ["default"], models: [TARGET_MODEL[target]], ...extra });
  const gw = await startTestGateway(config({
    tokens: [token("alice-main", TOKEN)],
    channels: [
      channel("oa", openai.url, { protocol: "openai", models: [TARGET_MODEL.openai] }),
      channel("an", anthropic.url, { protocol: "anthropic", models: [TARGET_MODEL.anthropic] }),
      channel("gm", gemini.url, { protocol: "gemini", models: [TARGET_MODEL.gemini] }),
      channel("rs", responses.url, { protocol: "openai", models: [TARGET_MODEL.responses] }),
      kind("bd", "bedrock", {
        kind: "bedrock", region: "us-east-1", base_url: bedrockFront.url,
        credentials: { access_key_id: BEDROCK_KEY.accessKeyId, secret_access_key: BEDROCK_KEY.secretAccessKey },
      }),
      kind("vx-claude", "vertex-claude", { kind: "vertex", region: "us-east5", project: VERTEX_PROJECT, base_url: vertex.url, credentials_file: vertex.keyFile }),
      kind("vx-gemini", "vertex-gemini", {
        kind: "vertex", protocol: "gemini", region: "global", project: VERTEX_PROJECT, base_url: vertex.url, credentials_file: vertex.keyFile,
      }),
      kind("az", "azure-openai", { kind: "azure-openai", base_url: azureFront.url, api_version: AZURE_API_VERSION, keys: [AZURE_KEY] }),
      kind("ds", "deepseek", { kind: "openai-compatible", preset: "deepseek", base_url: deepseekFront.url, keys: [DEEPSEEK_KEY] }),
    ],
    models: {
      [TARGET_MODEL.openai]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL.anthropic]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL.gemini]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL.responses]: { endpoint: "responses", price },
      [TARGET_MODEL.bedrock]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL["vertex-claude"]]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL["vertex-gemini"]]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL["azure-openai"]]: { endpoint: ["chat", "responses"], price },
      [TARGET_MODEL.deepseek]: { endpoint: ["chat", "responses"], price },
    },
  }), { usage: capturingSink() });
  const fakes: Record<Target, { readonly received: readonly BaseReceived[] }> = {
    openai, anthropic, gemini, responses,
    bedrock: bedrockClaude, "vertex-claude": vertexClaude, "vertex-gemini": vertexGemini, "azure-openai": azureGpt, deepseek: deepseekGpt,
  };
  const servers = [openai, anthropic, gemini, responses, bedrockClaude, vertexClaude, vertexGemini, azureGpt, deepseekGpt, bedrockFront, vertex, azureFront, deepseekFront];
  return {
    gw, openai, anthropic, gemini, responses,
    get answer() { return state.answer; },
    set answer(f) { state.answer = f; },
    count: (t) => fakes[t].received.length,
    last: (t) => {
      const got = fakes[t].received;
      if (got.length === 0) throw new Error(`the ${t} fake received no request`);
      return got[got.length - 1];
    },
    async close() {
      await gw.close();
      await Promise.all(servers.map((f) => f.close()));
      destroyAgents();
    },
  };
}
