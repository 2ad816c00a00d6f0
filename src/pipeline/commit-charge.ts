// Committing one charge: the reservation settled (the limit holds given back with it: slots
// freed, token estimates replaced by the tokens billed) and the usage-log entry appended,
// both started at once, the usage hook and the cost metric told. The settle stage commits
// each request's charge this way, and a realtime session each response's and transcription's.

import { channelCostTally, costTally } from "../observability/metrics.js";
import type { Admitter, LimitHolds, Reservation, UsageLog } from "../state/interfaces.js";
import type { UsageEntry } from "../state/store.js";
import { totalTokens } from "./admission-limits.js";
import { stateFailure, type StatePart } from "./state-failure.js";
import type { UsageSink } from "./usage-sink.js";

/** Where a charge goes: the accounts (through the admitter), the usage log, the usage hook. */
export interface Ledger {
  readonly admitter: Admitter;
  readonly usageLog: UsageLog;
  readonly observer: UsageSink;
}

/** What the charge settles: the admission's reservation and limit holds, if any. */
export interface Held {
  readonly reservation?: Reservation;
  readonly holds?: LimitHolds;
}

/**
 * Settles and appends; the accounts first, so one not loaded yet reads its total from the
 * log before this entry is in it. Either failing rejects with what the client is told (a
 * 503 naming the part, its cause kept); the spend stays counted either way (money an
 * upstream served is never offered again).
 */
export function commitCharge(ledger: Ledger, held: Held, entry: UsageEntry, attempts: number): Promise<unknown> {
  const { admitter, usageLog, observer } = ledger;
  const { reservation, holds } = held;
  const charge = { requestId: entry.requestId, token: entry.token, user: entry.user, costNano: entry.costNano };
  // Nothing held and nothing charged (a refusal): the accounts have nothing to do.
  const settled = reservation === undefined && holds === undefined && charge.costNano === 0n ? undefined
    : admitter.finish({ reservation, holds, charge, usedTokens: totalTokens(entry.usage), now: Date.now() })
      .catch((err: unknown) => thrown(err, "accounts"));
  const logged = usageLog.append(entry);
  // A shared store keeps the charge's record until both are done (see Admitter.whenLogged).
  if (settled && charge.costNano > 0n && admitter.whenLogged) admitter.whenLogged(charge.requestId, Promise.allSettled([settled, logged]));
  const appended = logged.catch((err: unknown) => thrown(err, "usage log"));
  observer.record({ entry, attempts });
  if (charge.costNano > 0n) costTally.add(Number(charge.costNano), entry.model, entry.group);
  if (entry.channelCostNano && entry.channel) channelCostTally.add(Number(entry.channelCostNano), entry.channel);
  return Promise.all([settled, appended]);
}

/** Rejects with what the client is told (a 503 naming the part), keeping the cause for the log. */
function thrown(err: unknown, part: StatePart): never {
  throw Object.assign(stateFailure(err, part), { cause: err });
}
