// Every answer converts whole (issue 11, item 5): an image model's inlineData reaches chat
// and messages clients in their own image forms, and thinking from each channel protocol
// reaches each client protocol in its form, streamed and not, with the usage-log entry's
// usage and cost the same whichever protocol the client spoke.

import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI, type GenerateContentResponse, type Part } from "@google/genai";
import { fakePngBase64 } from "../helpers/fake-gemini.js";
import { CANONICAL, M, openaiClient, startWorld, type ChannelName, type World } from "../helpers/protocol-world.js";
import { TOKEN } from "./support.js";

const THOUGHT = "Erst denken 🤔: 2 × 21 = \"42\"\nok";
const ANSWER = "Die Antwort ist 42 ✅";
const ANTHROPIC_SIGNATURE = "EqQBCkYIBRgCKkDanswersSig==";
const GEMINI_SIGNATURE = "CiQB0e2Kb-gemini-thought-signature==";
const DATA_URL = `data:image/png;base64,${fakePngBase64}`;

type Client = "chat" | "messages" | "generate-content";
const clients: readonly Client[] = ["chat", "messages", "generate-content"];

/** What a client reads of one answer: its reasoning, its text, the signature it got, its images. */
interface Seen {
  readonly thinking: string;
  readonly text: string;
  /** The thinking block's signature (messages), the thought's thoughtSignature (generate-content). */
  readonly signature?: string;
  readonly images: readonly string[];
}

interface Channel {
  readonly name: ChannelName;
  readonly model: string;
  /** The canonical usage of the channel's thinking answer. */
  readonly usage: object;
  /** The signature the channel's model gives its thinking ("" : none). */
  readonly signature: string;
}

const channels: readonly Channel[] = [
  { name: "openai", model: M.openai, usage: CANONICAL.openai, signature: "" },
  { name: "anthropic", model: M.anthropic, usage: CANONICAL.anthropic, signature: ANTHROPIC_SIGNATURE },
  { name: "gemini", model: M.gemini, usage: { input: 12, cacheRead: 0, cacheWrite: 0, output: 8, reasoning: 3 }, signature: GEMINI_SIGNATURE },
];

describe("answers convert whole: images and reasoning", () => {
  let w: World;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let genai: GoogleGenAI;

  before(async () => {
    w = await startWorld();
    openai = openaiClient(w);
    anthropic = new Anthropic({ apiKey: TOKEN, baseURL: w.gw.url, maxRetries: 0 });
    genai = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url } });
  });
  after(async () => { await w?.close(); });
  beforeEach(() => w.reset());

  /** Asks `model` through `client` (streamed or not) and reads the answer as that client would. */
  async function ask(client: Client, model: string, stream: boolean): Promise<Seen> {
    const content = "what is 2 × 21?";
    if (client === "chat") {
      if (!stream) {
        const out = await openai.chat.completions.create({ model, messages: [{ role: "user", content }] });
        const msg = out.choices[0].message as OpenAI.ChatCompletionMessage & WireExtras;
        return { thinking: msg.reasoning_content ?? "", text: msg.content ?? "", images: imageUrls(msg.images) };
      }
      const s = await openai.chat.completions.create({ model, messages: [{ role: "user", content }], stream: true, stream_options: { include_usage: true } });
      let thinking = "", text = "";
      const images: string[] = [];
      for await (const chunk of s) {
        const d = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & WireExtras) | undefined;
        thinking += d?.reasoning_content ?? "";
        text += d?.content ?? "";
        images.push(...imageUrls(d?.images));
      }
      return { thinking, text, images };
    }
    if (client === "messages") {
      const params = { model, max_tokens: 256, messages: [{ role: "user" as const, content }] };
      const msg = stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
      const thinking = msg.content.filter((b) => b.type === "thinking");
      return {
        thinking: thinking.map((b) => b.thinking).join(""),
        text: msg.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
        signature: thinking.length > 0 ? thinking.map((b) => b.signature).join("") : undefined,
        // The SDK's answer types have no image block (the API never answers with one); the gateway's answers do.
        images: (msg.content as unknown as (Anthropic.ContentBlock | Anthropic.ImageBlockParam)[])
          .flatMap((b) => (b.type === "image" && b.source.type === "base64" ? [`data:${b.source.media_type};base64,${b.source.data}`] : [])),
      };
    }
    const responses: GenerateContentResponse[] = [];
    if (stream) for await (const r of await genai.models.generateContentStream({ model, contents: content })) responses.push(r);
    else responses.push(await genai.models.generateContent({ model, contents: content }));
    const parts: Part[] = responses.flatMap((r) => r.candidates?.[0]?.content?.parts ?? []);
    const signatures = parts.filter((p) => p.thoughtSignature).map((p) => p.thoughtSignature);
    return {
      thinking: parts.filter((p) => p.thought).map((p) => p.text ?? "").join(""),
      text: parts.filter((p) => !p.thought).map((p) => p.text ?? "").join(""),
      signature: signatures.length > 0 ? signatures.join("") : undefined,
      images: parts.flatMap((p) => (p.inlineData ? [`data:${p.inlineData.mimeType};base64,${p.inlineData.data}`] : [])),
    };
  }

  /** Runs `fn` and returns the usage-log entry of the request it made (usage and cost). */
  async function logged(fn: () => Promise<Seen>): Promise<{ seen: Seen; usage: unknown; costNano: bigint; estimated: boolean }> {
    const mark = w.mark();
    const seen = await fn();
    const rec = await w.record(mark);
    const entry = await w.entry(rec.id);
    return { seen, usage: entry.usage, costNano: entry.costNano, estimated: entry.estimated };
  }

  describe("an image model's inlineData", () => {
    for (const stream of [false, true]) {
      test(`reaches chat, messages and generate-content clients whole${stream ? " (streamed)" : ""}, billed alike`, async () => {
        w.scripts.gemini = () => ({ kind: "image", text: "Here it is:" });
        const costs = new Set<bigint>();
        for (const client of clients) {
          const got = await logged(() => ask(client, M.geminiImage, stream));
          assert.equal(got.seen.text, "Here it is:", `${client}: the text`);
          assert.deepEqual(got.seen.images, [DATA_URL], `${client}: the image, bytes intact`);
          assert.deepEqual(got.usage, CANONICAL.gemini, `${client}: usage`);
          assert.equal(got.estimated, false, `${client}: usage reported, not estimated`);
          costs.add(got.costNano);
        }
        assert.equal(costs.size, 1, `the same cost for every client: ${[...costs].join(", ")}`);
      });
    }

    test("a 1.5 MB image (one SSE event when streamed) arrives byte for byte at every client", async () => {
      const big = randomBytes(1_100_000).toString("base64");
      w.scripts.gemini = () => ({ kind: "image", data: big });
      for (const client of clients) {
        for (const stream of [false, true]) {
          const seen = await ask(client, M.geminiImage, stream);
          assert.equal(seen.images.length, 1, `${client}${stream ? " (streamed)" : ""}: one image`);
          assert.ok(seen.images[0] === `data:image/png;base64,${big}`, `${client}${stream ? " (streamed)" : ""}: the bytes intact`);
        }
      }
    });

    test("a chat client gets the image in message.images, content stays text only", async () => {
      w.scripts.gemini = () => ({ kind: "image", text: "Here it is:" });
      const out = await openai.chat.completions.create({ model: M.geminiImage, messages: [{ role: "user", content: "draw" }] });
      const msg = out.choices[0].message as OpenAI.ChatCompletionMessage & WireExtras;
      assert.equal(msg.content, "Here it is:");
      assert.deepEqual(msg.images, [{ type: "image_url", image_url: { url: DATA_URL } }]);
    });

    test("a messages client gets an image content block, in order after the text", async () => {
      w.scripts.gemini = () => ({ kind: "image", text: "Here it is:" });
      const out = await anthropic.messages.create({ model: M.geminiImage, max_tokens: 64, messages: [{ role: "user", content: "draw" }] });
      assert.deepEqual(out.content, [
        { type: "text", text: "Here it is:" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: fakePngBase64 } },
      ]);
      const streamed = await anthropic.messages.stream({ model: M.geminiImage, max_tokens: 64, messages: [{ role: "user", content: "draw" }] }).finalMessage();
      assert.deepEqual(streamed.content, out.content);
    });
  });

  describe("thinking from each channel reaches each client in its form", () => {
    for (const ch of channels) {
      for (const stream of [false, true]) {
        test(`${ch.name} channel${stream ? " (streamed)" : ""} → chat, messages, generate-content; usage and cost unchanged`, async () => {
          if (ch.name === "openai") w.scripts.openai = () => ({ kind: "reasoning", reasoning: THOUGHT, text: ANSWER });
          else if (ch.name === "anthropic") w.scripts.anthropic = () => ({ kind: "thinking", thinking: THOUGHT, text: ANSWER, signature: ANTHROPIC_SIGNATURE });
          else w.scripts.gemini = () => ({ kind: "thinking", thought: THOUGHT, text: ANSWER, signature: GEMINI_SIGNATURE });
          const costs = new Set<bigint>();
          for (const client of clients) {
            const got = await logged(() => ask(client, ch.model, stream));
            assert.equal(got.seen.thinking, THOUGHT, `${client}: the reasoning`);
            assert.equal(got.seen.text, ANSWER, `${client}: the answer text`);
            assert.deepEqual(got.seen.images, []);
            // chat-completions has no place for a signature; messages always has one ("" when
            // the model gave none); generate-content carries one only when there is one.
            // Converted, a signature is sealed with its issuer (src/protocols/reasoning.ts).
            const own = (client === "messages" && ch.name === "anthropic") || (client === "generate-content" && ch.name === "gemini");
            const signature = ch.signature === "" || own ? ch.signature : `gw:${ch.name}:${ch.signature}`;
            if (client === "messages") assert.equal(got.seen.signature, signature, "messages: the thinking block's signature");
            if (client === "generate-content") assert.equal(got.seen.signature, signature || undefined, "generate-content: the thoughtSignature");
            assert.deepEqual(got.usage, ch.usage, `${client}: usage`);
            assert.equal(got.estimated, false, `${client}: usage reported, not estimated`);
            costs.add(got.costNano);
          }
          assert.equal(costs.size, 1, `the same cost for every client: ${[...costs].join(", ")}`);
        });
      }
    }

    test("OpenRouter's `reasoning` field from a chat channel is thinking too", async () => {
      w.scripts.openai = () => ({ kind: "reasoning", reasoning: THOUGHT, text: ANSWER, field: "reasoning" });
      for (const stream of [false, true]) {
        const seen = await ask("messages", M.openai, stream);
        assert.equal(seen.thinking, THOUGHT);
        assert.equal(seen.text, ANSWER);
      }
    });
  });
});

/** The fields the gateway adds to chat-completions messages and deltas (not in the SDK's types). */
interface WireExtras {
  reasoning_content?: string;
  images?: { type: string; image_url: { url: string } }[];
}

function imageUrls(images: WireExtras["images"]): string[] {
  return (images ?? []).map((i) => i.image_url.url);
}
