// Which gateway on a shared keyed store does a periodic job this period: the first to write
// the period's record. The store offers no set-if-absent, so a claim is written only when
// none is seen, then read back after a pause: of two gateways that both saw none, the one
// written last holds it, and both read the same holder once both writes have landed. That
// holds while the two writes land within the pause of each other (one round trip apart,
// far less than the pause, unless a process stalls between its read and its write; a
// random delay before the read makes two such claims rarer still). The record lives for
// the period, then goes by itself.

import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { KeyedStore } from "../state/interfaces.js";

const PREFIX = "claim:";

/** How long a claim is left to settle before it is read back. */
const SETTLE_MS = 100;

/** This process's name in the claims it writes. */
const self = `${process.pid}-${randomBytes(4).toString("hex")}`;

export interface PeriodClaim {
  readonly keyed: KeyedStore;
  /** What is done, and for which period, e.g. `keyprobe:openai-main:5920381`. */
  readonly name: string;
  /** The period's length: how long the record is kept. */
  readonly ttlMs: number;
  /** The most waited before looking (spreads gateways that tick together). */
  readonly spreadMs: number;
  readonly signal?: AbortSignal;
}

/** Whether this process holds the period's claim (false also when stopped meanwhile). */
export async function claimPeriod({ keyed, name, ttlMs, spreadMs, signal }: PeriodClaim): Promise<boolean> {
  const holder = `${self}-${randomBytes(4).toString("hex")}`;
  const key = PREFIX + name;
  try {
    if (spreadMs > 0) await sleep(Math.floor(Math.random() * spreadMs), undefined, { signal });
    if ((await keyed.get(key)) !== undefined) return false;
    await keyed.set(key, holder, ttlMs);
    await sleep(SETTLE_MS, undefined, { signal });
    return (await keyed.get(key)) === holder;
  } catch (err) {
    if (signal?.aborted) return false;
    throw err;
  }
}
