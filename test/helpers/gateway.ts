// Starts the real gateway on 127.0.0.1:0 from inline YAML, for integration tests.

import { compileSource } from "../../src/config/index.js";
import type { UsageSink } from "../../src/billing/usage-sink.js";
import type { Store, UsageEntry } from "../../src/state/store.js";
import type { JobWatchTiming } from "../../src/routing/job-watch.js";
import { clearAffinity } from "../../src/routing/affinity.js";
import { resetHealth } from "../../src/routing/health.js";
import { RuntimeBox } from "../../src/runtime/box.js";
import { startGateway, type GatewayServer } from "../../src/server/server.js";

export interface TestGateway extends GatewayServer {
  /** Compiles new YAML and swaps it in, as a reload would. */
  swapConfig(yaml: string): void;
  close(): Promise<void>;
}

/** Compiles `yaml` (listen forced to port 0) and starts a gateway on it; `store` defaults
 * to a fresh in-memory one. */
export async function startTestGateway(
  yaml: string, opts: { usage?: UsageSink; store?: Store; jobWatch?: JobWatchTiming } = {},
): Promise<TestGateway> {
  // Routing state outlives reloads by design; a test gateway starts from none.
  resetHealth();
  clearAffinity();
  let generation = 1;
  const compile = (text: string) => compileSource(text, { path: "test.yaml", env: {}, generation: generation++ }).runtime;
  const box = new RuntimeBox(compile(yaml));
  const gw = await startGateway({ box, usage: opts.usage, store: opts.store, jobWatch: opts.jobWatch });
  return Object.assign(gw, {
    swapConfig: (text: string) => void box.swap(compile(text)),
    close: async () => void (await gw.drain(1000)),
  });
}

/** Polls `check` until it returns true or `timeoutMs` passes (no fixed sleeps in tests). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** The usage-log entry of a request, once the store has it. */
export async function entryOf(store: Store, requestId: string): Promise<UsageEntry> {
  let found: UsageEntry | undefined;
  await eventually(() => (found = store.logs({ requestId })[0]) !== undefined, 3000, `usage entry ${requestId}`);
  return found!;
}
