// One gateway in front of three fake upstreams, one per channel protocol, for the
// protocols-*.test.ts suites: an `openai` channel (fake-openai), an `anthropic` channel
// (fake-anthropic, with a model_map rename) and a `gemini` channel (fake-gemini), each
// serving its own priced models, plus a capturing UsageSink. Each suite starts one.

import assert from "node:assert/strict";
import OpenAI from "openai";
import {
  startFakeAnthropic, type FakeAnthropic, type Received as AReceived, type Script as AScript,
} from "./fake-anthropic.js";
import { startFakeGemini, type FakeGemini, type Received as GReceived, type Script as GScript } from "./fake-gemini.js";
import { startFakeOpenAI, type FakeOpenAI, type Received as OReceived, type Script as OScript } from "./fake-openai.js";
import { entryOf, eventually, startTestGateway, type TestGateway } from "./gateway.js";
import { formatNano } from "../../src/billing/cost.js";
import { destroyAgents } from "../../src/upstream/agents.js";
import type { UsageEntry } from "../../src/state/store.js";
import { CHANNEL_KEY, TOKEN, capturingSink, channel, config, token, type Obj, type Recorded } from "../integration/support.js";

/** Client-facing model names, one (or more) per channel. */
export const M = {
  openai: "gpt-4o-mini",
  anthropic: "claude-sonnet-4-6",
  gemini: "gemini-2.5-flash",
  geminiImage: "gemini-2.5-flash-image",
  /** Served by the openai channel (priority 10) and the anthropic channel (priority 0). */
  mixed: "mixed-failover",
  /** A responses-endpoint model (only when a responses upstream is given). */
  responses: "gpt-5-pro",
} as const;

/** The anthropic channel's model_map: what the anthropic fake is asked for. */
export const ANTHROPIC_UPSTREAM_MODEL = "claude-sonnet-4-6-20260217";

/** Canonical usage each fake's standard reply normalises to, whatever protocol the client speaks. */
export const CANONICAL = {
  /** prompt 12 incl. 2 cached, completion 5 incl. 1 reasoning. */
  openai: { input: 10, cacheRead: 2, cacheWrite: 0, output: 5, reasoning: 1 },
  /** input 12, output 5, no cache. */
  anthropic: { input: 12, cacheRead: 0, cacheWrite: 0, output: 5, reasoning: 0 },
  /** anthropicFakeCacheUsage: input 12, cache write 7, cache read 30, output 5. */
  anthropicCache: { input: 12, cacheRead: 30, cacheWrite: 7, output: 5, reasoning: 0 },
  /** promptTokenCount 12, candidatesTokenCount 5. */
  gemini: { input: 12, cacheRead: 0, cacheWrite: 0, output: 5, reasoning: 0 },
} as const;

/** Prices (per 1M tokens) of the suites' models. */
export const models: Obj = {
  [M.openai]: { endpoint: "chat", price: { input: 0.15, output: 0.6 } },
  [M.anthropic]: { price: { input: 3, output: 15, cache_read_ratio: 0.1, cache_write_ratio: 1.25 } },
  [M.gemini]: { price: { input: 0.3, output: 2.5 } },
  [M.geminiImage]: { price: { input: 0.3, output: 30 } },
  [M.mixed]: { price: { input: 1, output: 2 } },
  [M.responses]: { endpoint: "responses", price: { input: 15, output: 120 } },
};

/** The three channel protocols of a world, named as its fakes are. */
export type ChannelName = "openai" | "anthropic" | "gemini";

/** Text full of escaping and multi-byte traps, sent through every protocol. */
export const TEXT = "Grüße 👋🏽 — 你好，世界! \"quoted\" 'single'\nsecond line\ttab \\ backslash </script> 🇨🇭";

export interface Scripts {
  openai?: (r: OReceived) => OScript;
  anthropic?: (r: AReceived) => AScript;
  gemini?: (r: GReceived) => GScript;
}

export interface World {
  readonly gw: TestGateway;
  readonly openai: FakeOpenAI;
  readonly anthropic: FakeAnthropic;
  readonly gemini: FakeGemini;
  readonly sink: ReturnType<typeof capturingSink>;
  /** Per-request answer scripts; reset to the defaults by `reset()`. */
  scripts: Scripts;
  reset(): void;
  /** The body the fake behind channel `t` received last (fails when it received none). */
  sent(t: ChannelName): Record<string, any>;
  /** Scripts channel `t`'s fake to answer `text` (in 5 chunks when streamed). */
  scriptText(t: ChannelName, text: string): void;
  /** Scripts channel `t`'s fake to call tool `name` with `args`. */
  scriptTool(t: ChannelName, name: string, args: Record<string, unknown>): void;
  /** The sink's record count now; pass it to `record()` after a request. */
  mark(): number;
  /** Waits for the first usage record after `mark` and returns it. */
  record(mark: number): Promise<Recorded>;
  /** The usage-log entry (with its cost) of a request id. */
  entry(requestId: string): Promise<UsageEntry>;
  /** The cost a request was charged, as the gateway shows it to the client (exact decimal). */
  shownCost(requestId: string): Promise<string>;
  close(): Promise<void>;
}

export interface WorldOptions {
  /** Extra channels (e.g. a responses upstream). */
  readonly extraChannels?: (world: { openai: string; anthropic: string; gemini: string }) => Obj[];
  /** Options of the anthropic fake. */
  readonly refuseBetas?: readonly string[];
  readonly allowSamplingParams?: boolean;
  /** The anthropic and gemini fakes refuse signatures they did not issue. */
  readonly verifySignatures?: boolean;
  /** The anthropic fake refuses what Anthropic refuses while thinking is on. */
  readonly thinkingSamplingRules?: boolean;
  /** Extra access tokens (the default token TOKEN is always there). */
  readonly tokens?: readonly Obj[];
  /** Extra priced models (e.g. for the extra channels). */
  readonly extraModels?: Obj;
  /** Groups and users instead of config()'s defaults (for tokens in other groups). */
  readonly groups?: Obj;
  readonly users?: Obj;
}

/** The openai SDK as a test's client of the world's gateway (the default token, no retries). */
export function openaiClient(w: World): OpenAI {
  return new OpenAI({ apiKey: TOKEN, baseURL: `${w.gw.url}/v1`, maxRetries: 0 });
}

export async function startWorld(opts: WorldOptions = {}): Promise<World> {
  const state: { scripts: Scripts } = { scripts: {} };
  const openai = await startFakeOpenAI({ name: "oa", keys: [CHANNEL_KEY], script: (r) => state.scripts.openai?.(r) ?? { kind: "ok" } });
  const anthropic = await startFakeAnthropic({
    name: "an", keys: [CHANNEL_KEY], refuseBetas: opts.refuseBetas, allowSamplingParams: opts.allowSamplingParams,
    verifySignatures: opts.verifySignatures, thinkingSamplingRules: opts.thinkingSamplingRules,
    script: (r) => state.scripts.anthropic?.(r) ?? { kind: "ok" },
  });
  const gemini = await startFakeGemini({
    name: "gm", keys: [CHANNEL_KEY], verifySignatures: opts.verifySignatures,
    script: (r) => state.scripts.gemini?.(r) ?? { kind: "ok" },
  });
  const sink = capturingSink();
  const urls = { openai: openai.url, anthropic: anthropic.url, gemini: gemini.url };
  const gw = await startTestGateway(config({
    server: { upstream_attempts: 3 },
    tokens: [token("alice-main", TOKEN), ...(opts.tokens ?? [])],
    channels: [
      channel("oa", openai.url, { protocol: "openai", models: [M.openai, M.mixed], priority: 10 }),
      channel("an", anthropic.url, {
        protocol: "anthropic", models: [M.anthropic, M.mixed], priority: 0,
        model_map: { [M.anthropic]: ANTHROPIC_UPSTREAM_MODEL },
      }),
      channel("gm", gemini.url, { protocol: "gemini", models: [M.gemini, M.geminiImage] }),
      ...(opts.extraChannels?.(urls) ?? []),
    ],
    models: { ...models, ...opts.extraModels },
    groups: opts.groups,
    users: opts.users,
  }), { usage: sink });
  return {
    gw, openai, anthropic, gemini, sink,
    get scripts() { return state.scripts; },
    set scripts(s: Scripts) { state.scripts = s; },
    reset() { state.scripts = {}; },
    sent: (t) => last(t === "openai" ? openai.received : t === "anthropic" ? anthropic.received : gemini.received).body,
    scriptText(t, text) {
      if (t === "openai") state.scripts.openai = () => ({ kind: "ok", text, chunks: 5 });
      else if (t === "anthropic") state.scripts.anthropic = () => ({ kind: "ok", text, chunks: 5 });
      else state.scripts.gemini = () => ({ kind: "ok", text, chunks: 5 });
    },
    scriptTool(t, name, args) {
      if (t === "openai") state.scripts.openai = () => ({ kind: "tool_call", name, args: JSON.stringify(args) });
      else if (t === "anthropic") state.scripts.anthropic = () => ({ kind: "tool_use", name, input: args });
      else state.scripts.gemini = () => ({ kind: "function_call", name, args });
    },
    mark: () => sink.records.length,
    async record(mark) {
      await eventually(() => sink.records.length > mark, 3000, "a usage record");
      return sink.records[mark];
    },
    entry: (requestId) => entryOf(gw.store, requestId),
    shownCost: async (requestId) => formatNano((await entryOf(gw.store, requestId)).costNano),
    async close() {
      await gw.close();
      await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
      destroyAgents();
    },
  };
}

/** A stream's final usage as a client reads it, split into the cost the gateway shows
 * beside it (`gateway_cost`) and the usage proper. */
export function splitCost<T extends object>(usage: T | null | undefined): { cost: unknown; usage: Omit<T, "gateway_cost"> | undefined } {
  if (!usage) return { cost: undefined, usage: undefined };
  const { gateway_cost: cost, ...rest } = usage as T & { gateway_cost?: unknown };
  return { cost, usage: rest };
}

/** The last request a fake received (fails when it received none). */
export function last<T>(received: readonly T[]): T {
  assert.ok(received.length > 0, "the fake received no request");
  return received[received.length - 1];
}

/** A weather tool in JSON Schema, and the call the fakes make with it. */
export const weatherSchema = {
  type: "object" as const,
  properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } },
  required: ["city"],
};
export const weatherArgs = { city: "Zürich «北京» \"quoted\"", unit: "c", days: [1, 2, 3], nested: { ok: true, emoji: "🌧️" } };
