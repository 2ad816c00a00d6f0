// The Vercel AI SDK as a client of a base URL: its four provider flavours (OpenAI responses,
// OpenAI chat, Anthropic, Google) and a multi-step tool loop run with generateText or
// streamText. The fixture recorder points it at a fake provider; client-fixtures.test.ts
// points it at the gateway.

import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool, type LanguageModel } from "ai";

/** The AI SDK provider flavours, by the API each calls. */
export type AiSdkFlavour = "openai-responses" | "openai-chat" | "anthropic" | "google";
export const AI_SDK_FLAVOURS: readonly AiSdkFlavour[] = ["openai-responses", "openai-chat", "anthropic", "google"];

/** A model of `flavour` at `baseUrl` (the server root, no /v1), with `key`. */
export function aiSdkModel(flavour: AiSdkFlavour, baseUrl: string, key: string, model: string): LanguageModel {
  switch (flavour) {
    case "openai-responses": return createOpenAI({ baseURL: `${baseUrl}/v1`, apiKey: key })(model);
    case "openai-chat": return createOpenAI({ baseURL: `${baseUrl}/v1`, apiKey: key }).chat(model);
    case "anthropic": return createAnthropic({ baseURL: `${baseUrl}/v1`, apiKey: key })(model);
    case "google": return createGoogleGenerativeAI({ baseURL: `${baseUrl}/v1beta`, apiKey: key })(model);
  }
}

export interface ToolLoopResult {
  readonly text: string;
  /** Tool calls made over all steps, with the input the SDK parsed. */
  readonly toolCalls: readonly { readonly toolName: string; readonly input: unknown }[];
  readonly steps: number;
  readonly finishReason: string;
}

/**
 * Asks `model` to read a file with the `read_file` tool and answer; runs up to 3 steps.
 * `readFile` is the tool's body (what the "file" holds).
 */
export async function runToolLoop(
  model: LanguageModel, opts: { stream: boolean; readFile: (path: string) => string | Promise<string> },
): Promise<ToolLoopResult> {
  const tools = {
    read_file: tool({
      description: "Reads a text file and returns its content.",
      inputSchema: jsonSchema<{ path: string }>({
        type: "object", properties: { path: { type: "string", description: "Path of the file" } }, required: ["path"], additionalProperties: false,
      }),
      execute: async ({ path }) => opts.readFile(path),
    }),
  };
  const common = {
    model, tools, stopWhen: stepCountIs(3), maxRetries: 0,
    system: "You are a helpful assistant. Use tools when asked about files.",
    prompt: "Read the file notes.txt and tell me what it says.",
  };
  if (!opts.stream) {
    const r = await generateText(common);
    return {
      text: r.text, steps: r.steps.length, finishReason: r.finishReason,
      toolCalls: r.steps.flatMap((s) => s.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input }))),
    };
  }
  let streamError: unknown;
  const r = streamText({ ...common, onError: ({ error }) => { streamError = error; } });
  const text = await r.text;
  const steps = await r.steps;
  if (streamError !== undefined) throw streamError;
  return {
    text, steps: steps.length, finishReason: await r.finishReason,
    toolCalls: steps.flatMap((s) => s.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input }))),
  };
}
