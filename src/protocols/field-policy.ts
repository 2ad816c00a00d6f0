// What a converted request does with each field the client sent, per protocol pair, as one
// table: map it (it means something in the target), drop it (it only steers the client's own
// provider; named in x-gateway-dropped-fields and the usage log), or refuse it (its loss would
// change what the client gets). Decoders screen the client's fields through CLIENT_FIELDS; the
// hub checks the target-dependent ones (TARGET_FIELDS) per channel before encoding; the README
// table is generated from both (fieldPolicyMarkdown) and a test keeps them equal.

import { errors } from "../errors/catalogue.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { Protocol } from "../runtime/types.js";
import type { CanonicalRequest } from "./canonical.js";

/** The routes the hub converts between (a protocol's model-call APIs: OpenAI's two, and
 * the messages and generate-content APIs), by route name. */
export type HubRoute = "chat-completions" | "messages" | "generate-content" | "responses";
export const HUB_ROUTES: readonly HubRoute[] = ["chat-completions", "messages", "generate-content", "responses"];

export type Treatment = "map" | "drop" | "refuse";

/** Canonical request features whose fate depends on the target protocol. */
export type TargetField =
  | "reasoning" | "temperature" | "topP" | "topK" | "frequencyPenalty" | "presencePenalty" | "seed" | "stop" | "user"
  | "parallelToolCalls" | "jsonMode" | "cache" | "midSystem" | "modelImages" | "webSearch";

interface TargetRule {
  /** Whether the request uses the feature (at a value that matters). */
  readonly present: (r: CanonicalRequest) => boolean;
  /** The condition `present` tests, for the README ("" when any value counts). */
  readonly when: string;
  readonly to: Readonly<Record<HubRoute, Treatment>>;
  /** Targets whose treatment depends on the rest of the request: the first condition that
   * holds decides (none: map), instead of `present` and `to`. */
  readonly at?: Readonly<Partial<Record<HubRoute, readonly Condition[]>>>;
  /** Why a target drops or refuses it, for the README. */
  readonly why: string;
}

/** One case of a target's treatment: when it holds, and what is done then. */
interface Condition {
  readonly present: (r: CanonicalRequest) => boolean;
  readonly when: string;
  readonly treatment: Treatment;
}

/** The most cache breakpoints (blocks with cache_control) the messages API takes in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

const nonZero = (v: number | undefined): boolean => v !== undefined && v !== 0;
/**
 * With thinking on, the messages API wants the assistant turn whose tool calls the last user
 * turn answers to start with its own signed thinking. A client of another protocol rarely
 * sends reasoning back (chat-completions has no way to), so such a tool loop can only go on
 * without thinking: the table drops it rather than have the API refuse the turn.
 */
export function toolTurnLacksThinking(r: CanonicalRequest): boolean {
  const last = r.messages.at(-1);
  if (!last || last.role !== "user" || !last.content.some((b) => b.type === "tool_result")) return false;
  for (let i = r.messages.length - 2; i >= 0; i--) {
    const m = r.messages[i];
    if (m.role === "system") continue;
    if (m.role !== "assistant") return false;
    const first = m.content[0];
    return !(first?.type === "redacted_thinking" || (first?.type === "thinking" && first.signature !== undefined));
  }
  return false;
}

/** Whether thinking goes to the messages API (asked for, and not dropped). */
const thinking = (r: CanonicalRequest): boolean => r.reasoning !== undefined && !toolTurnLacksThinking(r);

/** Sampling settings the messages API refuses beside thinking (temperature other than 1,
 * top_p below 0.95, any top_k): the table drops them, and the messages encoder leaves them out. */
export const refusedBesideThinking = {
  /** Thinking itself, in a tool loop whose last turn lost its signed thinking. */
  reasoning: (r: CanonicalRequest): boolean => r.reasoning !== undefined && toolTurnLacksThinking(r),
  temperature: (r: CanonicalRequest): boolean => thinking(r) && r.temperature !== undefined && r.temperature !== 1,
  topP: (r: CanonicalRequest): boolean => thinking(r) && r.topP !== undefined && r.topP < 0.95,
  topK: (r: CanonicalRequest): boolean => thinking(r) && r.topK !== undefined,
} as const;
const everywhere: Record<HubRoute, Treatment> = { "chat-completions": "map", messages: "map", "generate-content": "map", responses: "map" };
const only = (where: Partial<Record<HubRoute, Treatment>>): Record<HubRoute, Treatment> => ({ ...everywhere, ...where });

/** Per canonical feature, what each target protocol does with it. */
export const TARGET_FIELDS: Readonly<Record<TargetField, TargetRule>> = {
  temperature: {
    present: (r) => (r.temperature ?? 0) > 1, when: "above 1", to: only({ messages: "refuse" }),
    at: { messages: [
      { present: (r) => (r.temperature ?? 0) > 1, when: "above 1", treatment: "refuse" },
      { present: refusedBesideThinking.temperature, when: "not 1 with thinking on", treatment: "drop" },
    ] },
    why: "the messages API takes 0–1, and only 1 beside thinking",
  },
  reasoning: {
    present: (r) => r.reasoning !== undefined, when: "", to: everywhere,
    at: { messages: [{ present: refusedBesideThinking.reasoning, when: "a tool result answers a turn without signed thinking", treatment: "drop" }] },
    why: "the messages API takes thinking in a tool loop only with the thinking it signed (clients of other protocols do not send it back)",
  },
  topP: {
    present: (r) => r.topP !== undefined, when: "", to: everywhere,
    at: { messages: [{ present: refusedBesideThinking.topP, when: "below 0.95 with thinking on", treatment: "drop" }] },
    why: "the messages API takes only 0.95–1 beside thinking",
  },
  topK: {
    present: (r) => r.topK !== undefined, when: "", to: only({ "chat-completions": "drop", responses: "drop" }),
    // Gemini CLI sends topK with thinking on every turn; the messages API refuses the pair.
    at: { messages: [{ present: refusedBesideThinking.topK, when: "thinking is on", treatment: "drop" }] },
    why: "a sampling hint OpenAI's APIs lack, and the messages API refuses with thinking",
  },
  frequencyPenalty: {
    present: (r) => nonZero(r.frequencyPenalty), when: "not 0", to: only({ messages: "drop", responses: "drop" }),
    why: "a sampling hint the messages and responses APIs lack",
  },
  presencePenalty: {
    present: (r) => nonZero(r.presencePenalty), when: "not 0", to: only({ messages: "drop", responses: "drop" }),
    why: "a sampling hint the messages and responses APIs lack",
  },
  seed: {
    present: (r) => r.seed !== undefined, when: "", to: only({ messages: "drop", responses: "drop" }),
    why: "best-effort determinism the messages and responses APIs lack",
  },
  // Stop sequences cut the answer where the client said; responses has none to cut with.
  stop: { present: (r) => (r.stop?.length ?? 0) > 0, when: "", to: only({ responses: "refuse" }), why: "the responses API cannot stop there" },
  user: { present: (r) => r.user !== undefined, when: "", to: only({ "generate-content": "drop" }), why: "an end-user id Gemini has no field for" },
  // Every client protocol can carry several calls in one answer, so the answer stays valid.
  parallelToolCalls: {
    present: (r) => r.parallelToolCalls === false, when: "false", to: only({ "generate-content": "drop" }),
    why: "Gemini cannot turn parallel calls off; several calls are still a valid answer",
  },
  jsonMode: {
    present: (r) => r.responseFormat !== undefined && r.responseFormat.schema === undefined, when: "JSON without a schema",
    to: only({ messages: "refuse" }), why: "the messages API enforces JSON only with a schema",
  },
  cache: {
    present: hasCacheHint, when: "", to: only({ "chat-completions": "drop", "generate-content": "drop", responses: "drop" }),
    at: { messages: [{
      present: (r) => cacheBreakpoints(r) > MAX_CACHE_BREAKPOINTS, when: `more than ${MAX_CACHE_BREAKPOINTS} (the earliest are left out)`, treatment: "drop",
    }] },
    why: `explicit cache breakpoints exist only at Anthropic, which takes ${MAX_CACHE_BREAKPOINTS} (the last ones cover the longest prefix); the others cache prefixes by themselves`,
  },
  modelImages: {
    present: (r) => r.messages.some((m) => m.role === "assistant" && m.content.some((b) => b.type === "image")), when: "",
    to: only({ "chat-completions": "drop", messages: "drop", responses: "drop" }),
    why: "images of an earlier answer: only Gemini takes images in the model's turns",
  },
  midSystem: {
    present: (r) => r.messages.some((m) => m.role === "system"), when: "", to: everywhere,
    why: "kept in place (a user-turn note where the target has no system turns)",
  },
  // Hosted tools: one rule for every pair. Web search exists at every provider and becomes
  // the target's own; any other hosted tool is dropped by the decoder when merely offered,
  // and a tool_choice forcing one is refused there.
  webSearch: {
    present: offersWebSearch, when: "", to: only({ "chat-completions": "drop" }),
    at: { messages: [{ present: (r) => offersWebSearch(r) && (r.tools?.some((t) => t.name === "web_search") ?? false),
      when: "a function tool is named web_search", treatment: "drop" }] },
    why: "each provider's own web search (Anthropic web_search_20250305, Gemini googleSearch, responses web_search); "
      + "chat-completions has it only on search models, which take no tools, so it is dropped there",
  },
};

function offersWebSearch(r: CanonicalRequest): boolean {
  return r.hostedTools?.some((t) => t.kind === "web_search") ?? false;
}

/** Whether the request's web search goes to a target of protocol `to` as its own tool. */
export function mapsWebSearch(to: HubRoute, r: CanonicalRequest): boolean {
  return offersWebSearch(r) && treatmentFor(TARGET_FIELDS.webSearch, to, r) === "map";
}

/** The name a dropped hosted tool is reported by: `prefix` and the client's type, made safe. */
export function hostedToolName(prefix: string, type: string): string {
  return `${prefix} (type ${safeKey(type)})`;
}

/** The 400 for a tool_choice that forces a hosted tool: no other provider would run it, and
 * an answer without the forced call is not the answer asked for. */
export function forcedHostedRefusal(field: string, type: string): GatewayError {
  return refusal(`${field}`, `it forces ${safeKey(type)}, a tool the client's provider runs itself; `
    + "hosted tools are converted only when offered (web search is mapped, others dropped), never when forced");
}

function hasCacheHint(r: CanonicalRequest): boolean {
  return cacheBreakpoints(r) > 0;
}

/** How many cache hints a request carries (tools, system, turns, tool results' content). */
export function cacheBreakpoints(r: CanonicalRequest): number {
  let n = 0;
  for (const t of r.tools ?? []) if (t.cache) n++;
  for (const b of r.system) if (b.cache) n++;
  for (const m of r.messages) {
    for (const b of m.content) {
      if ("cache" in b && b.cache) n++;
      if (b.type === "tool_result") for (const c of b.content) if (c.cache) n++;
    }
  }
  return n;
}

/** One field as a client sends it: `[]` marks array items ("tools[].defer_loading"). */
export interface ClientRule {
  readonly field: string;
  /** A fixed treatment, or the target feature it is carried as. */
  readonly fate: Treatment | TargetField;
  /** For drop and refuse: the values the fate applies to; any other value is the field's
   * neutral one, carried (store: false asks for what the gateway does anyway). */
  readonly applies?: (v: unknown) => boolean;
  /** Those values, for the README and the 400. */
  readonly when?: string;
  readonly why: string;
}

const rule = (field: string, fate: ClientRule["fate"], why = "", applies?: ClientRule["applies"], when?: string): ClientRule =>
  ({ field, fate, why, ...(applies && { applies, when }) });
const above = (n: number) => (v: unknown) => typeof v === "number" && v > n;
const isTrue = (v: unknown) => v === true;
/** Plain drops (toward every other protocol), as one record of field → why: the order of the
 * record is the order of the table. */
const drops = (why: Readonly<Record<string, string>>): ClientRule[] =>
  Object.entries(why).map(([field, reason]) => rule(field, "drop", reason));

const CHAT: readonly ClientRule[] = [
  rule("model", "map"), rule("messages", "map"), rule("stream", "map"), rule("stream_options", "map"),
  rule("stream_options.include_usage", "map"),
  rule("stream_options.include_obfuscation", "drop", "pads stream chunks; the gateway writes the stream anew"),
  rule("max_tokens", "map"), rule("max_completion_tokens", "map"), rule("top_p", "topP"),
  rule("temperature", "temperature"), rule("stop", "stop"), rule("frequency_penalty", "frequencyPenalty"),
  rule("presence_penalty", "presencePenalty"), rule("seed", "seed"), rule("tools", "map"), rule("tool_choice", "map"),
  rule("parallel_tool_calls", "parallelToolCalls"), rule("reasoning_effort", "reasoning"),
  rule("response_format", "jsonMode"), rule("user", "user"), rule("safety_identifier", "user"),
  rule("messages[].content[].prompt_cache_breakpoint", "cache"),
  rule("messages[].content[].cache_control", "cache"), rule("messages[].cache_control", "cache", "carried on the message's last content block; otherwise as for content parts"),
  rule("messages[] (system or developer after the first turn)", "midSystem"),
  rule("metadata", "drop", "tags stored completions at OpenAI"), rule("store", "drop", "storage at OpenAI (false is what the gateway does anyway)", isTrue, "true"),
  ...drops({
    service_tier: "OpenAI processing tier", prompt_cache_key: "OpenAI cache routing",
    prompt_cache_retention: "OpenAI cache lifetime", prompt_cache_options: "OpenAI cache routing",
    prediction: "Predicted Outputs only speed generation up",
    verbosity: "a length hint to OpenAI models",
    "messages[].name": "a participant label no other protocol has",
  }),
  rule("messages[].images", "modelImages"),
  rule("n", "refuse", "a converted answer carries one choice", above(1), "above 1"),
  rule("logprobs", "refuse", "log probabilities come back only from OpenAI", isTrue, "true"),
  rule("top_logprobs", "refuse", "log probabilities come back only from OpenAI", above(0), "above 0"),
  rule("logit_bias", "refuse", "token biases exist only at OpenAI", (v) => typeof v === "object" && v !== null && Object.keys(v).length > 0, "not empty"),
  rule("modalities", "refuse", "only text output can be converted", (v) => !Array.isArray(v) || v.some((m) => m !== "text"), "with audio"),
  rule("audio", "refuse", "audio output cannot be converted"),
  rule("web_search_options", "webSearch"),
  rule("moderation", "refuse", "moderation results come back only from OpenAI"),
  rule("functions", "map", "legacy tools: the answer comes back as function_call"), rule("function_call", "map", "legacy tool_choice"),
];

const MESSAGES: readonly ClientRule[] = [
  rule("model", "map"), rule("max_tokens", "map"), rule("messages", "map"), rule("system", "map"), rule("stream", "map"),
  rule("top_p", "topP"), rule("tools", "map"), rule("tool_choice", "map"), rule("thinking", "reasoning"),
  rule("thinking.type", "map"), rule("thinking.budget_tokens", "map"), rule("output_config", "map"),
  rule("output_format", "map"), rule("metadata", "map"),
  rule("temperature", "temperature"), rule("top_k", "topK"), rule("stop_sequences", "stop"),
  rule("metadata.user_id", "user"), rule("tool_choice.disable_parallel_tool_use", "parallelToolCalls"),
  rule("cache_control", "cache"), rule("messages[] (role system after the first turn)", "midSystem"),
  rule("tools[].type", "map"), rule("tools[].name", "map"), rule("tools[].description", "map"),
  rule("tools[].input_schema", "map"), rule("tools[].cache_control", "cache"),
  rule("messages[].content[].content[] (tool_reference)", "map", "becomes text naming the tool: every tool is loaded already"),
  rule("messages[].content[] (image in an assistant turn)", "modelImages"),
  ...drops({
    context_management: "Anthropic's server-side context editing",
    service_tier: "Anthropic capacity tier", speed: "Anthropic throughput",
    inference_geo: "Anthropic region", diagnostics: "explains Anthropic cache misses",
    compaction: "Anthropic's server-side compaction", billing_policy: "Anthropic billing",
    fallbacks: "Anthropic's own fallback models", fallback_credit_token: "Anthropic billing",
    "thinking.display": "how Anthropic shows thinking",
    "tools[].defer_loading": "Anthropic's tool search loads it later",
    "tools[].input_examples": "examples for Anthropic's tool use",
    "tools[].strict": "Anthropic's schema guarantee for calls",
    "tools[].eager_input_streaming": "how finely Anthropic streams call input",
    "tools[].allowed_callers": "Anthropic's code-execution callers",
  }),
  rule("tools[] (type web_search_*)", "webSearch"),
  ...drops({
    "tools[] (other server tools: web_fetch_…, code_execution_…, tool_search_…)": "tools Anthropic runs itself, which the target has not",
    "tools[] (type bash_…, text_editor_…, computer_…, memory_…)": "Anthropic-defined client tools: only Claude knows their schema",
  }),
  rule("tool_choice (naming a server or Anthropic-defined tool)", "refuse", "a forced tool that cannot run changes the answer"),
  rule("messages[].content[] (server tool blocks: server_tool_use, web_search_tool_result…)", "drop",
    "Anthropic ran them in an earlier answer; what they found is in its text"),
  rule("container", "refuse", "code-execution containers run only at Anthropic"),
  rule("mcp_servers", "refuse", "remote MCP servers are called only by Anthropic"),
];

const GENERATE: readonly ClientRule[] = [
  rule("model", "map", "the URL names the model"), rule("contents", "map"), rule("systemInstruction", "map"),
  rule("tools", "map"), rule("toolConfig", "map"), rule("toolConfig.functionCallingConfig", "map"),
  rule("generationConfig", "map"), rule("generationConfig.maxOutputTokens", "map"), rule("generationConfig.topP", "topP"),
  rule("generationConfig.temperature", "temperature"), rule("generationConfig.topK", "topK"),
  rule("generationConfig.stopSequences", "stop"), rule("generationConfig.presencePenalty", "presencePenalty"),
  rule("generationConfig.frequencyPenalty", "frequencyPenalty"), rule("generationConfig.seed", "seed"),
  rule("generationConfig.responseMimeType", "jsonMode"), rule("generationConfig.responseSchema", "map"),
  rule("generationConfig.responseJsonSchema", "map"), rule("generationConfig.thinkingConfig", "reasoning"),
  ...drops({ safetySettings: "Gemini's safety thresholds", labels: "Vertex billing labels", serviceTier: "Gemini latency tier" }),
  rule("store", "drop", "logging at Google (false is what the gateway does anyway)", isTrue, "true"),
  ...drops({
    "toolConfig.includeServerSideToolInvocations": "server-side tools are refused",
    "toolConfig.retrievalConfig": "location for Google's grounding tools",
    "tools[].functionDeclarations[].response": "describes what the function returns",
    "tools[].functionDeclarations[].responseJsonSchema": "describes what the function returns",
    "generationConfig.mediaResolution": "Gemini's input image resolution",
    "generationConfig.routingConfig": "Vertex model routing",
    "generationConfig.modelSelectionConfig": "Vertex model routing",
    "generationConfig.enableEnhancedCivicAnswers": "a Gemini answer style",
    "generationConfig.audioTimestamp": "for audio input, which is refused",
    "generationConfig.enableAffectiveDialog": "a Live API audio style",
  }),
  rule("tools[].googleSearch", "webSearch"), rule("tools[].googleSearchRetrieval", "webSearch"),
  rule("tools[] (codeExecution, urlContext, googleMaps, fileSearch, computerUse, enterpriseWebSearch…)", "drop",
    "tools Gemini runs itself, which the target has not"),
  rule("cachedContent", "refuse", "an explicit context cache is part of the prompt and exists only at Gemini"),
  rule("generationConfig.candidateCount", "refuse", "a converted answer carries one candidate", above(1), "above 1"),
  rule("generationConfig.responseLogprobs", "refuse", "log probabilities come back only from Gemini", isTrue, "true"),
  rule("generationConfig.logprobs", "refuse", "log probabilities come back only from Gemini", above(0), "above 0"),
  rule("generationConfig.responseModalities", "refuse", "only TEXT output can be converted",
    (v) => !Array.isArray(v) || v.some((m) => typeof m !== "string" || m.toUpperCase() !== "TEXT"), "other than TEXT"),
  rule("generationConfig.speechConfig", "refuse", "audio output cannot be converted"),
  rule("generationConfig.audioTranscriptionConfig", "refuse", "audio output cannot be converted"),
  rule("generationConfig.imageConfig", "refuse", "image output cannot be converted"),
  rule("generationConfig.translationConfig", "refuse", "translation runs only at Gemini"),
];

// The responses client's decoder (responses-request-decode.ts) screens its fields with these.
const RESPONSES: readonly ClientRule[] = [
  rule("model", "map"), rule("input", "map"), rule("instructions", "map"), rule("stream", "map"),
  rule("max_output_tokens", "map"), rule("top_p", "topP"), rule("tools", "map"), rule("tool_choice", "map"),
  rule("reasoning", "reasoning"), rule("reasoning.effort", "map"), rule("reasoning.summary", "map", "thinking comes back as a summary"),
  rule("text", "map"),
  rule("include", "drop", "reasoning.encrypted_content is honoured; other extras exist only at OpenAI (logprobs ones are refused)",
    (v) => Array.isArray(v) && v.some((x) => x !== "reasoning.encrypted_content"), "anything but reasoning.encrypted_content"),
  rule("tools[] (type namespace)", "map", "its function tools are offered as they are"),
  rule("input[] (type image_generation_call)", "modelImages"),
  rule("temperature", "temperature"), rule("parallel_tool_calls", "parallelToolCalls"),
  rule("text.format", "jsonMode"), rule("user", "user"), rule("safety_identifier", "user"),
  rule("input[] (system or developer message after the first turn)", "midSystem"),
  rule("store", "drop", "storage at OpenAI (false is what the gateway does anyway)", isTrue, "true"),
  ...drops({
    metadata: "tags at OpenAI", service_tier: "OpenAI processing tier",
    prompt_cache_key: "OpenAI cache routing", prompt_cache_retention: "OpenAI cache lifetime",
    prompt_cache_options: "OpenAI cache routing", truncation: "OpenAI context truncation",
    stream_options: "stream padding; the gateway writes the stream anew",
    context_management: "OpenAI's server-side compaction", max_tool_calls: "OpenAI's built-in tool budget",
    "text.verbosity": "a length hint to OpenAI models",
    "tools[].defer_loading": "OpenAI's tool search loads it later",
    "tools[].allowed_callers": "OpenAI's programmatic callers", "tools[].output_schema": "describes what the tool returns",
  }),
  rule("tools[].strict", "map", "targets that enforce schemas do so anyway"),
  rule("client_metadata", "drop", "the client's own bookkeeping (Codex sends it on every turn)"),
  rule("tools[] (type web_search)", "webSearch"),
  rule("tools[] (other hosted types: file_search, image_generation, code_interpreter, computer_use_preview, mcp, local_shell…)", "drop",
    "tools OpenAI runs itself, which the target has not (Codex offers them beside its function tools)"),
  rule("tool_choice (a hosted tool)", "refuse", "a forced tool that cannot run changes the answer"),
  rule("input[] (hosted tool calls: web_search_call, file_search_call, image_generation_call…)", "drop",
    "OpenAI ran them in an earlier answer; what they found is in its text"),
  rule("previous_response_id", "refuse", "the gateway keeps no conversations (send the whole input)"),
  rule("conversation", "refuse", "the gateway keeps no conversations"),
  rule("background", "refuse", "background responses are stored at OpenAI", isTrue, "true"),
  rule("prompt", "refuse", "stored prompt templates exist only at OpenAI"),
  rule("top_logprobs", "refuse", "log probabilities come back only from OpenAI", above(0), "above 0"),
  rule("moderation", "refuse", "moderation results come back only from OpenAI"),
];

/** Every client protocol's fields. */
export const CLIENT_FIELDS: Readonly<Record<HubRoute, readonly ClientRule[]>> = {
  "chat-completions": CHAT, messages: MESSAGES, "generate-content": GENERATE, responses: RESPONSES,
};

const byField = new Map(HUB_ROUTES.map((w) => [w, new Map(CLIENT_FIELDS[w].map((r) => [r.field, r]))]));

/** The rule for `field` (a path with `[]` for array items) of a client protocol. */
export function clientRule(wire: HubRoute, field: string): ClientRule | undefined {
  return byField.get(wire)!.get(field);
}

/** The protocol a channel speaks. */
export function targetRouteOf(protocol: Protocol): HubRoute {
  return protocol === "openai" ? "chat-completions" : protocol === "anthropic" ? "messages" : "generate-content";
}

function refusal(name: string, why: string, when?: string): GatewayError {
  const value = when ? ` (${when})` : "";
  return new GatewayError(errors.invalidParameter, `\`${name}\`${value} cannot be converted for this model's channel: ${why}.`);
}

/** Where screenKeys is looking: the rule path ("tools[]") and the field as sent ("tools[2]"). */
export interface At {
  readonly path: string;
  readonly where: string;
}
export const TOP: At = { path: "", where: "" };

/**
 * Screens one object of a client request: a dropped key is added to `dropped` (once, by its
 * rule name), a refused value is a 400 naming the key, and a key the table does not know is
 * dropped and named too (a client release that adds a harmless field must not break every
 * converted model; `conversion: strict` refuses it). Keys the decoder carries pass; null
 * counts as absent.
 */
export function screenKeys(
  wire: HubRoute, obj: Readonly<Record<string, unknown>>, at: At, dropped: string[], readHere?: ReadonlySet<string>,
): void {
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (value === null || value === undefined || readHere?.has(key)) continue;
    const name = at.where ? `${at.where}.${key}` : key;
    const r = clientRule(wire, at.path ? `${at.path}.${key}` : key);
    if (!r) {
      noteUnknown(dropped, at.where, key);
      continue;
    }
    if (r.applies && !r.applies(value)) continue;
    if (r.fate === "drop") noteDropped(dropped, r.field);
    else if (r.fate === "refuse") throw refusal(name, r.why, r.when);
  }
}

/** At most this many names are reported: the client chooses unknown keys, and the names go
 * into a response header and the usage log. */
export const MAX_DROPPED_NAMES = 32;
/** The last name when more were dropped than are reported. */
export const MORE_DROPPED = "(more)";

/** Adds a dropped field's name once (printable ASCII only: it goes into a header). */
export function noteDropped(dropped: string[], name: string): void {
  const field = /^[\x20-\x7e]*$/.test(name) ? name : name.replace(/[^\x20-\x7e]/g, "?");
  if (dropped.includes(field)) return;
  if (dropped.length < MAX_DROPPED_NAMES) dropped.push(field);
  else if (dropped[MAX_DROPPED_NAMES - 1] !== MORE_DROPPED) dropped[MAX_DROPPED_NAMES - 1] = MORE_DROPPED;
}

/** A key as it may appear in a header and a comma-joined log column: plain keys as they are,
 * anything else percent-encoded (no commas, spaces or control characters), and bounded. */
export function safeKey(key: string): string {
  const plain = /^[A-Za-z0-9_$@:-]{1,64}$/.test(key) ? key : encodeURIComponent(key).slice(0, 64);
  return plain === "" ? "%22%22" : plain;
}

/**
 * Notes a key the conversion table does not know, found in the object at `where` (the field
 * as sent, "messages[2].content[0]"): named by its path with array positions left out
 * ("messages[].content[].foo"), so one unknown key sent on every message is named once.
 */
export function noteUnknown(dropped: string[], where: string, key: string): void {
  const path = where.replace(/\[\d+\]/g, "[]");
  noteDropped(dropped, path ? `${path}.${safeKey(key)}` : safeKey(key));
}

/** Notes every key of `obj` outside `known` as an unknown field (see noteUnknown); null
 * counts as absent. */
export function dropUnknownKeys(obj: Readonly<Record<string, unknown>>, known: ReadonlySet<string>, where: string, dropped: string[]): void {
  for (const key of Object.keys(obj)) {
    if (!known.has(key) && obj[key] !== null && obj[key] !== undefined) noteUnknown(dropped, where, key);
  }
}

/** The client's name for a target feature (its first rule), or the canonical name. */
function clientName(wire: HubRoute, field: TargetField): string {
  return CLIENT_FIELDS[wire].find((r) => r.fate === field)?.field ?? field;
}

/**
 * What the target protocol does with the request's target-dependent features: throws the 400
 * for a refused one, and returns the client's names for the dropped ones.
 */
export function targetDrops(from: HubRoute, to: HubRoute, request: CanonicalRequest): string[] {
  const dropped: string[] = [];
  for (const [field, r] of Object.entries(TARGET_FIELDS) as [TargetField, TargetRule][]) {
    const treatment = treatmentFor(r, to, request);
    if (treatment === "map") continue;
    const names = request.spelledAs?.[field] ?? [clientName(from, field)];
    if (treatment === "refuse") throw refusal(names[0], `the ${to} protocol cannot carry it`, r.when);
    for (const name of names) noteDropped(dropped, name);
  }
  return dropped;
}

/** What a target does with a feature of this request ("map" when the request does not use it). */
export function treatmentFor(r: TargetRule, to: HubRoute, request: CanonicalRequest): Treatment {
  const cases = r.at?.[to];
  if (cases) return cases.find((c) => c.present(request))?.treatment ?? "map";
  return r.present(request) ? r.to[to] : "map";
}

/** The 400 of a model set to `conversion: strict` for a request that would lose `fields`. */
export function strictRefusal(fields: readonly string[]): GatewayError {
  return new GatewayError(errors.conversionUnsupported,
    `${fields.map((f) => `\`${f}\``).join(", ")}: this model is set to conversion: strict, and its channel's protocol would drop ${fields.length > 1 ? "these fields" : "this field"}.`);
}

/** A client field's treatment toward a target, for the README ("—": the same protocol passes through). */
export function treatmentOf(from: HubRoute, r: ClientRule, to: HubRoute): string {
  if (from === to) return "—";
  if (r.fate === "map") return r.fate;
  if (r.fate === "drop" || r.fate === "refuse") return r.when ? `${r.fate} if ${r.when}` : r.fate;
  const target = TARGET_FIELDS[r.fate];
  const cases = target.at?.[to];
  if (cases) return cases.map((c) => `${c.treatment} if ${c.when}`).join("; ");
  const t = target.to[to];
  return t !== "map" && target.when ? `${t} if ${target.when}` : t;
}

/** The README's tables: one per client protocol, a column per target protocol. */
export function fieldPolicyMarkdown(): string {
  const out: string[] = [];
  for (const from of HUB_ROUTES) {
    out.push(`**${from} clients**`, "", `| field | ${HUB_ROUTES.map((w) => `→ ${w}`).join(" | ")} | why |`,
      `|${" --- |".repeat(HUB_ROUTES.length + 2)}`);
    for (const r of CLIENT_FIELDS[from]) {
      const why = r.why || (r.fate in TARGET_FIELDS ? TARGET_FIELDS[r.fate as TargetField].why : "");
      out.push(`| \`${r.field}\` | ${HUB_ROUTES.map((to) => treatmentOf(from, r, to)).join(" | ")} | ${why} |`);
    }
    out.push("");
  }
  return out.join("\n");
}
