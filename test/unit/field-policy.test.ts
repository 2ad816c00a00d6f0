// The field policy's table against the code that follows it: every client protocol's decoder
// drops, refuses and carries what its rows say; every target's encoder writes what the table
// maps and leaves out what it drops; the hub refuses what a target refuses; strict mode
// refuses drops; and the README's copy of the table is the table.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { InboundAdapter, OutboundAdapter } from "../../src/protocols/adapter.js";
import type { CanonicalRequest } from "../../src/protocols/canonical.js";
import {
  CLIENT_FIELDS, TARGET_FIELDS, HUB_ROUTES, fieldPolicyMarkdown, strictRefusal, targetDrops, treatmentFor, type ClientRule, type TargetField, type HubRoute,
} from "../../src/protocols/field-policy.js";
import { messagesInbound, messagesOutbound } from "../../src/protocols/anthropic/index.js";
import { generateInbound, generateOutbound } from "../../src/protocols/gemini/index.js";
import { chatInbound, chatOutbound } from "../../src/protocols/openai/index.js";
import { responsesOutbound } from "../../src/protocols/openai/responses-outbound.js";

type Json = Record<string, unknown>;

/** A minimal valid request per client protocol, and where array-item rules find their item. */
const clients: Partial<Record<HubRoute, { inbound: InboundAdapter; base: Json; items: Record<string, Json> }>> = {
  "chat-completions": {
    inbound: chatInbound,
    base: { model: "m", messages: [{ role: "user", content: "hi" }] },
    items: { "messages[]": { role: "user", content: "hi" } },
  },
  messages: {
    inbound: messagesInbound,
    base: { model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }] },
    items: { "tools[]": { name: "t", input_schema: { type: "object" } } },
  },
  "generate-content": {
    inbound: generateInbound,
    base: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
    items: { "tools[]": { functionDeclarations: [] }, "tools[].functionDeclarations[]": { name: "f" } },
  },
};

/** Nested objects a rule's parent must be valid as (the decoder reads them after screening). */
const parents: Record<string, Json> = {
  thinking: { type: "enabled", budget_tokens: 2048 },
  stream_options: {},
  generationConfig: {},
  toolConfig: {},
  metadata: {},
};

/** The request `base` with `value` at the rule's path ("a.b", "tools[].x", "tools[].functionDeclarations[].y"). */
function withField(wire: HubRoute, base: Json, path: string, value: unknown): Json {
  const items = clients[wire]!.items;
  const set = (obj: Json, parts: string[], prefix: string): Json => {
    const [head, ...rest] = parts;
    if (rest.length === 0) return { ...obj, [head]: value };
    if (head.endsWith("[]")) {
      const key = head.slice(0, -2);
      const itemPath = prefix ? `${prefix}.${head}` : head;
      const current = (Array.isArray(obj[key]) ? (obj[key] as Json[])[0] : undefined) ?? items[itemPath];
      return { ...obj, [key]: [set({ ...current }, rest, itemPath)] };
    }
    const current = (obj[head] as Json | undefined) ?? parents[head] ?? {};
    return { ...obj, [head]: set({ ...current }, rest, prefix ? `${prefix}.${head}` : head) };
  };
  return set(base, path.split("."), "");
}

const decode = (wire: HubRoute, body: Json): CanonicalRequest =>
  clients[wire]!.inbound.decodeRequest(body, { pathModel: "gemini-2.5-flash", pathStream: false });

/** A value the rule drops or refuses: the first candidate its predicate accepts. */
function refusedValue(r: ClientRule): unknown {
  const candidates: unknown[] = [2, true, ["TEXT", "AUDIO"], ["text", "audio"], { "50256": -100 }, "x"];
  return r.applies ? candidates.find((v) => r.applies!(v)) : r.field === "audio" ? { voice: "alloy", format: "wav" } : "x";
}

/** Rules a generic request can exercise (not the descriptive "messages[] (…)" rows). */
const concrete = (rules: readonly ClientRule[]) => rules.filter((r) => !r.field.includes(" "));

/** Drop rows of fields only an assistant message carries. */
const assistantOnly = new Set(["messages[].images"]);

describe("field policy: client decoders follow the table", () => {
  test("chat-completions: images of an earlier answer sent back with the history stay in the model's turn", () => {
    const image = { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } };
    const decoded = decode("chat-completions", { model: "m", messages: [
      { role: "user", content: "draw a cat" }, { role: "assistant", content: "Here.", images: [image] }, { role: "user", content: "bluer" },
    ] });
    assert.equal(decoded.dropped, undefined, "the target decides (modelImages)");
    assert.deepEqual(decoded.messages[1], { role: "assistant", content: [
      { type: "text", text: "Here." }, { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" } },
    ] });
    assert.deepEqual(targetDrops("chat-completions", "messages", decoded), ["messages[].images"]);
    assert.deepEqual(targetDrops("chat-completions", "generate-content", decoded), []);
    // On a user message `images` is a key the table does not know: dropped and named all the
    // same (issue 19: unknown fields are dropped, not refused).
    assert.deepEqual(decode("chat-completions", { model: "m", messages: [{ role: "user", content: "x", images: [image] }] }).dropped, ["messages[].images"]);
  });

  for (const wire of HUB_ROUTES) {
    if (!clients[wire]) continue; // responses: its decoder is tested with it
    const { base } = clients[wire]!;
    test(`${wire}: every drop row is dropped and named as the row says`, () => {
      // Fields only the model's own turns carry are tested on their own below.
      const drops = concrete(CLIENT_FIELDS[wire]).filter((r) => r.fate === "drop" && !assistantOnly.has(r.field));
      assert.ok(drops.length > 0);
      for (const r of drops) {
        const value = r.applies ? refusedValue(r) : r.field.endsWith("s") ? [] : "x";
        const decoded = decode(wire, withField(wire, base, r.field, value));
        assert.ok(decoded.dropped?.includes(r.field), `${r.field}: dropped ${JSON.stringify(decoded.dropped)}`);
      }
    });
    test(`${wire}: every refuse row is a 400 naming the field`, () => {
      for (const r of concrete(CLIENT_FIELDS[wire]).filter((x) => x.fate === "refuse")) {
        const body = withField(wire, base, r.field, refusedValue(r));
        assert.throws(() => decode(wire, body), (e: unknown) =>
          e instanceof GatewayError && e.status === 400 && e.message.includes(`\`${r.field.replaceAll("[]", "[0]")}\``),
        `${r.field} is refused`);
      }
    });
    test(`${wire}: a refusable field at its neutral value is carried, not refused`, () => {
      const neutral: Record<string, unknown> = {
        n: 1, logprobs: false, top_logprobs: 0, logit_bias: {}, modalities: ["text"],
        "generationConfig.candidateCount": 1, "generationConfig.responseLogprobs": false, "generationConfig.responseModalities": ["TEXT"],
      };
      for (const r of concrete(CLIENT_FIELDS[wire]).filter((x) => x.fate === "refuse" && x.applies)) {
        if (!(r.field in neutral)) continue;
        const decoded = decode(wire, withField(wire, base, r.field, neutral[r.field]));
        assert.equal(decoded.dropped, undefined, r.field);
      }
    });
    // Issue 19 changed this deliberately: a field the table does not know was a 400; it is now
    // dropped and named (never silently), and conversion: strict refuses it (strictRefusal).
    test(`${wire}: a field the table does not know is dropped and named, not refused and not silent`, () => {
      assert.deepEqual(decode(wire, { ...base, somethingNew: 1 }).dropped, ["somethingNew"]);
    });
  }
});

/** A request using each target feature, and how each target's body shows it. */
const plain: CanonicalRequest = { model: "m", system: [], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], stream: false };
const features: Record<TargetField, { request: CanonicalRequest; shows: Partial<Record<HubRoute, (body: Json) => boolean>> }> = {
  temperature: { request: { ...plain, temperature: 1.5 }, shows: { "chat-completions": (b) => b.temperature === 1.5, "generate-content": (b) => (b.generationConfig as Json)?.temperature === 1.5, responses: (b) => b.temperature === 1.5 } },
  reasoning: { request: { ...plain, reasoning: { effort: "high" }, maxTokens: 100 }, shows: { "chat-completions": (b) => b.reasoning_effort === "high", messages: (b) => (b.thinking as Json)?.type === "enabled", "generate-content": (b) => JSON.stringify(b).includes("thinkingBudget"), responses: (b) => (b.reasoning as Json)?.effort === "high" } },
  topP: { request: { ...plain, topP: 0.37 }, shows: { "chat-completions": (b) => b.top_p === 0.37, messages: (b) => b.top_p === 0.37, "generate-content": (b) => (b.generationConfig as Json)?.topP === 0.37, responses: (b) => b.top_p === 0.37 } },
  topK: { request: { ...plain, topK: 37 }, shows: { "chat-completions": (b) => "top_k" in b, messages: (b) => b.top_k === 37, "generate-content": (b) => (b.generationConfig as Json)?.topK === 37, responses: (b) => "top_k" in b } },
  frequencyPenalty: { request: { ...plain, frequencyPenalty: 0.37 }, shows: { "chat-completions": (b) => b.frequency_penalty === 0.37, messages: (b) => JSON.stringify(b).includes("0.37"), "generate-content": (b) => (b.generationConfig as Json)?.frequencyPenalty === 0.37, responses: (b) => JSON.stringify(b).includes("0.37") } },
  presencePenalty: { request: { ...plain, presencePenalty: 0.41 }, shows: { "chat-completions": (b) => b.presence_penalty === 0.41, messages: (b) => JSON.stringify(b).includes("0.41"), "generate-content": (b) => (b.generationConfig as Json)?.presencePenalty === 0.41, responses: (b) => JSON.stringify(b).includes("0.41") } },
  seed: { request: { ...plain, seed: 4242 }, shows: { "chat-completions": (b) => b.seed === 4242, messages: (b) => JSON.stringify(b).includes("4242"), "generate-content": (b) => (b.generationConfig as Json)?.seed === 4242, responses: (b) => JSON.stringify(b).includes("4242") } },
  stop: { request: { ...plain, stop: ["END"] }, shows: { "chat-completions": (b) => JSON.stringify(b.stop) === '["END"]', messages: (b) => JSON.stringify(b.stop_sequences) === '["END"]', "generate-content": (b) => JSON.stringify((b.generationConfig as Json)?.stopSequences) === '["END"]' } },
  user: { request: { ...plain, user: "user-marker" }, shows: { "chat-completions": (b) => b.user === "user-marker", messages: (b) => (b.metadata as Json)?.user_id === "user-marker", "generate-content": (b) => JSON.stringify(b).includes("user-marker"), responses: (b) => JSON.stringify(b).includes("user-marker") } },
  parallelToolCalls: {
    request: { ...plain, parallelToolCalls: false, tools: [{ name: "f", parameters: { type: "object" } }] },
    shows: { "chat-completions": (b) => b.parallel_tool_calls === false, messages: (b) => (b.tool_choice as Json)?.disable_parallel_tool_use === true, "generate-content": (b) => JSON.stringify(b).includes("arallel"), responses: (b) => b.parallel_tool_calls === false },
  },
  jsonMode: { request: { ...plain, responseFormat: {} }, shows: { "chat-completions": (b) => JSON.stringify(b.response_format).includes("json_object"), "generate-content": (b) => (b.generationConfig as Json)?.responseMimeType === "application/json", responses: (b) => JSON.stringify(b.text).includes("json_object") } },
  cache: {
    request: { ...plain, messages: [{ role: "user", content: [{ type: "text", text: "hi", cache: { type: "ephemeral" } }] }] },
    shows: { "chat-completions": (b) => /cache/.test(JSON.stringify(b)), messages: (b) => JSON.stringify(b).includes("cache_control"), "generate-content": (b) => /cache/i.test(JSON.stringify(b)), responses: (b) => /cache/.test(JSON.stringify(b)) },
  },
  modelImages: {
    request: { ...plain, messages: [...plain.messages, { role: "assistant", content: [{ type: "image", source: { kind: "base64", mediaType: "image/png", data: "TU9ERUxJTUc=" } }, { type: "text", text: "here" }] }, { role: "user", content: [{ type: "text", text: "bluer" }] }] },
    shows: {
      "chat-completions": (b) => JSON.stringify(b).includes("TU9ERUxJTUc="), messages: (b) => JSON.stringify(b).includes("TU9ERUxJTUc="),
      "generate-content": (b) => JSON.stringify((b.contents as Json[]).find((c) => c.role === "model")).includes('"inlineData":{"mimeType":"image/png","data":"TU9ERUxJTUc="}'),
      responses: (b) => JSON.stringify(b).includes("TU9ERUxJTUc="),
      },
    },
  webSearch: {
    request: { ...plain, hostedTools: [{ kind: "web_search" }] },
    shows: {
      "chat-completions": (b) => JSON.stringify(b).includes("web_search"),
      messages: (b) => JSON.stringify(b.tools) === '[{"type":"web_search_20250305","name":"web_search"}]',
      "generate-content": (b) => JSON.stringify(b.tools) === '[{"googleSearch":{}}]',
      responses: (b) => JSON.stringify(b.tools) === '[{"type":"web_search"}]',
    },
  },
  midSystem: {
    request: { ...plain, messages: [...plain.messages, { role: "assistant", content: [{ type: "text", text: "yes" }] }, { role: "system", content: [{ type: "text", text: "MIDSYS" }] }, { role: "user", content: [{ type: "text", text: "go" }] }] },
    shows: {
      "chat-completions": (b) => (b.messages as Json[]).some((m, i) => i > 0 && m.role === "system" && m.content === "MIDSYS"),
      messages: (b) => JSON.stringify(b.messages).includes("<system>\\nMIDSYS\\n</system>") && !("system" in b),
      "generate-content": (b) => JSON.stringify(b.contents).includes("<system>\\nMIDSYS\\n</system>") && !("systemInstruction" in b),
      responses: (b) => (b.input as Json[]).some((m) => (m.role === "system" || m.role === "developer") && JSON.stringify(m).includes("MIDSYS")),
    },
  },
};

const pick = (b: Json) => [b.temperature, b.top_p, b.top_k];

const outbound: Record<HubRoute, OutboundAdapter> = {
  "chat-completions": chatOutbound, messages: messagesOutbound, "generate-content": generateOutbound, responses: responsesOutbound,
};

describe("field policy: targets follow the table", () => {
  for (const to of HUB_ROUTES) {
    test(`→ ${to}: refused features are a 400, dropped ones named and left out, mapped ones written`, () => {
      for (const [field, rule] of Object.entries(TARGET_FIELDS) as [TargetField, (typeof TARGET_FIELDS)[TargetField]][]) {
        const { request, shows } = features[field];
        assert.ok(rule.present(request), `${field}: the sample request uses it`);
        const treatment = treatmentFor(rule, to, request);
        if (treatment === "refuse") {
          assert.throws(() => targetDrops("chat-completions", to, request), (e: unknown) => e instanceof GatewayError && e.status === 400, `${field} → ${to}`);
          continue;
        }
        const dropped = targetDrops("messages", to, request);
        const body = outbound[to].encodeRequest(to === "messages" ? { ...request, maxTokens: 100 } : request, "m");
        const show = shows[to];
        if (treatment === "drop") {
          assert.equal(dropped.length, 1, `${field} → ${to}: named`);
          if (show) assert.equal(show(body), false, `${field} → ${to}: left out of ${JSON.stringify(body)}`);
        } else {
          assert.deepEqual(dropped, [], `${field} → ${to}`);
          if (show) assert.equal(show(body), true, `${field} → ${to}: written in ${JSON.stringify(body)}`);
        }
      }
    });
  }

  test("sampling the messages API refuses beside thinking is dropped toward it, and mapped without thinking", () => {
    const sampling = { ...plain, topK: 64, temperature: 0.2, topP: 0.9, maxTokens: 4096 };
    const thinking: CanonicalRequest = { ...sampling, reasoning: { budgetTokens: 2048 } };
    assert.deepEqual(targetDrops("generate-content", "messages", thinking),
      ["generationConfig.temperature", "generationConfig.topP", "generationConfig.topK"]);
    const body = messagesOutbound.encodeRequest(thinking, "m");
    assert.deepEqual([body.temperature, body.top_p, body.top_k], [undefined, undefined, undefined]);
    assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 2048 });
    // Gemini CLI's own values: temperature 1 and top_p 0.95 are what the API allows.
    const allowed: CanonicalRequest = { ...thinking, temperature: 1, topP: 0.95 };
    assert.deepEqual(targetDrops("generate-content", "messages", allowed), ["generationConfig.topK"]);
    assert.deepEqual(pick(messagesOutbound.encodeRequest(allowed, "m")), [1, 0.95, undefined]);
    assert.deepEqual(targetDrops("generate-content", "messages", sampling), []);
    assert.deepEqual(pick(messagesOutbound.encodeRequest(sampling, "m")), [0.2, 0.9, 64]);
  });

  test("thinking toward messages is dropped in a tool loop whose last turn lost its signed thinking", () => {
    const call = { type: "tool_use", id: "c1", name: "f", input: {} } as const;
    const result = { role: "user", content: [{ type: "tool_result", toolUseId: "c1", content: [{ type: "text", text: "ok" }] }] } as const;
    const loop = (first: readonly CanonicalRequest["messages"][number]["content"][number][]): CanonicalRequest => ({
      ...plain, reasoning: { effort: "high" }, maxTokens: 100, temperature: 0.3,
      messages: [...plain.messages, { role: "assistant", content: [...first, call] }, result],
    });
    const unsigned = loop([]);
    assert.deepEqual(targetDrops("chat-completions", "messages", unsigned), ["reasoning_effort"]);
    const body = messagesOutbound.encodeRequest(unsigned, "m");
    assert.equal(body.thinking, undefined);
    assert.equal(body.temperature, 0.3, "without thinking, the temperature is the client's");
    const signed = loop([{ type: "thinking", text: "hmm", signature: "sig" }]);
    assert.deepEqual(targetDrops("chat-completions", "messages", signed), ["temperature"]);
    assert.deepEqual(messagesOutbound.encodeRequest(signed, "m").thinking, { type: "enabled", budget_tokens: 24576 });
    // A fresh user turn needs no earlier thinking, and other targets keep reasoning.
    assert.deepEqual(targetDrops("chat-completions", "messages", { ...unsigned, messages: plain.messages }), ["temperature"]);
    assert.deepEqual(targetDrops("chat-completions", "generate-content", unsigned), []);
  });

  test("drops are named as the client sent them", () => {
    const r: CanonicalRequest = { ...plain, topK: 40, user: "u", messages: features.cache.request.messages };
    assert.deepEqual(targetDrops("generate-content", "chat-completions", { ...plain, topK: 40 }), ["generationConfig.topK"]);
    assert.deepEqual(targetDrops("messages", "chat-completions", r), ["top_k", "cache_control"]);
    assert.deepEqual(targetDrops("messages", "generate-content", r), ["metadata.user_id", "cache_control"]);
    assert.deepEqual(targetDrops("chat-completions", "generate-content", r), ["user", "messages[].content[].prompt_cache_breakpoint"]);
    assert.deepEqual(targetDrops("messages", "messages", plain), []);
  });

  test("cache hints are named as the client spelled them, and the messages API gets the last four", () => {
    const hint = { type: "ephemeral" } as const;
    const turns = (n: number): CanonicalRequest["messages"] => Array.from({ length: n }, (_, i) => ({
      role: i % 2 === 0 ? "user" as const : "assistant" as const, content: [{ type: "text" as const, text: `t${i}`, cache: hint }],
    }));
    const spelled: CanonicalRequest = { ...plain, messages: turns(1), spelledAs: { cache: ["messages[].cache_control", "messages[].content[].cache_control"] } };
    assert.deepEqual(targetDrops("chat-completions", "generate-content", spelled), ["messages[].cache_control", "messages[].content[].cache_control"]);
    assert.deepEqual(targetDrops("chat-completions", "messages", spelled), []);
    const six: CanonicalRequest = { ...plain, system: [{ type: "text", text: "sys", cache: hint }], messages: turns(5), spelledAs: { cache: ["messages[].cache_control"] } };
    assert.deepEqual(targetDrops("chat-completions", "messages", six), ["messages[].cache_control"]);
    const body = messagesOutbound.encodeRequest({ ...six, maxTokens: 10 }, "m");
    assert.equal(JSON.stringify(body).split("cache_control").length - 1, 4);
    assert.equal((body.system as Json[])[0].cache_control, undefined, "the earliest (system) is left out");
    assert.equal(((body.messages as Json[])[0].content as Json[])[0].cache_control, undefined);
    assert.deepEqual(((body.messages as Json[])[4].content as Json[])[0].cache_control, hint);
  });

  test("a refusal names the client's field", () => {
    assert.throws(() => targetDrops("chat-completions", "messages", { ...plain, responseFormat: {} }),
      (e: unknown) => e instanceof GatewayError && e.message.startsWith("`response_format` (JSON without a schema)"));
    assert.throws(() => targetDrops("generate-content", "responses", { ...plain, stop: ["x"] }),
      (e: unknown) => e instanceof GatewayError && e.message.startsWith("`generationConfig.stopSequences`"));
  });

  test("strict refuses drops, naming each", () => {
    const e = strictRefusal(["context_management", "thinking.display"]);
    assert.equal(e.status, 400);
    assert.match(e.message, /`context_management`, `thinking.display`: .*conversion: strict/);
  });
});

describe("field policy: docs/conversion.md shows the table", () => {
  test("the page's table is the code's table", () => {
    const page = readFileSync(new URL("../../docs/conversion.md", import.meta.url), "utf8");
    const start = page.indexOf("<!-- field-policy:start -->\n");
    const end = page.indexOf("<!-- field-policy:end -->");
    assert.ok(start >= 0 && end > start, "docs/conversion.md has the field-policy markers");
    assert.equal(page.slice(start + "<!-- field-policy:start -->\n".length, end), fieldPolicyMarkdown(),
      "regenerate docs/conversion.md: npm run docs");
  });

  test("every client protocol has rows of each kind, and no field twice", () => {
    for (const wire of HUB_ROUTES) {
      const fates = new Set<string>(CLIENT_FIELDS[wire].map((r) => (r.fate === "map" || r.fate === "drop" || r.fate === "refuse" ? r.fate : "target")));
      for (const kind of ["map", "drop", "refuse", "target"]) assert.ok(fates.has(kind), `${wire} has a ${kind} row`);
      const names = CLIENT_FIELDS[wire].map((r) => r.field);
      assert.equal(new Set(names).size, names.length, `${wire}: a field listed twice`);
    }
  });
});
