// The usage hook: told about every settled request that had a token, with its usage-log
// entry as committed. The default writes a debug log line; tests capture the entries.

import { log } from "../observability/log.js";
import type { UsageEntry } from "../state/store.js";

/** One settled request. */
export interface RequestRecord {
  readonly entry: UsageEntry;
  /** Upstream attempts made (failovers included). */
  readonly attempts: number;
}

export interface UsageSink {
  /** Called once per request, when it is settled (before its answer's last bytes go). */
  record(record: RequestRecord): void;
}

/** Logs each request's usage at debug level (the usage log in the store is the record;
 * a line per request on stderr would cost more than the rest of the request). */
export const logUsageSink: UsageSink = {
  record({ entry, attempts }) {
    if (!log.enabled("debug")) return;
    log.debug("usage", {
      requestId: entry.requestId, token: entry.token, user: entry.user, group: entry.group, model: entry.model,
      upstreamModel: entry.upstreamModel, channel: entry.channel, protocol: entry.inboundProtocol, attempts,
      usage: entry.usage, estimated: entry.estimated || undefined, costNano: entry.costNano, status: entry.status,
      durationMs: Math.round(entry.durationMs * 1000) / 1000, ttfbMs: entry.ttfbMs, error: entry.error,
    });
  },
};
