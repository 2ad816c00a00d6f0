// Child process: one upstream that streams the same Claude answer two ways, for
// bench/kinds.ts: as Anthropic SSE on /v1/messages (an `anthropic` channel) and as
// Bedrock's event-stream frames on /model/{id}/invoke-with-response-stream (a `bedrock`
// channel); non-stream requests get the same short message as JSON on both. Each stream is
// the same events (message_start, a text block of `streamChunks` deltas, message_delta
// with usage, message_stop), one written every BENCH_CHUNK_DELAY_MS (default 1 ms), so the
// two lanes differ only in framing. Signatures are not checked (the gateway's cost of
// making them is what is measured; tests check them).

import http from "node:http";
import { chunkFrame } from "../../test/helpers/fake-bedrock.js";
import { serveChild } from "../lib/ipc.js";
import { streamChunks, streamText } from "../lib/shared.js";

const chunkDelayMs = Number(process.env.BENCH_CHUNK_DELAY_MS ?? 1);
const usage = { input_tokens: 25, output_tokens: streamChunks };

function events(model: string): Record<string, unknown>[] {
  const piece = streamText.length / streamChunks;
  return [
    { type: "message_start", message: { id: "msg_bench", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ...Array.from({ length: streamChunks }, (_, i) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: streamText.slice(i * piece, (i + 1) * piece) } })),
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
    { type: "message_stop" },
  ];
}

const whole = (model: string) => JSON.stringify({
  id: "msg_bench", type: "message", role: "assistant", model, content: [{ type: "text", text: "Hello! How can I help you today?" }],
  stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 25, output_tokens: 9 },
});

/** Writes `parts` one per delay, then ends. */
function paced(res: http.ServerResponse, parts: readonly (string | Buffer)[]): void {
  let i = 0;
  const next = () => {
    if (i === parts.length) return void res.end();
    res.write(parts[i++]);
    setTimeout(next, chunkDelayMs);
  };
  next();
}

await serveChild(async () => {
  // Frames and SSE text are built once: the fake's own CPU is not what is measured.
  const sse = events("claude-bench").map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
  const frames = events("claude-bench").map((e) => chunkFrame(e));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { stream?: boolean };
      const path = req.url ?? "";
      if (path.startsWith("/model/")) {
        if (path.endsWith("/invoke-with-response-stream")) {
          res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "bench" });
          return paced(res, frames);
        }
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(whole("claude-bench"));
      }
      if (body.stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        return paced(res, sse);
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(whole("claude-bench"));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
});
