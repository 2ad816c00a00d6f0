// `npm run bench:billing`: what billing and rate limits cost per request on the hot path,
// measured in-process on the real code with the production store (SQLite, WAL, group
// commit): two rate-limit windows, the pre-deduction, the exact cost, and the settlement
// with its usage-log entry. Compare the figure with the gateway's CPU per request printed
// by `npm run bench` (the budget: at most 10% of it).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { costOf } from "../src/billing/cost.js";
import { reserveUsage } from "../src/billing/estimate.js";
import type { Token, User } from "../src/runtime/types.js";
import { newRequestId } from "../src/pipeline/request-id.js";
import { openState } from "../src/state/open.js";

const requests = Number(process.env.BENCH_BILLING_REQUESTS ?? 200_000);
const dir = mkdtempSync(join(tmpdir(), "gateway-billing-"));
const state = await openState({ store: "sqlite:billing.db" }, { baseDir: dir });
const { accounts, usageLog, limiter } = state;
const user: User = { name: "bench", creditNano: 10n ** 15n, groups: new Set(["default"]), active: true };
const token: Token = { name: "bench", keyHash: "0".repeat(64), user: "bench", group: "default", active: true };
const price = { inputPer1M: 150_000_000n, outputPer1M: 600_000_000n, cacheReadRatioPpm: 500_000n };
const multiplier = 700_000n;
const windows = { rate: { max: 1e9, perMs: 60_000 }, total: { max: 1e9, perMs: 300_000 } };
const usage = { input: 10, cacheRead: 2, cacheWrite: 0, output: 5, reasoning: 1 };

/** One request's billing work, as the pipeline does it. */
async function billOne(): Promise<void> {
  const now = Date.now();
  await limiter.take("bench\0total", windows.total, now);
  await limiter.take("bench\0rate", windows.rate, now);
  const requestId = newRequestId();
  const reservation = await accounts.reserve(requestId, token, user, costOf(reserveUsage(180, 4096), price, multiplier));
  const costNano = costOf(usage, price, multiplier);
  const settled = accounts.settle(reservation, { requestId, token: "bench", user: "bench", costNano });
  await Promise.all([settled, usageLog.append({
    requestId, time: now, token: "bench", user: "bench", group: "default", model: "gpt-4o-mini",
    upstreamModel: "gpt-4o-mini", channel: "fake", inboundProtocol: "chat-completions", upstreamProtocol: "openai",
    usage, costNano, status: 200, durationMs: 4.2, ttfbMs: 4.1, estimated: false,
  })]);
}

// Batches with a yield between them, so the group commit runs as it does under load.
async function run(n: number): Promise<number> {
  const batch = 50;
  const start = process.cpuUsage();
  for (let done = 0; done < n; done += batch) {
    const billed: Promise<void>[] = [];
    for (let i = 0; i < batch; i++) billed.push(billOne());
    await Promise.all(billed);
    await new Promise((r) => setImmediate(r));
  }
  await usageLog.flush();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

await run(Math.min(20_000, requests)); // warm-up
const perRequest = await run(requests);
console.log(`billing + limits on the hot path: ${perRequest.toFixed(2)} µs CPU per request ` +
  `(${requests.toLocaleString("en")} requests; SQLite store, group commit)`);
await state.close();
rmSync(dir, { recursive: true, force: true });
