// The pipeline's usage hook: told about every settled request that had a token, with its
// usage-log entry as committed. Tests capture the entries; by default nothing listens.

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

/** The default: nothing more to do (the usage log is the record, and the request log's
 * line per request already says what each cost). */
export const noUsageSink: UsageSink = {
  record() {},
};
