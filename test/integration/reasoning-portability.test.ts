// Signed reasoning across a change of provider: each provider's signatures reach only that
// provider, on every route. A converted answer's signatures are sealed with their issuer
// ("gw:<issuer>:…", src/protocols/reasoning.ts), so a later request can be fitted to the
// channel it goes to: another provider's are left out and named, the channel's own go
// unsealed. The fake Anthropic refuses a signature it did not issue, as Anthropic does.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeResponses, type FakeResponses } from "../helpers/fake-responses.js";
import { M, startWorld, type World } from "../helpers/protocol-world.js";
import { CHANNEL_KEY, channel, rawRequest, TOKEN, type RawResponse } from "./support.js";

/** Gemini's thought signature in the fake's answer (protobuf in base64, as Gemini's). */
const GEMINI_SIG = "CiQBjz1rX0GeminiThoughtSig0001==";
/** A Claude model responses clients reach (converted). */
const CLAUDE_RESPONSES = "claude-opus-4-5";
/** A Gemini model responses clients reach (converted). */
const GEMINI_RESPONSES = "gemini-3-pro-preview";
/** OpenAI's encrypted reasoning (a Fernet token, as OpenAI's). */
const OPENAI_BLOB = "gAAAAABpZmFrZS1wb3J0YWJsZS1yZWFzb25pbmc=";
/** Anthropic's thinking signature in the fake's answer. */
const ANTHROPIC_SIG = "EqQBCkYIBRgCKkDfakeSignature==";

type Obj = Record<string, any>;

const post = (w: World, path: string, body: unknown, headers: Record<string, string>): Promise<RawResponse> =>
  rawRequest(`${w.gw.url}${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
const responses = (w: World, body: unknown) => post(w, "/v1/responses", body, { authorization: `Bearer ${TOKEN}` });
const messages = (w: World, body: unknown) => post(w, "/v1/messages", body, { "x-api-key": TOKEN, "anthropic-version": "2023-06-01" });
const generate = (w: World, model: string, body: unknown) =>
  post(w, `/v1beta/models/${model}:generateContent`, body, { "x-goog-api-key": TOKEN });


function dropped(res: RawResponse): string[] {
  const v = res.headers["x-gateway-dropped-fields"];
  return typeof v === "string" ? v.split(/,\s*/) : [];
}

const thinking = { type: "enabled", budget_tokens: 2048 };
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

describe("reasoning that survives a change of provider", () => {
  let w: World;
  let resp: FakeResponses;

  before(async () => {
    resp = await startFakeResponses({
      keys: [CHANNEL_KEY], verifyEncryptedContent: true,
      script: () => ({ kind: "ok", text: "OpenAI answers.", reasoning: { summary: ["OpenAI thinks."], encrypted: OPENAI_BLOB } }),
    });
    w = await startWorld({
      verifySignatures: true, thinkingSamplingRules: true,
      extraChannels: (urls) => [
        channel("resp", resp.url, { protocol: "openai", models: [M.responses] }),
        channel("an-resp", urls.anthropic, { protocol: "anthropic", models: [CLAUDE_RESPONSES] }),
        channel("gm-resp", urls.gemini, { protocol: "gemini", models: [GEMINI_RESPONSES] }),
      ],
      extraModels: {
        [CLAUDE_RESPONSES]: { endpoint: ["chat", "responses"], price: { input: 3, output: 15 } },
        [GEMINI_RESPONSES]: { endpoint: ["chat", "responses"], price: { input: 0.3, output: 2.5 } },
      },
    });
  });
  after(async () => {
    await w?.close();
    await resp?.close();
  });
  beforeEach(() => w.reset());

  test("/v1/messages: Gemini model → Claude model → Gemini model, each provider given only its own signatures", async () => {
    // 1. A Gemini model answers a messages client: its thought signature comes back sealed.
    w.scripts.gemini = () => ({ kind: "thinking", thought: "Gemini thinks.", text: "Gemini answers.", signature: GEMINI_SIG });
    const first = await messages(w, { model: M.gemini, max_tokens: 4000, thinking, messages: [user("one")] });
    assert.equal(first.status, 200, first.text);
    const geminiTurn = JSON.parse(first.text) as Obj;
    const geminiThinking = geminiTurn.content.find((b: Obj) => b.type === "thinking");
    assert.equal(geminiThinking.signature, `gw:gemini:${GEMINI_SIG}`, "sealed with its issuer");

    // 2. The session moves to a Claude model (pass-through): Anthropic never sees Gemini's signature.
    w.scripts.anthropic = () => ({ kind: "thinking", thinking: "Claude thinks.", text: "Claude answers.", signature: ANTHROPIC_SIG });
    const history = [user("one"), { role: "assistant", content: geminiTurn.content }, user("two")];
    const second = await messages(w, { model: M.anthropic, max_tokens: 4000, thinking, messages: history });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(dropped(second), ["thinking.signature (from gemini)"]);
    assert.deepEqual((await w.entry(String(second.headers["x-gateway-request-id"]))).droppedFields, ["thinking.signature (from gemini)"]);
    const toAnthropic = JSON.stringify(w.sent("anthropic"));
    assert.ok(!toAnthropic.includes(GEMINI_SIG), "Gemini's signature reached Anthropic");
    assert.deepEqual(w.sent("anthropic").messages[1].content, [{ type: "text", text: "Gemini answers." }]);
    const claudeTurn = JSON.parse(second.text) as Obj;
    assert.equal(claudeTurn.content[0].signature, ANTHROPIC_SIG, "a pass-through answer is the provider's own");

    // 3. Back to the Gemini model: Gemini gets its own signature unsealed, never Anthropic's.
    w.scripts.gemini = () => ({ kind: "ok", text: "Gemini again." });
    const third = await messages(w, {
      model: M.gemini, max_tokens: 4000, thinking,
      messages: [...history, { role: "assistant", content: claudeTurn.content }, user("three")],
    });
    assert.equal(third.status, 200, third.text);
    assert.deepEqual(dropped(third), ["thinking.signature (from anthropic)"]);
    const toGemini = w.sent("gemini");
    assert.ok(!JSON.stringify(toGemini).includes(ANTHROPIC_SIG), "Anthropic's signature reached Gemini");
    const signed = toGemini.contents[1].parts.find((p: Obj) => p.thought === true);
    assert.equal(signed.thoughtSignature, GEMINI_SIG);
  });

  test("streamed: the converted stream's signature is sealed too", async () => {
    w.scripts.gemini = () => ({ kind: "thinking", thought: "Gemini thinks.", text: "Gemini answers.", signature: GEMINI_SIG });
    const res = await messages(w, { model: M.gemini, max_tokens: 4000, thinking, stream: true, messages: [user("one")] });
    assert.equal(res.status, 200, res.text);
    const signatures = res.text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)) as Obj)
      .filter((e) => e.delta?.type === "signature_delta").map((e) => e.delta.signature);
    assert.deepEqual(signatures, [`gw:gemini:${GEMINI_SIG}`]);
  });

  test("generate-content pass-through: a sealed Anthropic signature is left out, Gemini's own unsealed", async () => {
    const res = await generate(w, M.gemini, {
      contents: [
        { role: "user", parts: [{ text: "one" }] },
        { role: "model", parts: [{ text: "a", thought: true, thoughtSignature: `gw:anthropic:${ANTHROPIC_SIG}` }, { text: "b" }] },
        { role: "user", parts: [{ text: "two" }] },
        { role: "model", parts: [{ functionCall: { name: "f", args: {} }, thoughtSignature: `gw:gemini:${GEMINI_SIG}` }] },
        { role: "user", parts: [{ functionResponse: { name: "f", response: { ok: true } } }] },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(dropped(res), ["thoughtSignature (from anthropic)"]);
    const sent = w.sent("gemini").contents;
    assert.deepEqual(sent[1].parts, [{ text: "a", thought: true }, { text: "b" }]);
    assert.deepEqual(sent[3].parts, [{ functionCall: { name: "f", args: {} }, thoughtSignature: GEMINI_SIG }]);
  });

  test("a request with only Anthropic's own signatures goes to Anthropic as it was sent (but for model_map)", async () => {
    const body = `{"model":"${M.anthropic}", "max_tokens": 100, "thinking": {"type":"enabled","budget_tokens":1024},`
      + `"messages":[{"role":"user","content":"one"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"${ANTHROPIC_SIG}"},{"type":"text","text":"x"}]},{"role":"user","content":"two"}]}`;
    const res = await rawRequest(`${w.gw.url}/v1/messages`, {
      method: "POST", body, headers: { "x-api-key": TOKEN, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers["x-gateway-dropped-fields"], undefined);
    assert.deepEqual(w.sent("anthropic"), { ...JSON.parse(body), model: "claude-sonnet-4-6-20260217" });
  });

  test("/v1/messages tool loop moved from a Gemini model to a Claude model: the turn lost its thinking, so thinking goes off", async () => {
    const res = await messages(w, {
      model: M.anthropic, max_tokens: 4000, thinking,
      tools: [{ name: "ls", input_schema: { type: "object" } }],
      messages: [
        user("list"),
        { role: "assistant", content: [
          { type: "thinking", thinking: "Call ls.", signature: `gw:gemini:${GEMINI_SIG}` },
          { type: "tool_use", id: "toolu_1", name: "ls", input: {} },
        ] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a b" }] },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(dropped(res), ["thinking.signature (from gemini)", "thinking"]);
    assert.equal(w.sent("anthropic").thinking, undefined);
  });

  test("/v1/messages: reasoning another vendor gave unsigned (\"\") is left out toward Anthropic", async () => {
    w.scripts.openai = () => ({ kind: "reasoning", reasoning: "DeepSeek-style thoughts.", text: "Plain answer." });
    const first = await messages(w, { model: M.openai, max_tokens: 1000, messages: [user("one")] });
    assert.equal(first.status, 200, first.text);
    const turn = JSON.parse(first.text) as Obj;
    assert.equal(turn.content[0].signature, "");
    const res = await messages(w, { model: M.anthropic, max_tokens: 1000, messages: [user("one"), { role: "assistant", content: turn.content }, user("two")] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(dropped(res), ["thinking (unsigned)"]);
    assert.deepEqual(w.sent("anthropic").messages[1].content, [{ type: "text", text: "Plain answer." }]);
  });

  test("/v1/responses: a Claude model's reasoning item is left out toward OpenAI, OpenAI's own goes unsealed", async () => {
    w.scripts.anthropic = () => ({ kind: "thinking", thinking: "Claude thinks.", text: "Claude answers.", signature: ANTHROPIC_SIG });
    const first = await responses(w, { model: CLAUDE_RESPONSES, reasoning: { effort: "low" }, input: "one" });
    assert.equal(first.status, 200, first.text);
    const claudeItems = (JSON.parse(first.text) as Obj).output as Obj[];
    const claudeReasoning = claudeItems.find((i) => i.type === "reasoning")!;
    assert.equal(claudeReasoning.encrypted_content, `gw:anthropic:${ANTHROPIC_SIG}`);

    const res = await responses(w, {
      model: M.responses, input: [
        { role: "user", content: "one" },
        claudeReasoning,
        { role: "assistant", content: "Claude answers." },
        { type: "reasoning", summary: [], encrypted_content: `gw:openai:${OPENAI_BLOB}` },
        { role: "assistant", content: "OpenAI answers." },
        { role: "user", content: "two" },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(dropped(res), ["reasoning.encrypted_content (from anthropic)"]);
    const input = resp.received.at(-1)!.body.input as Obj[];
    assert.deepEqual(input.filter((i) => i.type === "reasoning"), [{ type: "reasoning", summary: [], encrypted_content: OPENAI_BLOB }]);
    assert.ok(!JSON.stringify(input).includes(ANTHROPIC_SIG));
  });

  test("/v1/messages/count_tokens toward Anthropic counts the request without Gemini's signature", async () => {
    const res = await post(w, "/v1/messages/count_tokens", {
      model: M.anthropic, thinking,
      messages: [user("one"), { role: "assistant", content: [
        { type: "thinking", thinking: "Gemini thinks.", signature: `gw:gemini:${GEMINI_SIG}` }, { type: "text", text: "a" },
      ] }, user("two")],
    }, { "x-api-key": TOKEN, "anthropic-version": "2023-06-01" });
    assert.equal(res.status, 200, res.text);
    assert.ok(!JSON.stringify(w.sent("anthropic")).includes(GEMINI_SIG));
  });

  describe("every client protocol × every ordered pair of providers: the second sees the first's signature only when it issued it", () => {
    type Provider = "anthropic" | "gemini" | "openai";
    const providers: readonly Provider[] = ["anthropic", "gemini", "openai"];
    const modelOf: Record<Provider, string> = { anthropic: CLAUDE_RESPONSES, gemini: GEMINI_RESPONSES, openai: M.responses };
    const signatureOf: Record<Provider, string> = { anthropic: ANTHROPIC_SIG, gemini: GEMINI_SIG, openai: OPENAI_BLOB };
    const clients = ["messages", "generate-content", "responses"] as const;

    /** Scripts every provider to think (signed) and answer. */
    function scriptThinking(world: World): void {
      world.scripts.anthropic = () => ({ kind: "thinking", thinking: "Claude thinks.", text: "Claude answers.", signature: ANTHROPIC_SIG });
      world.scripts.gemini = () => ({ kind: "thinking", thought: "Gemini thinks.", text: "Gemini answers.", signature: GEMINI_SIG });
    }

    /** One turn of `client` on `model` after `history` (the client's own shape); its answer as the next history. */
    async function turn(client: (typeof clients)[number], model: string, history: Obj[]): Promise<{ res: RawResponse; history: Obj[] }> {
      if (client === "messages") {
        const msgs = [...history, user("next")];
        const res = await messages(w, { model, max_tokens: 4000, thinking, messages: msgs });
        return { res, history: res.status === 200 ? [...msgs, { role: "assistant", content: JSON.parse(res.text).content }] : msgs };
      }
      if (client === "generate-content") {
        const contents = [...history, { role: "user", parts: [{ text: "next" }] }];
        const res = await generate(w, model, { contents, generationConfig: { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } } });
        return { res, history: res.status === 200 ? [...contents, JSON.parse(res.text).candidates[0].content] : contents };
      }
      const input = [...history, { role: "user", content: "next" }];
      const res = await responses(w, { model, reasoning: { effort: "low" }, include: ["reasoning.encrypted_content"], store: false, input });
      const output = res.status === 200 ? (JSON.parse(res.text).output as Obj[]) : [];
      const carried = output.map((i) => i.type === "message" ? { role: "assistant", content: i.content[0].text }
        : { type: "reasoning", summary: i.summary, encrypted_content: i.encrypted_content });
      return { res, history: [...input, ...carried] };
    }

    /** What the provider's fake received last, as text. */
    const receivedBy = (p: Provider): string => JSON.stringify(p === "openai" ? resp.received.at(-1)!.body : w.sent(p));

    for (const client of clients) {
      test(`${client} client`, async () => {
        for (const first of providers) {
          for (const second of providers) {
            w.reset();
            scriptThinking(w);
            const one = await turn(client, modelOf[first], []);
            assert.equal(one.res.status, 200, `${first}: ${one.res.text}`);
            const two = await turn(client, modelOf[second], one.history);
            assert.equal(two.res.status, 200, `${first} → ${second}: ${two.res.text}`);
            const sent = receivedBy(second);
            assert.ok(!sent.includes("gw:"), `${first} → ${second}: a seal reached the provider`);
            assert.equal(sent.includes(signatureOf[first]), first === second,
              `${first} → ${second}: ${first}'s signature ${first === second ? "missing" : "leaked"}`);
          }
        }
      });
    }
  });
});
