// Builds usage-log entries for store and CLI tests: sensible defaults, override what a
// test cares about.

import type { UsageEntry } from "../../src/state/store.js";

/** An entry with defaults (alice's t1 token, gpt-4o-mini, 200, 1000 nano). */
export function entry(over: Partial<UsageEntry> & { requestId: string }): UsageEntry {
  return {
    time: 1_700_000_000_000,
    token: "t1",
    user: "alice",
    group: "default",
    model: "gpt-4o-mini",
    inboundProtocol: "chat-completions",
    usage: { input: 10, cacheRead: 2, cacheWrite: 1, output: 5, reasoning: 3 },
    costNano: 1000n,
    status: 200,
    durationMs: 12.5,
    estimated: false,
    ...over,
  };
}
