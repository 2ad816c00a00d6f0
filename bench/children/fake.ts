// Child process: a fake upstream from test/helpers, scripted for the benchmark. By default
// the fake OpenAI upstream; with BENCH_FAKE_PROTOCOL=anthropic the fake Anthropic Messages
// upstream. Non-stream requests get a short answer; stream requests get the same 20-chunk
// text (as chat-completions chunks, or as Anthropic content_block_delta events) written one
// SSE event per BENCH_CHUNK_DELAY_MS (default 1 ms), so "first chunk" is a real moment and
// not the whole answer arriving at once.

import { startFakeAnthropic } from "../../test/helpers/fake-anthropic.js";
import { startFakeOpenAI } from "../../test/helpers/fake-openai.js";
import { serveChild } from "../lib/ipc.js";
import { streamChunks, streamText } from "../lib/shared.js";

const chunkDelayMs = Number(process.env.BENCH_CHUNK_DELAY_MS ?? 1);
const protocol = process.env.BENCH_FAKE_PROTOCOL === "anthropic" ? "anthropic" : "openai";

await serveChild(async () => {
  const script = (r: { body: Record<string, unknown> }) => r.body.stream === true
    ? { kind: "ok" as const, text: streamText, chunks: streamChunks, chunkDelayMs }
    : { kind: "ok" as const, text: "Hello! How can I help you today?" };
  const fake = protocol === "anthropic"
    ? await startFakeAnthropic({ name: "bench", script })
    : await startFakeOpenAI({ name: "bench", script });
  // The helper keeps every request for test assertions; a benchmark sends hundreds of
  // thousands, so drop them regularly to keep memory (and GC) flat.
  const trim = setInterval(() => { fake.received.length = 0; }, 250);
  return {
    url: fake.url,
    close: async () => { clearInterval(trim); await fake.close(); },
  };
});
