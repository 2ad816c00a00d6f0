// The routing state a request reads and writes: session affinity, channel and key health,
// the owners of jobs and of stored responses (all in the keyed store), and the channels'
// key rotation, recent key statistics and key fault probes (this process's).
// Made once per server from its State.

import type { KeyedStore } from "../state/interfaces.js";
import { Affinity } from "./affinity.js";
import { ChannelHealth } from "./health.js";
import { Jobs } from "./jobs.js";
import { KeyHealth } from "./key-health.js";
import { KeyProbes } from "./key-probes.js";
import { KeyStats } from "./key-stats.js";
import { KeyRotation } from "./keys.js";
import { StoredResponses } from "./stored-responses.js";

export interface RoutingState {
  readonly affinity: Affinity;
  readonly health: ChannelHealth;
  readonly jobs: Jobs;
  /** Who created each response stored at the provider. */
  readonly responses: StoredResponses;
  readonly keys: KeyRotation;
  readonly keyHealth: KeyHealth;
  readonly keyStats: KeyStats;
  readonly keyProbes: KeyProbes;
}

/** How long a server routes by a channel's or a key's health record read from a shared store. */
const SHARED_HEALTH_FRESH_MS = 1_000;

/** @param shared the keyed store is on a server (each read a round trip) */
export function routingState(keyed: KeyedStore, { shared = false }: { readonly shared?: boolean } = {}): RoutingState {
  const freshMs = shared ? SHARED_HEALTH_FRESH_MS : 0;
  return {
    affinity: new Affinity(keyed), health: new ChannelHealth(keyed, { freshMs }), jobs: new Jobs(keyed), responses: new StoredResponses(keyed), keys: new KeyRotation(),
    keyHealth: new KeyHealth(keyed, { freshMs }), keyStats: new KeyStats(), keyProbes: new KeyProbes(),
  };
}
