// The soak's fake upstreams: test/helpers' OpenAI (chat + responses), Anthropic and Gemini
// fakes, each behind a small front on 127.0.0.1 that holds every request for a random few
// milliseconds before passing it on, so requests overlap; streams also pace their events.

import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { startFakeAnthropic, type Script as AnthropicScript } from "../../test/helpers/fake-anthropic.js";
import { startFakeGemini, type Script as GeminiScript } from "../../test/helpers/fake-gemini.js";
import { startFakeOpenAI, type Script as OpenAIScript } from "../../test/helpers/fake-openai.js";
import { startFakeResponses } from "../../test/helpers/fake-responses.js";
import type { UpstreamUrls } from "./soak-world.js";

export interface UpstreamOptions {
  /** Most milliseconds a request is held before the fake answers. */
  readonly maxDelayMs: number;
  /** Most milliseconds between two stream events. */
  readonly maxChunkDelayMs: number;
  /** Share of Anthropic and Gemini answers that report cache tokens. */
  readonly cacheShare: number;
}

export interface SoakUpstreams {
  readonly urls: UpstreamUrls;
  /** Requests the fronts passed to a fake, and ones the gateway gave up on before the answer ended. */
  readonly counts: { forwarded: number; cutByGateway: number };
  close(): Promise<void>;
}

const randomInt = (max: number) => Math.floor(Math.random() * (max + 1));

export async function startSoakUpstreams(o: UpstreamOptions): Promise<SoakUpstreams> {
  const paced = () => ({ chunks: 6, chunkDelayMs: 1 + randomInt(o.maxChunkDelayMs) });
  const openai = await startFakeOpenAI({ name: "soak-openai", script: (): OpenAIScript => ({ kind: "ok", ...paced() }) });
  const responses = await startFakeResponses({ script: () => ({ kind: "ok", chunks: 6 }) });
  const anthropic = await startFakeAnthropic({
    name: "soak-anthropic",
    script: (): AnthropicScript => (Math.random() < o.cacheShare ? { kind: "cache" } : { kind: "ok", ...paced() }),
  });
  const gemini = await startFakeGemini({
    name: "soak-gemini",
    script: (): GeminiScript => (Math.random() < o.cacheShare ? { kind: "cache" } : { kind: "ok", ...paced() }),
  });
  const fakes = [openai, responses, anthropic, gemini];
  // The fakes keep every request for test assertions; a soak sends far too many.
  const trim = setInterval(() => { for (const f of fakes) f.received.length = 0; }, 1000);

  const counts = { forwarded: 0, cutByGateway: 0 };
  const fronts = [
    await startDelayFront((path) => (path.startsWith("/v1/responses") ? responses.url : openai.url), o.maxDelayMs, counts),
    await startDelayFront(() => anthropic.url, o.maxDelayMs, counts),
    await startDelayFront(() => gemini.url, o.maxDelayMs, counts),
  ];
  return {
    urls: { openai: fronts[0].url, anthropic: fronts[1].url, gemini: fronts[2].url },
    counts,
    close: async () => {
      clearInterval(trim);
      await Promise.all(fronts.map((f) => f.close()));
      await Promise.all(fakes.map((f) => f.close()));
    },
  };
}

interface Front { readonly url: string; close(): Promise<void> }

/** An HTTP front that waits 0..maxDelayMs, then relays the request to `target(path)` and
 * its answer back as it arrives; a request the gateway abandons is abandoned upstream too. */
async function startDelayFront(
  target: (path: string) => string, maxDelayMs: number, counts: SoakUpstreams["counts"],
): Promise<Front> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const timer = setTimeout(() => relay(Buffer.concat(chunks)), randomInt(maxDelayMs));
      res.on("close", () => {
        clearTimeout(timer);
        if (!res.writableFinished) counts.cutByGateway++;
      });
    });
    const relay = (body: Buffer, retried = false) => {
      if (res.destroyed) return;
      if (!retried) counts.forwarded++;
      const up = http.request(target(req.url ?? "/") + (req.url ?? "/"), { method: req.method, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on("error", () => res.destroy());
      });
      up.on("error", (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the fake closed just as it was reused: the front's own race
        // (node's documented one), not the gateway's; the request is sent again once.
        if (!retried && up.reusedSocket && err.code === "ECONNRESET" && !res.headersSent) return relay(body, true);
        if (res.headersSent) res.destroy();
        else res.writeHead(502).end();
      });
      res.on("close", () => { if (!res.writableFinished) up.destroy(); });
      up.end(body);
    };
  });
  server.keepAliveTimeout = 65_000;
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      agent.destroy();
      server.close(() => resolve());
    }),
  };
}
