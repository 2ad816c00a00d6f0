// The vendors an openai-compatible channel may name (`preset:`), one small entry each:
// their public host, whether keys are optional, where their paths differ from OpenAI's,
// whether they need reasoning back on chat turns, and how they say a key is at fault where
// that differs from the kind's rules. Adding a vendor is one entry here.

import type { ChatReasoningField } from "../../protocols/adapter.js";
import type { KeyFaultRules } from "../provider.js";
import { xaiKeyFaults } from "./key-faults.js";

export interface Preset {
  /** The vendor's public host; absent: base_url is required (a server the operator runs). */
  readonly baseUrl?: string;
  /** Keys are optional (a local server without auth): a channel without keys still runs. */
  readonly keysOptional?: true;
  /** OpenAI paths (query apart) the vendor serves elsewhere: OpenAI's → the vendor's. */
  readonly paths?: Readonly<Record<string, string>>;
  /** The field its chat API takes reasoning back in, on tool-call turns. */
  readonly chatReasoningField?: ChatReasoningField;
  /** How it says the key is at fault; absent: the kind's rules (key-faults.ts). */
  readonly keyFaults?: KeyFaultRules;
}

export const presets: Readonly<Record<string, Preset>> = Object.freeze({
  // DeepSeek documents its API without /v1 (kept only as an alias for OpenAI's SDKs); its
  // thinking mode wants the turn's reasoning_content back beside its tool calls.
  deepseek: {
    baseUrl: "https://api.deepseek.com",
    paths: { "/v1/chat/completions": "/chat/completions" },
    chatReasoningField: "reasoning_content",
  },
  // OpenRouter's API (chat completions, and its Responses API) lives under /api/v1.
  openrouter: { baseUrl: "https://openrouter.ai/api" },
  mistral: { baseUrl: "https://api.mistral.ai" },
  // xAI refuses an unknown key with a 400 that only its message tells from a bad request.
  xai: { baseUrl: "https://api.x.ai", keyFaults: xaiKeyFaults },
  // Groq's OpenAI-compatible API lives under /openai/v1.
  groq: { baseUrl: "https://api.groq.com/openai" },
  vllm: { keysOptional: true },
  ollama: { baseUrl: "http://127.0.0.1:11434", keysOptional: true },
});

export const presetNames: readonly string[] = Object.freeze(Object.keys(presets));
