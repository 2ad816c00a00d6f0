// Which gateway on a shared keyed store does a periodic job this period: the one whose
// claim is set first (KeyedStore.setIfAbsent, atomic on every store). The record lives for
// the period, then goes by itself.

import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { KeyedStore } from "../state/interfaces.js";

const PREFIX = "claim:";

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
    return await keyed.setIfAbsent(key, holder, ttlMs);
  } catch (err) {
    if (signal?.aborted) return false;
    throw err;
  }
}
