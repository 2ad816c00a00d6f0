// Hardening items 4 and 5 as SDK users meet them: with the official openai, @anthropic-ai/sdk
// and @google/genai clients (no retries), a stream whose upstream goes silent, ends early or
// breaks makes the stream iteration throw an API error (never hang, never finish as if whole),
// and a broken whole answer throws an API error with status 502. Pass-through and converted
// routes; the raw-HTTP matrix is in upstream-faults-json and upstream-faults-stream.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import type { Fault } from "../helpers/fake-faulty.js";
import { IDLE_MS, modelFor, startFaultWorld, type FaultWorld } from "../helpers/fault-world.js";
import { eventually } from "../helpers/gateway.js";
import { TOKEN } from "./support.js";

/** Longest any SDK call here may take: past it the test fails as a hang. */
const DEADLINE_MS = IDLE_MS + 4000;

/** A prompt naming `fault`, and the tag that finds its upstream exchange. */
function prompt(fault: Fault): { text: string; tag: string } {
  const tag = randomUUID().replaceAll("-", "");
  return { text: `Say hello. fault:${fault}#${tag}`, tag };
}

/** Runs `work`, failing as a hang when it outlasts the deadline. */
async function bounded<T>(work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hung: no end within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  try {
    return await Promise.race([work(), hang]);
  } finally {
    clearTimeout(timer);
  }
}

describe("the official SDKs see broken upstream answers as errors", { concurrency: true }, () => {
  let w: FaultWorld;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let genai: GoogleGenAI;

  before(async () => {
    w = await startFaultWorld();
    openai = new OpenAI({ apiKey: TOKEN, baseURL: `${w.gw.url}/v1`, maxRetries: 0, timeout: DEADLINE_MS });
    anthropic = new Anthropic({ apiKey: TOKEN, baseURL: w.gw.url, maxRetries: 0, timeout: DEADLINE_MS });
    genai = new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: w.gw.url, timeout: DEADLINE_MS, retryOptions: { attempts: 1 } } });
  });
  after(async () => { await w?.close(); });

  /** Waits until the upstream side of a tagged request has ended, and says how. */
  async function upstreamEnd(tag: string): Promise<string> {
    await eventually(() => (w.faulty.find(tag)?.end ?? "open") !== "open", 3000, `the upstream connection of ${tag} to end`);
    return w.faulty.find(tag)!.end;
  }

  describe("openai", () => {
    async function chatStream(model: string, fault: Fault): Promise<{ text: string; error: unknown; tag: string }> {
      const p = prompt(fault);
      let text = "";
      const error = await bounded(async () => {
        const stream = await openai.chat.completions.create({ model, messages: [{ role: "user", content: p.text }], stream: true });
        try {
          for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
        } catch (err) {
          return err;
        }
        return undefined;
      });
      return { text, error, tag: p.tag };
    }

    test("control: a whole stream iterates to its end", async () => {
      const r = await chatStream(modelFor("chat", "openai", false), "ok");
      assert.equal(r.error, undefined);
      assert.equal(r.text, "Hello world!");
    });

    test("pass-through stream that goes idle: the iteration throws APIError upstream_timeout", async () => {
      const r = await chatStream(modelFor("chat", "openai", false), "idle");
      assert.ok(r.error instanceof OpenAI.APIError, String(r.error));
      assert.equal(r.error.code, "upstream_timeout");
      assert.equal(r.text, "Hello world");
      assert.equal(await upstreamEnd(r.tag), "closed-by-gateway");
    });

    test("converted (gemini) stream that ends without its finishReason: the iteration throws", async () => {
      const r = await chatStream(modelFor("chat", "gemini", false), "unterminated");
      assert.ok(r.error instanceof OpenAI.APIError, String(r.error));
      assert.equal(r.error.code, "upstream_error");
      assert.equal(r.text, "Hello world");
    });

    test("converted (anthropic) stream whose connection is cut: the iteration throws", async () => {
      const r = await chatStream(modelFor("chat", "anthropic", false), "cut");
      assert.ok(r.error instanceof OpenAI.APIError, String(r.error));
      assert.equal(r.error.code, "upstream_error");
    });

    test("broken whole answers throw APIError 502 upstream_error (pass-through and converted)", async () => {
      for (const [channel, fault] of [["openai", "html-200"], ["anthropic", "truncated-json"], ["gemini", "cut-body"]] as const) {
        await assert.rejects(
          bounded(() => openai.chat.completions.create({
            model: modelFor("chat", channel, false), messages: [{ role: "user", content: prompt(fault).text }],
          })),
          (err: unknown) => err instanceof OpenAI.InternalServerError && err.status === 502 && err.code === "upstream_error",
          `${channel} ${fault}`,
        );
      }
    });

    test("responses stream that is cut: the last event is an error event, response.completed never comes", async () => {
      const p = prompt("cut");
      const events = await bounded(async () => {
        const stream = await openai.responses.create({ model: modelFor("responses", "openai", false), input: p.text, stream: true });
        const all: OpenAI.Responses.ResponseStreamEvent[] = [];
        for await (const e of stream) all.push(e);
        return all;
      });
      const last = events.at(-1)!;
      assert.equal(last.type, "error");
      assert.equal((last as OpenAI.Responses.ResponseErrorEvent).code, "upstream_error");
      assert.equal((last as OpenAI.Responses.ResponseErrorEvent).sequence_number, events.length - 1);
      assert.ok(!events.some((e) => e.type === "response.completed"));
    });

    test("responses stream that goes idle: the stream helper's finalResponse() rejects with the error event", async () => {
      const stream = openai.responses.stream({ model: modelFor("responses", "openai", false), input: prompt("idle").text });
      // The helper rejects with the stream's `error` event itself, as it does for the API's own.
      await assert.rejects(bounded(() => stream.finalResponse()),
        (err: unknown) => (err as { type?: string; code?: string }).type === "error" && (err as { code?: string }).code === "upstream_timeout");
    });

    test("responses whole answer cut short: APIError 502", async () => {
      await assert.rejects(
        bounded(() => openai.responses.create({ model: modelFor("responses", "openai", false), input: prompt("cut-body").text })),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 502,
      );
    });
  });

  describe("@anthropic-ai/sdk", () => {
    const params = (model: string, fault: Fault) => ({
      model, max_tokens: 1000, messages: [{ role: "user" as const, content: prompt(fault).text }],
    });

    test("control: a whole stream gives its final message", async () => {
      const message = await bounded(() => anthropic.messages.stream(params(modelFor("messages", "anthropic", false), "ok")).finalMessage());
      assert.equal(message.content[0].type === "text" && message.content[0].text, "Hello world!");
      assert.equal(message.stop_reason, "end_turn");
    });

    test("pass-through stream that goes idle: the iteration throws APIError (timeout_error, upstream_timeout)", async () => {
      const p = params(modelFor("messages", "anthropic", false), "idle");
      let text = "";
      const error = await bounded(async () => {
        const stream = await anthropic.messages.create({ ...p, stream: true });
        try {
          for await (const e of stream) if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
        } catch (err) {
          return err;
        }
        return undefined;
      });
      assert.ok(error instanceof Anthropic.APIError, String(error));
      assert.equal(error.type, "timeout_error");
      assert.equal((error.error as { error?: { code?: string } }).error?.code, "upstream_timeout");
      assert.equal(text, "Hello world");
    });

    test("converted (openai) stream without [DONE]: finalMessage() rejects with an APIError", async () => {
      const stream = anthropic.messages.stream(params(modelFor("messages", "openai", false), "unterminated-late"));
      await assert.rejects(bounded(() => stream.finalMessage()), (err: unknown) => err instanceof Anthropic.APIError);
    });

    test("converted (gemini) stream with an event that does not decode: the iteration throws", async () => {
      const stream = anthropic.messages.stream(params(modelFor("messages", "gemini", false), "undecodable"));
      const drain = async () => { for await (const _ of stream) { /* events until the error */ } };
      await assert.rejects(bounded(drain), (err: unknown) => err instanceof Anthropic.APIError);
    });

    test("broken whole answers throw APIError 502 (pass-through and converted)", async () => {
      for (const [channel, fault] of [["anthropic", "truncated-json"], ["gemini", "cut-body"], ["openai", "html-200"]] as const) {
        await assert.rejects(
          bounded(() => anthropic.messages.create(params(modelFor("messages", channel, false), fault))),
          (err: unknown) => err instanceof Anthropic.InternalServerError && err.status === 502 && err.type === "api_error",
          `${channel} ${fault}`,
        );
      }
    });
  });

  describe("@google/genai", () => {
    async function streamOf(model: string, fault: Fault): Promise<{ text: string; error: unknown }> {
      let text = "";
      const error = await bounded(async () => {
        try {
          const stream = await genai.models.generateContentStream({ model, contents: prompt(fault).text });
          for await (const chunk of stream) text += chunk.text ?? "";
        } catch (err) {
          return err;
        }
        return undefined;
      });
      return { text, error };
    }

    test("control: a whole stream iterates to its end", async () => {
      const r = await streamOf(modelFor("generate", "gemini", false), "ok");
      assert.equal(r.error, undefined, String(r.error));
      assert.equal(r.text, "Hello world!");
    });

    test("pass-through stream without a finishReason: the iteration throws ApiError 502", async () => {
      const r = await streamOf(modelFor("generate", "gemini", false), "unterminated");
      assert.ok(r.error instanceof ApiError, String(r.error));
      assert.equal(r.error.status, 502);
      assert.equal(r.text, "Hello world");
    });

    test("converted (openai) stream that goes idle: the iteration throws ApiError 504", async () => {
      const r = await streamOf(modelFor("generate", "openai", false), "idle");
      assert.ok(r.error instanceof ApiError, String(r.error));
      assert.equal(r.error.status, 504);
      assert.equal(r.text, "Hello world");
    });

    test("converted (anthropic) stream whose connection is cut: the iteration throws", async () => {
      const r = await streamOf(modelFor("generate", "anthropic", false), "cut");
      assert.ok(r.error instanceof ApiError, String(r.error));
      assert.equal(r.error.status, 502);
    });

    test("broken whole answers throw ApiError 502 (pass-through and converted)", async () => {
      for (const [channel, fault] of [["gemini", "truncated-json"], ["anthropic", "html-200"], ["openai", "cut-body"]] as const) {
        await assert.rejects(
          bounded(() => genai.models.generateContent({ model: modelFor("generate", channel, false), contents: prompt(fault).text })),
          (err: unknown) => err instanceof ApiError && err.status === 502,
          `${channel} ${fault}`,
        );
      }
    });
  });
});
