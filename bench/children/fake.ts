// Child process: the fake OpenAI upstream from test/helpers, scripted for the benchmark.
// Non-stream requests get a short completion; stream requests get a 20-chunk SSE answer
// written one chunk per BENCH_CHUNK_DELAY_MS (default 1 ms), so "first chunk" is a real
// moment and not the whole answer arriving at once.

import { startFakeOpenAI } from "../../test/helpers/fake-openai.js";
import { serveChild } from "../lib/ipc.js";
import { streamChunks } from "../lib/shared.js";

const chunkDelayMs = Number(process.env.BENCH_CHUNK_DELAY_MS ?? 1);
const streamText = "The quick brown fox jumps over the lazy dog, again and again. ".repeat(2).slice(0, streamChunks * 6);

await serveChild(async () => {
  const fake = await startFakeOpenAI({
    name: "bench",
    script: (r) => r.body.stream === true
      ? { kind: "ok", text: streamText, chunks: streamChunks, chunkDelayMs }
      : { kind: "ok", text: "Hello! How can I help you today?" },
  });
  // The helper keeps every request for test assertions; a benchmark sends hundreds of
  // thousands, so drop them regularly to keep memory (and GC) flat.
  const trim = setInterval(() => { fake.received.length = 0; }, 250);
  return {
    url: fake.url,
    close: async () => { clearInterval(trim); await fake.close(); },
  };
});
