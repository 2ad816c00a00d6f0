// The routing state a request reads and writes: session affinity, channel health and job
// ownership (all in the keyed store), and the channels' key rotation (this process's).
// Made once per server from its State.

import type { KeyedStore } from "../state/interfaces.js";
import { Affinity } from "./affinity.js";
import { ChannelHealth } from "./health.js";
import { Jobs } from "./jobs.js";
import { KeyRotation } from "./keys.js";

export interface RoutingState {
  readonly affinity: Affinity;
  readonly health: ChannelHealth;
  readonly jobs: Jobs;
  readonly keys: KeyRotation;
}

export function routingState(keyed: KeyedStore): RoutingState {
  return { affinity: new Affinity(keyed), health: new ChannelHealth(keyed), jobs: new Jobs(keyed), keys: new KeyRotation() };
}
