// What a gateway server reports of its channels' keys to /metrics: each configured key's
// rotation state (from the keyed store, read once per scrape however many gauges ask) and
// its recent attempts (this process's).

import type { KeyReportSource, KeyStateReport } from "../observability/metrics.js";
import type { Runtime } from "../runtime/types.js";
import type { RoutingState } from "./routing-state.js";

/** How long one reading of the key states serves the gauges of a scrape. */
const READ_SERVES_MS = 1_000;

export function keyReportSource(routing: RoutingState, runtime: () => Runtime): KeyReportSource {
  let last: { at: number; states: Promise<readonly KeyStateReport[]> } | undefined;
  const read = async (): Promise<readonly KeyStateReport[]> => {
    const channels = [...runtime().channels.values()];
    const states = await Promise.all(channels.map((c) => routing.keyHealth.states(c)));
    return channels.flatMap((channel, i) => states[i].map((s): KeyStateReport => ({
      channel: channel.name, key: s.fingerprint, reason: s.manual ? "manual" : s.out?.reason ?? "none", until: s.out?.until,
      ...(s.manual && { manual: s.manual }),
    })));
  };
  return {
    states() {
      const now = Date.now();
      // Unreadable (the store is down): no key series this scrape, rather than no /metrics.
      if (!last || now - last.at >= READ_SERVES_MS) last = { at: now, states: read().catch(() => []) };
      return last.states;
    },
    recent: () => routing.keyStats.recent(),
  };
}
