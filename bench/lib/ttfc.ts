// Time to first chunk of a streamed chat completion: from just before the request is
// written to the first body bytes (the first SSE `data:` event) reaching the client.
// Each target gets its own keep-alive pool, warmed before measuring.

import http from "node:http";
import { benchToken, model, streamEvents } from "./shared.js";

const body = JSON.stringify({
  model, stream: true, messages: [{ role: "user", content: "Tell me about foxes." }],
});

export interface StreamClient {
  readonly url: URL;
  readonly agent: http.Agent;
}

export function streamClient(base: string, concurrency: number): StreamClient {
  return {
    url: new URL("/v1/chat/completions", base),
    agent: new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency }),
  };
}

/** One streamed request: resolves with its TTFC in ms, after checking the whole stream. */
function once(c: StreamClient): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first = Number.NaN;
    const req = http.request(c.url, {
      method: "POST",
      agent: c.agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: `Bearer ${benchToken}` },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (Number.isNaN(first) && chunk.includes("data:")) first = performance.now() - started;
        text += chunk;
      });
      res.on("end", () => {
        const events = text.split("\n\n").filter((e) => e.startsWith("data:")).length;
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}: ${text.slice(0, 200)}`));
        if (events !== streamEvents || !text.includes("data: [DONE]")) {
          return reject(new Error(`stream had ${events} events, expected ${streamEvents}`));
        }
        resolve(first);
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Runs `count` requests with `concurrency` in flight; returns the TTFC of each. */
export async function ttfcBatch(c: StreamClient, count: number, concurrency: number): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      out.push(await once(c));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return out;
}
